package fs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// TestCloseWhileBusy closes a driver while goroutines write, read, delete
// and swap through it: every call either succeeds or fails with
// memory.ErrClosed, and every write acknowledged before Close is found by
// a driver opened afterwards.
func TestCloseWhileBusy(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	who := memory.Identity{Tenant: "busy", Session: "s"}
	q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldSession, Identity: who}}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked []string
		bad   []error
	)
	fail := func(err error) {
		if err != nil && !errors.Is(err, memory.ErrClosed) {
			mu.Lock()
			bad = append(bad, err)
			mu.Unlock()
		}
	}
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				r := memory.NewTurn(who, memory.RoleUser, fmt.Sprintf("%d.%d", w, i), time.Unix(int64(i), 0))
				err := d.Put(ctx, []memory.Record{r})
				if err != nil {
					fail(err)
					return
				}
				mu.Lock()
				acked = append(acked, r.ID)
				mu.Unlock()
				_, err = d.List(ctx, q)
				fail(err)
				if i%5 == 0 {
					dq := q
					dq.IDs = []string{"nothing-" + r.ID}
					_, err = d.Delete(ctx, dq)
					fail(err)
					doc := memory.NewDocument(who, fmt.Sprintf("k%d", w), "t", "{}", time.Unix(0, 0))
					_, err = d.Swap(ctx, doc, 0)
					if err != nil && !errors.Is(err, memory.ErrConflict) {
						fail(err)
					}
				}
			}
		})
	}
	time.Sleep(100 * time.Millisecond)
	if err := d.Close(); err != nil {
		t.Fatalf("Close while busy: %v", err)
	}
	wg.Wait()
	for _, err := range bad {
		t.Errorf("a call racing Close failed with %v, want success or ErrClosed", err)
	}
	d2, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	recs, err := d2.List(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for _, r := range recs {
		stored[r.ID] = true
	}
	for _, id := range acked {
		if !stored[id] {
			t.Fatalf("write %s was acknowledged before Close but is missing", id)
		}
	}
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged before Close: nothing was tested")
	}
}
