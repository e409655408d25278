package fs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/osfile"
)

// TestWriteWaitsForTheLock holds the directory's write lock through a file
// description of its own, as another process would, and checks that a
// write waits for it honouring its context, stores nothing when the
// context ends first, and goes through once the lock is released; reads
// never wait.
func TestWriteWaitsForTheLock(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	other, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := osfile.Lock(context.Background(), other, osfile.Exclusive); err != nil {
		t.Fatal(err)
	}

	who := memory.Identity{Tenant: "lock", Session: "s"}
	rec := memory.NewTurn(who, memory.RoleUser, "waited", time.Unix(1, 0))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := d.Put(ctx, []memory.Record{rec}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Put while another holds the lock: got %v, want context.DeadlineExceeded", err)
	}
	q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "lock"}}}
	recs, err := d.List(context.Background(), q)
	if err != nil || len(recs) != 0 {
		t.Fatalf("List while another holds the lock: %d records, %v; want none and no wait", len(recs), err)
	}

	done := make(chan error, 1)
	go func() { done <- d.Put(context.Background(), []memory.Record{rec}) }()
	select {
	case err := <-done:
		t.Fatalf("Put returned %v while another held the lock", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := osfile.Unlock(other); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Put after the lock was released: %v", err)
	}
	if recs, err := d.List(context.Background(), q); err != nil || len(recs) != 1 {
		t.Fatalf("after the wait: %d records, %v; want 1", len(recs), err)
	}
}

// TestCompaction deletes most of a store so the log is rewritten, and
// checks that the new generation holds exactly the live records with their
// versions and the store's vector dimension, that a driver opened before
// the compaction reloads it, and that a reopened driver reads it back.
func TestCompaction(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	d, err := Open(dir, Options{CompactBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	early, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer early.Close()

	who := memory.Identity{Tenant: "c", User: "u"}
	var keep []memory.Record
	for i := range 200 {
		var batch []memory.Record
		for j := range 10 {
			r := memory.NewTurn(who, memory.RoleUser, "some content to fill the log with", time.Unix(int64(i), int64(j)))
			r.Vector = []float32{1, float32(i), float32(j)}
			batch = append(batch, r)
		}
		if err := d.Put(ctx, batch); err != nil {
			t.Fatal(err)
		}
		keep = append(keep, batch[0])
	}
	doc := memory.NewDocument(who, "k", "t", "{}", time.Unix(0, 0))
	for range 3 {
		if err := d.Put(ctx, []memory.Record{doc}); err != nil {
			t.Fatal(err)
		}
	}
	before := d.end
	q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldUser, Identity: who}}
	all, err := d.List(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var doomed []string
	kept := map[string]bool{doc.ID: true}
	for _, r := range keep {
		kept[r.ID] = true
	}
	for _, r := range all {
		if !kept[r.ID] {
			doomed = append(doomed, r.ID)
		}
	}
	for len(doomed) > 0 {
		n := min(len(doomed), memory.MaxBatch)
		dq := q
		dq.IDs = doomed[:n]
		if _, err := d.Delete(ctx, dq); err != nil {
			t.Fatal(err)
		}
		doomed = doomed[n:]
	}
	if d.gen < 2 || d.end >= before {
		t.Fatalf("after deleting 90%% of the records the log is at generation %d, %d bytes (was %d); want it compacted", d.gen, d.end, before)
	}
	for name, drv := range map[string]*Driver{"the compacting driver": d, "a driver opened before": early} {
		got, err := drv.List(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(keep)+1 {
			t.Fatalf("%s: %d records, want %d", name, len(got), len(keep)+1)
		}
		for _, r := range got {
			want := int64(1)
			if r.ID == doc.ID {
				want = 3
			}
			if r.Version != want || !kept[r.ID] {
				t.Fatalf("%s: record %s at version %d (kept %v), want version %d", name, r.ID, r.Version, kept[r.ID], want)
			}
		}
		if drv.gen != d.gen {
			t.Fatalf("%s is at generation %d, want %d", name, drv.gen, d.gen)
		}
	}
	if _, err := d.Delete(ctx, q); err != nil {
		t.Fatal(err)
	}
	reopened, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	if got := reopened.idx.dims; got != 3 {
		t.Fatalf("after compacting away every vector the store's dimension is %d, want 3", got)
	}
	bad := memory.NewTurn(who, memory.RoleUser, "x", time.Unix(9, 0))
	bad.Vector = []float32{1, 2}
	if err := reopened.Put(ctx, []memory.Record{bad}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Fatalf("a vector of another dimension after compaction: got %v, want ErrInvalidArgument", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("the directory holds %d files, want the log and the lock file only", len(entries))
	}
}
