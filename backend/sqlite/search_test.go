//go:build cgo

package sqlite

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// vecRec is a fact of id with a vector pointing mostly along axis.
func vecRec(id memory.Identity, rid string, axis int) memory.Record {
	v := []float32{0.01, 0.01, 0.01, 0.01}
	v[axis] = 1
	return memory.Record{ID: rid, Kind: memory.KindFact, Identity: id, Content: rid, Created: t0, Vector: v}
}

func searchIDs(t *testing.T, d *Driver, q driver.Query, vec []float32, k int) []string {
	t.Helper()
	ms, err := d.Search(context.Background(), q, vec, k)
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Record.ID
	}
	return out
}

// TestSearchCacheFollowsOwnWrites checks that the driver's own Puts,
// replacements, Swaps, Deletes and Sweeps show in the next search without
// loading the vectors again.
func TestSearchCacheFollowsOwnWrites(t *testing.T) {
	clock := t0
	d, _ := openTemp(t, Options{Clock: func() time.Time { return clock }})
	ctx := context.Background()
	id := memory.Identity{Tenant: "t", User: "u", Session: "s"}
	q := at(t, id, memory.LevelSession)
	x := []float32{1, 0, 0, 0}

	mustPut(t, d, vecRec(id, "a", 0), vecRec(id, "b", 1))
	if got := searchIDs(t, d, q, x, 1); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("nearest to x = %v, want [a]", got)
	}
	mustPut(t, d, vecRec(id, "c", 0)) // a tie with a, created at the same time: c > a by id
	if got := searchIDs(t, d, q, x, 2); !slices.Equal(got, []string{"c", "a"}) {
		t.Errorf("after adding c, nearest two = %v, want [c a]", got)
	}
	// Replacing c with a vector elsewhere, and a without any vector.
	mustPut(t, d, vecRec(id, "c", 2), memory.Record{ID: "a", Kind: memory.KindFact, Identity: id, Content: "no vector", Created: t0})
	if got := searchIDs(t, d, q, x, 3); !slices.Equal(got, []string{"c", "b"}) && !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("after replacing a and c, search = %v, want b and c only", got)
	}
	// Swap moves c back next to x.
	if _, err := d.Swap(ctx, vecRec(id, "c", 0), 2); err != nil {
		t.Fatal(err)
	}
	if got := searchIDs(t, d, q, x, 1); !slices.Equal(got, []string{"c"}) {
		t.Errorf("after Swap, nearest = %v, want [c]", got)
	}
	// Delete and Sweep.
	dq := at(t, id, memory.LevelSession)
	dq.IDs = []string{"c"}
	if n, err := d.Delete(ctx, dq); err != nil || n != 1 {
		t.Fatalf("Delete c = %d, %v", n, err)
	}
	exp := vecRec(id, "e", 0)
	exp.Expires = t0.Add(time.Minute)
	mustPut(t, d, exp)
	if got := searchIDs(t, d, q, x, 1); !slices.Equal(got, []string{"e"}) {
		t.Errorf("after deleting c and adding e, nearest = %v, want [e]", got)
	}
	clock = t0.Add(time.Hour)
	if got := searchIDs(t, d, q, x, 5); !slices.Equal(got, []string{"b"}) {
		t.Errorf("after e expired, search = %v, want [b]", got)
	}
	if n, err := d.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v", n, err)
	}
	if got := searchIDs(t, d, q, x, 5); !slices.Equal(got, []string{"b"}) {
		t.Errorf("after Sweep, search = %v, want [b]", got)
	}
	d.vc.mu.RLock()
	loads, cached := d.vc.loads, d.vc.vecs.Len()
	d.vc.mu.RUnlock()
	if loads != 1 {
		t.Errorf("the vectors were loaded %d times, want once: the driver's own writes must update the cache", loads)
	}
	if cached != 1 {
		t.Errorf("the cache holds %d vectors, want 1 (b)", cached)
	}
}

// TestSearchCacheFollowsOtherDriver opens two drivers on one file: what
// one writes or deletes shows in the other's next search.
func TestSearchCacheFollowsOtherDriver(t *testing.T) {
	a, path := openTemp(t, Options{})
	b, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	id := memory.Identity{Tenant: "t", User: "u", Session: "s"}
	q := at(t, id, memory.LevelSession)
	x := []float32{1, 0, 0, 0}
	mustPut(t, a, vecRec(id, "a", 1))
	if got := searchIDs(t, a, q, x, 1); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("search = %v", got)
	}
	mustPut(t, b, vecRec(id, "b", 0))
	if got := searchIDs(t, a, q, x, 1); !slices.Equal(got, []string{"b"}) {
		t.Errorf("after the other driver added b, nearest = %v, want [b]", got)
	}
	dq := at(t, id, memory.LevelSession)
	dq.IDs = []string{"b"}
	if _, err := b.Delete(ctx, dq); err != nil {
		t.Fatal(err)
	}
	if got := searchIDs(t, a, q, x, 5); !slices.Equal(got, []string{"a"}) {
		t.Errorf("after the other driver deleted b, search = %v, want [a]", got)
	}
}

// TestSearchConcurrentWithWrites runs searches while records with vectors
// are written and deleted: every search succeeds, returns only live
// records of its scope, and the final search sees every write.
func TestSearchConcurrentWithWrites(t *testing.T) {
	d, _ := openTemp(t, Options{})
	ctx := context.Background()
	mine := memory.Identity{Tenant: "t", User: "u", Session: "mine"}
	other := memory.Identity{Tenant: "t", User: "u", Session: "other"}
	mustPut(t, d, vecRec(mine, "seed", 0))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 8)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 60 {
				owner := mine
				if i%2 == 1 {
					owner = other
				}
				if err := d.Put(ctx, []memory.Record{vecRec(owner, fmt.Sprintf("w%d-%d", w, i), i%4)}); err != nil {
					errs <- err
					return
				}
				if i%10 == 9 {
					q := at(t, other, memory.LevelSession)
					if _, err := d.Delete(ctx, q); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := at(t, mine, memory.LevelSession)
			for {
				select {
				case <-stop:
					return
				default:
				}
				ms, err := d.Search(ctx, q, []float32{1, 0, 0, 0}, 10)
				if err != nil {
					errs <- err
					return
				}
				for _, m := range ms {
					if m.Record.Identity != mine { // cmp.Diff only on failure: this loop races the writers
						errs <- fmt.Errorf("search in session mine returned %s of another identity (-want +got):\n%s", m.Record.ID, cmp.Diff(mine, m.Record.Identity))
						return
					}
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := searchIDs(t, d, at(t, mine, memory.LevelSession), []float32{1, 0, 0, 0}, 1000)
	if len(got) != 61 { // seed plus 30 of each writer
		t.Errorf("session mine has %d searchable records, want 61", len(got))
	}
}
