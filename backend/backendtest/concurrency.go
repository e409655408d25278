package backendtest

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// collector is a reporter that goroutines share; the check reports what it
// collected once they are done.
type collector struct {
	mu   sync.Mutex
	msgs []string
}

// Helper does nothing.
func (c *collector) Helper() {}

// Logf does nothing.
func (c *collector) Logf(string, ...any) {}

// Errorf records a failure.
func (c *collector) Errorf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, fmt.Sprintf(format, args...))
}

// Fatalf records a failure and ends the calling goroutine.
func (c *collector) Fatalf(format string, args ...any) {
	c.Errorf(format, args...)
	runtime.Goexit()
}

// flush reports what was collected, at most max failures one by one.
func (c *collector) flush(r reporter, max int) {
	r.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, m := range c.msgs {
		if i == max {
			r.Errorf("... and %d more failures", len(c.msgs)-max)
			break
		}
		r.Errorf("%s", m)
	}
}

// checkConcurrency runs writers, a deleter and readers at once, in
// disjoint and shared scopes. Writers read their own writes back after
// every Put; readers check order, scope and that a scope that only grows
// never shrinks; the deleter erases exactly its own records; concurrent
// upserts of the same ids leave one record each. At the end every written
// record is present exactly once.
func checkConcurrency(r reporter, e *env) {
	d, _ := e.open(r)
	ctx := context.Background()
	const (
		writers = 6
		rounds  = 25
		per     = 4 // records per batch besides the upserted one
		hot     = 5 // ids every writer upserts
	)
	sharedScope := memory.Identity{Tenant: "conc", Squad: "shared"}
	hotIdentity := e.agentID(d, memory.Identity{Tenant: "conc", Squad: "shared", Session: "hot"})
	squadFilter := mustFilter(r, memory.Posture{}, sharedScope, memory.LevelSquad)
	own := func(w int) memory.Identity {
		return e.agentID(d, memory.Identity{Tenant: "conc", User: fmt.Sprintf("user-%d", w), Session: "s"})
	}
	c := &collector{}
	var (
		wg, readersWG sync.WaitGroup
		stop          atomic.Bool
		mine          [writers][]memory.Record
		shared        [writers][]memory.Record
		hotMu         sync.Mutex
		hotContent    = make(map[string]bool)
	)
	for w := range writers {
		wg.Go(func() {
			ownFilter := mustFilter(c, memory.Posture{}, own(w), memory.LevelUser)
			for i := range rounds {
				var batch []memory.Record
				for j := range per {
					rec := memory.Record{
						ID: fmt.Sprintf("w%d-%02d-%d", w, i, j), Kind: memory.KindTurn, Content: "c",
						Created: t0.Add(time.Duration(i) * time.Millisecond),
					}
					if j%2 == 0 {
						rec.Identity = own(w)
						mine[w] = append(mine[w], rec)
					} else {
						rec.Identity = e.agentID(d, memory.Identity{Tenant: "conc", Squad: "shared", Agent: fmt.Sprintf("agent-%d", w)})
						shared[w] = append(shared[w], rec)
					}
					batch = append(batch, rec)
				}
				content := fmt.Sprintf("w%d-%d", w, i)
				hotMu.Lock()
				hotContent[content] = true
				hotMu.Unlock()
				batch = append(batch, memory.Record{ID: fmt.Sprintf("hot-%d", (w+i)%hot), Kind: memory.KindFact, Identity: hotIdentity, Content: content, Created: t0})
				if err := e.putBatch(ctx, d, batch); err != nil {
					c.Errorf("writer %d: Put: %v", w, err)
					return
				}
				// Read your own writes.
				got, err := d.List(ctx, driver.Query{Filter: ownFilter})
				if err != nil {
					c.Errorf("writer %d: List: %v", w, err)
					return
				}
				want := append([]memory.Record(nil), mine[w]...)
				sortNewest(want)
				if !checkOrder(c, fmt.Sprintf("writer %d: List of its own scope", w), got) ||
					!sameIDs(c, fmt.Sprintf("writer %d: own records after %d Puts", w, i+1), got, want) {
					return
				}
			}
		})
	}
	wg.Go(func() {
		id := e.agentID(d, memory.Identity{Tenant: "conc", User: "deleter", Session: "d"})
		f := mustFilter(c, memory.Posture{}, id, memory.LevelSession)
		for i := range rounds {
			var batch []memory.Record
			for j := range 3 {
				batch = append(batch, memory.Record{ID: fmt.Sprintf("del-%d-%d", i, j), Kind: memory.KindTurn, Identity: id, Content: "d", Created: t0})
			}
			if err := d.Put(ctx, batch); err != nil {
				c.Errorf("deleter: Put: %v", err)
				return
			}
			n, err := d.Delete(ctx, driver.Query{Filter: f})
			if err != nil || n != 3 {
				c.Errorf("deleter: Delete of its 3 records: removed %d, error %v", n, err)
				return
			}
		}
	})
	for range 2 {
		readersWG.Go(func() {
			last := 0
			for !stop.Load() {
				got, err := d.List(ctx, driver.Query{Filter: squadFilter})
				if err != nil {
					c.Errorf("reader: List: %v", err)
					return
				}
				if !checkOrder(c, "reader: List of the shared squad", got) {
					return
				}
				for _, rec := range got {
					if rec.Identity.Tenant != "conc" || rec.Identity.Squad != "shared" {
						c.Errorf("reader: squad-level List returned %q written by %+v", rec.ID, rec.Identity)
						return
					}
				}
				if len(got) < last {
					c.Errorf("reader: the shared squad shrank from %d to %d records, yet nothing in it is deleted", last, len(got))
					return
				}
				last = len(got)
				runtime.Gosched()
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	readersWG.Wait()
	c.flush(r, 20)

	// Every record written is present exactly once.
	var wantShared []memory.Record
	for w := range writers {
		got := mustList(r, d, "final List", driver.Query{Filter: mustFilter(r, memory.Posture{}, own(w), memory.LevelUser)})
		want := append([]memory.Record(nil), mine[w]...)
		sortNewest(want)
		sameIDs(r, fmt.Sprintf("writer %d's records at the end", w), got, want)
		wantShared = append(wantShared, shared[w]...)
	}
	for i := range hot {
		wantShared = append(wantShared, memory.Record{ID: fmt.Sprintf("hot-%d", i), Created: t0})
	}
	sortNewest(wantShared)
	got := mustList(r, d, "final List", driver.Query{Filter: squadFilter})
	sameIDs(r, "shared squad at the end", got, wantShared)
	for _, rec := range got {
		if rec.Identity == hotIdentity && !hotContent[rec.Content] {
			r.Errorf("upserted record %q holds content %q that no writer wrote", rec.ID, rec.Content)
		}
	}
	all := mustList(r, d, "final List", tenantQuery("conc"))
	if want := writers*rounds*per + hot; len(all) != want {
		r.Errorf("tenant holds %d records at the end, want %d", len(all), want)
	}
}
