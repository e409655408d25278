package tiered_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/tiers/tiered"
)

// foldQueued reports whether the work queue of the storage holds a fold.
func foldQueued(t *testing.T, work *workTable) bool {
	t.Helper()
	items, err := work.items(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Op == "fold" {
			return true
		}
	}
	return false
}

// openWork opens the work queue of the storage of kind at where for t.
func openWork(t *testing.T, kind, where string) *workTable {
	t.Helper()
	work, err := openWorkTable(kind, where)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = work.Close() })
	return work
}

// openReplica opens a driver of its own on the storage of kind at where
// for t, and a store over it counting words as tokens.
func openReplica(t *testing.T, kind, where string) (storageDriver, *backend.Store) {
	t.Helper()
	d, err := openStorage(kind, where)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d, backend.NewStore(d, backend.StoreOptions{Tokens: words{}})
}

// TestFoldQueuedAcrossReplicas appends 8-word turns to a session in
// turns from two replicas (which run no workers, so nothing folds), on a
// clock the test moves. Each replica tallies its own appends between
// reads of the window, so four appends within a second may leave the
// session over its trigger of 30 tokens with no fold queued (the package
// documentation allows a fold a second's appends late); but once a
// replica's tally is a second old, its next append reads the window and
// queues the fold.
func TestFoldQueuedAcrossReplicas(t *testing.T) {
	for _, kind := range storageKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			where := newStorage(t, kind)
			work := openWork(t, kind, where)
			var mu sync.Mutex
			now := time.Now()
			clock := func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				return now
			}
			advance := func(d time.Duration) {
				mu.Lock()
				now = now.Add(d)
				mu.Unlock()
			}
			var ms [2]*tiered.Memory
			var st *backend.Store
			for r := range ms {
				opt := replicaOptions(&tallied{}, 1)
				opt.NoWorkers, opt.IdleFlush = true, -1
				d, err := openStorage(kind, where)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = d.Close() })
				st = backend.NewStore(d, backend.StoreOptions{Tokens: words{}, Clock: clock})
				m, err := tiered.New(st, opt)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = m.Close() })
				ms[r] = m
			}
			id := replicaSession(0)
			say := func(i int) {
				t.Helper()
				advance(time.Millisecond)
				if _, err := ms[i%2].Append(ctx, id, tiered.Turn{Role: memory.RoleUser, Content: fmt.Sprintf("I noted item %d of the list today.", i)}); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 4 {
				say(i)
			}
			n, err := unfoldedTokens(ctx, st, id)
			if err != nil {
				t.Fatal(err)
			}
			if n <= replicaTrigger {
				t.Fatalf("the session holds %d unfolded tokens; the test wants them over the trigger %d", n, replicaTrigger)
			}
			late := !foldQueued(t, work)
			advance(time.Second)
			say(4)
			if n, err = unfoldedTokens(ctx, st, id); err != nil {
				t.Fatal(err)
			}
			if !foldQueued(t, work) {
				t.Errorf("the session's unfolded turns hold %d tokens, over its trigger of %d, and no fold is queued, "+
					"though the replica that appended last had tallied the session over a second before", n, replicaTrigger)
			}
			t.Logf("a fold was queued late, a second later (as documented): %v", late)
		})
	}
}

// completeHook is a driver that calls hook once, before the first
// Complete of a fold item of the tiered queue, and closes completed when
// that Complete has returned.
type completeHook struct {
	storageDriver
	once      sync.Once
	hook      func()
	completed chan struct{}
}

func (d *completeHook) Complete(ctx context.Context, l driver.Lease) error {
	if l.Queue != tiered.Queue || !strings.HasPrefix(l.ID, "fold:") {
		return d.storageDriver.Complete(ctx, l)
	}
	first := false
	d.once.Do(func() {
		first = true
		d.hook()
	})
	err := d.storageDriver.Complete(ctx, l)
	if first {
		close(d.completed)
	}
	return err
}

// TestFoldQueuedWhileFoldCompletes appends to a session while its fold
// item is still claimed, after the fold read the session for the last
// time and before the item is completed: the append that takes the
// session over its trigger finds the item claimed, and queues nothing of
// its own. Once the fold's item is completed, the session must be folded
// below its trigger, or a fold queued for it.
func TestFoldQueuedWhileFoldCompletes(t *testing.T) {
	for _, kind := range storageKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			where := newStorage(t, kind)
			work := openWork(t, kind, where)
			d, _ := openReplica(t, kind, where)
			hooked := &completeHook{storageDriver: d, completed: make(chan struct{})}
			st := backend.NewStore(hooked, backend.StoreOptions{Tokens: words{}})
			opt := replicaOptions(&tallied{}, 1)
			opt.Settle, opt.IdleFlush = time.Nanosecond, -1
			m, err := tiered.New(st, opt)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = m.Close() })
			id := replicaSession(0)
			// said is atomic: the race detector cannot see that the hook's
			// appends follow the test's, through the database.
			var said atomic.Int64
			say := func() {
				if _, err := m.Append(ctx, id, tiered.Turn{Role: memory.RoleUser, Content: fmt.Sprintf("I noted item %d of the list today.", said.Add(1))}); err != nil {
					t.Error(err)
				}
			}
			// The fold of the first turns, done, leaves the rest within
			// the trigger; before its item is completed, turns come until
			// the session is over it.
			var over int // written by the hook, read once it has returned (completed)
			hooked.hook = func() {
				for range 10 {
					n, err := unfoldedTokens(ctx, st, id)
					if err != nil {
						t.Error(err)
						return
					}
					if over = n; n > replicaTrigger {
						return
					}
					say()
				}
			}
			for range 4 {
				say()
			}
			select {
			case <-hooked.completed:
			case <-time.After(30 * time.Second):
				t.Fatal("the session's first fold was not completed in 30 s")
			}
			if over <= replicaTrigger {
				t.Fatalf("the appends while the fold completed left %d tokens unfolded; the test wants them over the trigger %d", over, replicaTrigger)
			}
			// Close lets the work in flight finish and claims no more:
			// then either a fold in flight folded the session, or a fold
			// is queued for the next Memory.
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			n, err := unfoldedTokens(ctx, st, id)
			if err != nil {
				t.Fatal(err)
			}
			if n > replicaTrigger && !foldQueued(t, work) {
				t.Errorf("the session's unfolded turns hold %d tokens, over its trigger of %d, and no fold is queued: "+
					"the append that passed the trigger found the fold's item claimed, and the fold, which had read the session before that append, completed it; "+
					"with IdleFlush off the session is never folded", n, replicaTrigger)
			}
		})
	}
}
