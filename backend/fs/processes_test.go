package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/proctest"
)

// The environment of TestWriterChildProcess.
const (
	childDirEnv = "AGENTMEM_FS_CHILD_DIR"
	childIDEnv  = "AGENTMEM_FS_CHILD_ID"
	childNEnv   = "AGENTMEM_FS_CHILD_N"
)

// childCompactBytes is the writers' compaction threshold: small, so the
// log is rewritten many times while both write.
const childCompactBytes = 32 << 10

var counterIdentity = memory.Identity{Tenant: "t", Squad: "both"}

// TestWriterChildProcess is the child half of TestTwoProcessesOneDirectory:
// it waits until both children are ready, so they write at once, then
// appends records to the directory named by the environment,
// writes and deletes scratch records (so the log is compacted while the
// other process writes), and increments a counter shared with the other
// child by compare-and-swap. It fails on the first error. Run directly, it
// skips.
func TestWriterChildProcess(t *testing.T) {
	proctest.Child(t)
	dir := os.Getenv(childDirEnv)
	who, _ := strconv.Atoi(os.Getenv(childIDEnv))
	n, _ := strconv.Atoi(os.Getenv(childNEnv))
	d, err := Open(dir, Options{CompactBytes: childCompactBytes})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	proctest.Ready()
	ctx := context.Background()
	id := memory.Identity{Tenant: "t", Session: fmt.Sprintf("writer-%d", who)}
	scratch := memory.Identity{Tenant: "t", Session: fmt.Sprintf("scratch-%d", who)}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		r := memory.NewTurn(id, memory.RoleUser, fmt.Sprintf("record %d of writer %d", i, who), base.Add(time.Duration(i)*time.Millisecond))
		batch := []memory.Record{r}
		if i%10 == 0 {
			for j := range 20 {
				batch = append(batch, memory.NewTurn(id, memory.RoleAssistant, fmt.Sprintf("batch %d.%d", i, j), r.Created))
			}
		}
		if err := d.Put(ctx, batch); err != nil {
			t.Fatalf("writer %d, put %d: %v", who, i, err)
		}
		if i%5 == 0 {
			var junk []memory.Record
			for j := range 20 {
				junk = append(junk, memory.NewTurn(scratch, memory.RoleTool, fmt.Sprintf("scratch %d.%d %0400d", i, j, 0), r.Created))
			}
			if err := d.Put(ctx, junk); err != nil {
				t.Fatalf("writer %d, scratch put %d: %v", who, i, err)
			}
			q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldSession, Identity: scratch}}
			if got, err := d.Delete(ctx, q); err != nil || got != 20 {
				t.Fatalf("writer %d, scratch delete %d: removed %d, error %v", who, i, got, err)
			}
		}
		if i%10 == 5 {
			if err := incrementCounter(ctx, d, who*1000000+i); err != nil {
				t.Fatalf("writer %d, increment %d: %v", who, i, err)
			}
		}
	}
	fmt.Printf("generation %d\n", d.gen)
}

// incrementCounter adds one to the shared counter by reading it and
// swapping, retrying on conflict.
func incrementCounter(ctx context.Context, d *Driver, tag int) error {
	q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "t"}}, IDs: []string{"counter"}}
	for {
		recs, err := d.List(ctx, q)
		if err != nil {
			return err
		}
		n, version := 0, int64(0)
		if len(recs) == 1 {
			if n, err = strconv.Atoi(recs[0].Content); err != nil {
				return err
			}
			version = recs[0].Version
		}
		rec := memory.Record{ID: "counter", Kind: memory.KindDocument, Identity: counterIdentity, Key: "counter",
			Content: strconv.Itoa(n + 1), Created: time.Unix(0, int64(tag)).UTC()}
		_, err = d.Swap(ctx, rec, version)
		if err == nil {
			return nil
		}
		if !isConflict(err) {
			return err
		}
	}
}

func isConflict(err error) bool { return errors.Is(err, memory.ErrConflict) }

// TestTwoProcessesOneDirectory runs two OS processes writing one directory
// at once — appends, batches, deletes, compactions and compare-and-swap
// increments of one shared counter — and checks that every record both
// wrote is there afterwards, that no increment was lost, and that the log
// was compacted while they wrote.
func TestTwoProcessesOneDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shared")
	const perWriter = 300
	var envs [][]string
	for w := range 2 {
		envs = append(envs, []string{childDirEnv + "=" + dir, childIDEnv + "=" + strconv.Itoa(w), childNEnv + "=" + strconv.Itoa(perWriter)})
	}
	outputs := proctest.Run(t, "TestWriterChildProcess", envs...)

	d, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	const batches = perWriter / 10
	for w := range 2 {
		for _, c := range []struct {
			session string
			want    int
		}{{fmt.Sprintf("writer-%d", w), perWriter + batches*20}, {fmt.Sprintf("scratch-%d", w), 0}} {
			id := memory.Identity{Tenant: "t", Session: c.session}
			recs, err := d.List(ctx, driver.Query{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldSession, Identity: id}})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != c.want {
				t.Errorf("session %s: %d records stored, want %d", c.session, len(recs), c.want)
			}
		}
	}
	q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "t"}}, IDs: []string{"counter"}}
	recs, err := d.List(ctx, q)
	if err != nil || len(recs) != 1 {
		t.Fatalf("reading the counter: %v, %d records", err, len(recs))
	}
	increments := 2 * (perWriter / 10)
	if recs[0].Content != strconv.Itoa(increments) || recs[0].Version != int64(increments) {
		t.Errorf("the counter is %s at version %d, want %d at version %d: an increment was lost", recs[0].Content, recs[0].Version, increments, increments)
	}
	if d.gen < 3 {
		t.Errorf("the log is at generation %d; the writers should have compacted it several times", d.gen)
	}
	t.Logf("log generation %d after both writers; children reported:\n%s%s", d.gen, outputs[0], outputs[1])
}
