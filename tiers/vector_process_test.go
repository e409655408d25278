package tiers_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/proctest"
	"github.com/agentmem/memory/tiers"
)

// The environment of TestVectorWriterChild.
const (
	childDirEnv = "AGENTMEM_VECTOR_CHILD_DIR"
	childIDEnv  = "AGENTMEM_VECTOR_CHILD_ID"
	childNEnv   = "AGENTMEM_VECTOR_CHILD_N"
)

// TestVectorWriterChild is a writer child of TestVectorTwoProcesses: it
// runs vectorChild and fails on its error. Run directly, it skips.
func TestVectorWriterChild(t *testing.T) {
	proctest.Child(t)
	if err := vectorChild(); err != nil {
		t.Fatal(err)
	}
}

// childIdentity is the identity writer w saves as: both writers are the
// same agent, in different sessions, so they share one scope.
func childIdentity(w int) memory.Identity {
	return memory.Identity{Tenant: "acme", Agent: "kaos://agent/ai/scanner", Session: fmt.Sprintf("writer-%d", w)}
}

// vectorChild waits until both children are ready, so they write at once,
// then saves n steps and searches after each.
func vectorChild() error {
	dir := os.Getenv(childDirEnv)
	w, err := strconv.Atoi(os.Getenv(childIDEnv))
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(os.Getenv(childNEnv))
	if err != nil {
		return err
	}
	ctx := context.Background()
	v, err := tiers.NewVector(ctx, plainStore(), tiers.VectorOptions{Dir: dir})
	if err != nil {
		return err
	}
	defer v.Close()
	proctest.Ready()
	who := childIdentity(w)
	for i := range n {
		step := tiers.Step{Workflow: "scan", Name: fmt.Sprintf("writer-%d", w), Input: fmt.Sprintf("step %d", i), Output: "done"}
		if err := v.Save(ctx, who, step); err != nil {
			return fmt.Errorf("writer %d, save %d: %w", w, i, err)
		}
		if _, err := v.Search(ctx, who, "done", 5); err != nil {
			return fmt.Errorf("writer %d, search %d: %w", w, i, err)
		}
	}
	return nil
}

// TestVectorTwoProcesses runs two OS processes saving into one directory
// at once, in one scope: every entry both wrote must be there afterwards,
// none torn, each writer's in its own order, and the index must agree with
// the directory.
func TestVectorTwoProcesses(t *testing.T) {
	dir := t.TempDir()
	const n = 60
	var envs [][]string
	for w := range 2 {
		envs = append(envs, []string{childDirEnv + "=" + dir, childIDEnv + "=" + strconv.Itoa(w), childNEnv + "=" + strconv.Itoa(n)})
	}
	proctest.Run(t, "TestVectorWriterChild", envs...)
	ctx := context.Background()
	v, err := tiers.NewVector(ctx, plainStore(), tiers.VectorOptions{Dir: dir, MaxContextTokens: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	rec, err := v.Recall(ctx, childIdentity(0), "")
	if err != nil {
		t.Fatal(err)
	}
	files := entryFiles(t, dir)
	if len(rec.Records) != 2*n || len(files) != 2*n {
		t.Fatalf("%d entries recalled, %d files; want %d", len(rec.Records), len(files), 2*n)
	}
	next := [2]int{}
	for i, r := range rec.Records {
		if r.ID != files[i] {
			t.Fatalf("entry %d is %s, file %s: index and directory disagree", i, r.ID, files[i])
		}
		var w, step int
		if _, err := fmt.Sscanf(r.Content, "[scan/writer-%d] Task: step %d | Result: done", &w, &step); err != nil || w < 0 || w > 1 {
			t.Fatalf("torn or foreign entry %q: %v", r.Content, err)
		}
		if step != next[w] {
			t.Fatalf("writer %d: step %d follows step %d", w, step, next[w]-1)
		}
		next[w]++
	}
	// A rebuild from the directory finds the same entries.
	if err := v.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := v.Recall(ctx, childIdentity(1), "")
	if err != nil || again.Text != rec.Text {
		t.Fatalf("after a rebuild: %v\n%s\nwant\n%s", err, again.Text, rec.Text)
	}
}
