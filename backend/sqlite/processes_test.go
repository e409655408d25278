//go:build cgo

package sqlite

import (
	"context"
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

// TestWriterChildProcess is the child half of TestTwoProcessesOneFile: it
// waits until both children are ready, so they write at once, then appends
// records to the file named by the environment and fails on the first
// error. Run directly, it skips.
func TestWriterChildProcess(t *testing.T) {
	proctest.Child(t)
	path := os.Getenv("AGENTMEM_SQLITE_CHILD_DB")
	who, _ := strconv.Atoi(os.Getenv("AGENTMEM_SQLITE_CHILD_ID"))
	n, _ := strconv.Atoi(os.Getenv("AGENTMEM_SQLITE_CHILD_N"))
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	proctest.Ready()
	id := memory.Identity{Tenant: "t", Session: fmt.Sprintf("writer-%d", who)}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		r := memory.NewTurn(id, memory.RoleUser, fmt.Sprintf("record %d of writer %d", i, who), base.Add(time.Duration(i)*time.Millisecond))
		batch := []memory.Record{r}
		if i%10 == 0 { // every tenth write is a batch, holding the write lock longer
			for j := range 20 {
				batch = append(batch, memory.NewTurn(id, memory.RoleAssistant, fmt.Sprintf("batch %d.%d", i, j), r.Created))
			}
		}
		if err := d.Put(context.Background(), batch); err != nil {
			t.Fatalf("writer %d, put %d: %v", who, i, err)
		}
	}
}

// TestTwoProcessesOneFile runs two OS processes appending to one SQLite
// file at once: neither may see "database is locked" (or any error), and
// every record both wrote must be there afterwards.
func TestTwoProcessesOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	// Create the schema first so both children open an existing file.
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()

	const perWriter = 1000
	var envs [][]string
	for w := range 2 {
		envs = append(envs, []string{"AGENTMEM_SQLITE_CHILD_DB=" + path, "AGENTMEM_SQLITE_CHILD_ID=" + strconv.Itoa(w), "AGENTMEM_SQLITE_CHILD_N=" + strconv.Itoa(perWriter)})
	}
	proctest.Run(t, "TestWriterChildProcess", envs...)

	d, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const batches = perWriter / 10
	for w := range 2 {
		id := memory.Identity{Tenant: "t", Session: fmt.Sprintf("writer-%d", w)}
		recs, err := d.List(context.Background(), driver.Query{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldSession, Identity: id}})
		if err != nil {
			t.Fatal(err)
		}
		if want := perWriter + batches*20; len(recs) != want {
			t.Errorf("writer %d: %d records stored, want %d", w, len(recs), want)
		}
	}
}
