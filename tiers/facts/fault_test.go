package facts_test

import (
	"context"
	"sync"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/extract"
)

// faultyDriver is the in-memory driver with compare-and-swap failures
// injected: the create of one id, and restoring a live fact.
type faultyDriver struct {
	*inmem.Driver
	mu          sync.Mutex
	failCreate  string // the id whose create-only swap fails
	failRestore bool   // whether a swap that writes a live fact over a stored version fails
}

func (d *faultyDriver) Swap(ctx context.Context, rec memory.Record, expect int64) (int64, error) {
	d.mu.Lock()
	failCreate, failRestore := d.failCreate, d.failRestore
	d.mu.Unlock()
	switch {
	case expect == 0 && rec.ID == failCreate:
		return 0, memory.Errorf(memory.ErrUnavailable, "injected failure of the create of %s", rec.ID)
	case expect > 0 && rec.Kind == memory.KindFact && failRestore:
		return 0, memory.Errorf(memory.ErrUnavailable, "injected failure of the write of live fact %s", rec.ID)
	}
	return d.Driver.Swap(ctx, rec, expect)
}

func (d *faultyDriver) inject(failCreate string, failRestore bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failCreate, d.failRestore = failCreate, failRestore
}

// When the new fact of an update cannot be stored, the old fact is live
// again; when even that fails, updating again with the same text
// completes the update.
func TestFailedUpdateRestoresOrCompletes(t *testing.T) {
	d := &faultyDriver{Driver: inmem.New(inmem.Options{})}
	defer d.Close()
	f, _ := newFacts(t, d)
	old := mustAdd(t, f, alice, extract.Fact{Text: "Alice lives in Paris"})[0].Record
	berlin := memory.ContentID(memory.KindFact, alice, "Alice lives in Berlin")

	d.inject(berlin, false)
	_, err := f.Update(ctx, alice, old.ID, "Alice lives in Berlin")
	wantErr(t, "update whose new fact fails", err, memory.ErrUnavailable)
	if r := mustGet(t, f, alice, memory.LevelSession, old.ID); r.Kind != memory.KindFact || len(r.Metadata) != 0 {
		t.Fatalf("after the failed update the old fact is %s with %v, want it live as it was", r.Kind, r.Metadata)
	}
	wantTexts(t, "search after the failed update", searchTexts(t, f, alice, memory.LevelSession, "Paris"), []string{"Alice lives in Paris"})

	// The create and the restore fail: the old fact is left superseded by
	// a fact not stored; the same update again completes it.
	d.inject(berlin, true)
	_, err = f.Update(ctx, alice, old.ID, "Alice lives in Berlin")
	wantErr(t, "update whose new fact and restore fail", err, memory.ErrUnavailable)
	if r := mustGet(t, f, alice, memory.LevelSession, old.ID); r.Kind != memory.KindSuperseded || r.Metadata["superseded_by"] != berlin {
		t.Fatalf("after the failed restore the old fact is %s, superseded by %q; the test needs it superseded by %s", r.Kind, r.Metadata["superseded_by"], berlin)
	}
	d.inject("", false)
	_, err = f.Update(ctx, alice, old.ID, "Alice lives in Rome")
	wantErr(t, "update to another text", err, memory.ErrConflict)
	upd, err := f.Update(ctx, alice, old.ID, "Alice lives in Berlin")
	if err != nil {
		t.Fatalf("the same update again: %v", err)
	}
	if upd.ID != berlin || upd.Kind != memory.KindFact {
		t.Fatalf("the completed update returned %s %s, want live %s", upd.ID, upd.Kind, berlin)
	}
	h, err := f.History(ctx, alice, memory.LevelSession, upd.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantTexts(t, "history after completing", texts(h), []string{"Alice lives in Paris", "Alice lives in Berlin"})
}
