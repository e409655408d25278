package postgres

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeLog is a change log for a logSync over an int copy, with no
// database: the copy is the count of changes applied, and each read
// returns the changes queued since the last.
type fakeLog struct {
	mu      sync.Mutex
	queued  int   // changes not read yet
	snap    int   // snapshots taken
	readErr error // the next read's error
	// hold, when not nil, is waited for by each read before it reads.
	hold chan struct{}
	// copy is the copy's content, under sync.mu.
	copy   int
	loaded bool
	writes atomic.Uint64
	sync   logSync[int]
}

func newFakeLog() *fakeLog {
	f := &fakeLog{}
	f.sync = logSync[int]{
		mu:     new(sync.RWMutex),
		writes: &f.writes,
		loaded: func() bool { return f.loaded },
		read: func(ctx context.Context, since string) (catchUp[int], error) {
			if f.hold != nil {
				<-f.hold
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if err := f.readErr; err != nil {
				f.readErr = nil
				return catchUp[int]{}, err
			}
			f.snap++
			cu := catchUp[int]{snap: strconv.Itoa(f.snap)}
			for range f.queued {
				cu.changes = append(cu.changes, 1)
			}
			f.queued = 0
			return cu, nil
		},
		apply: func(changes []int) { f.copy += len(changes) },
		load: func(ctx context.Context, fromSnapshot bool) (string, bool, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.copy, f.queued, f.loaded = 0, 0, true
			f.snap++
			return strconv.Itoa(f.snap), false, nil
		},
		fail: func(ctx context.Context, err error, read bool) error { return err },
	}
	return f
}

// change queues one change, made by another process.
func (f *fakeLog) change() {
	f.mu.Lock()
	f.queued++
	f.mu.Unlock()
}

// search runs within and returns what each run of its search saw.
func (f *fakeLog) search(t *testing.T) []int {
	t.Helper()
	var saw []int
	if err := f.sync.within(context.Background(), func() { saw = append(saw, f.copy) }); err != nil {
		t.Fatal(err)
	}
	return saw
}

// TestWithinSearchesWhileCatchingUp checks logSync.within: a search that
// follows a catch-up that found nothing, with no write of the driver's
// own since, runs while the catch-up is read (the read is held until the
// search has run), and runs again on the copy brought current when the
// catch-up finds changes; after a change, or the driver's own write, a
// search catches up first and runs once.
func TestWithinSearchesWhileCatchingUp(t *testing.T) {
	f := newFakeLog()
	if saw := f.search(t); len(saw) != 1 || saw[0] != 0 {
		t.Fatalf("first search (a load) saw %v, want [0]", saw)
	}
	// The load's catch-up found nothing... but a load is no catch-up:
	// the next search catches up first.
	f.change()
	if saw := f.search(t); len(saw) != 1 || saw[0] != 1 {
		t.Fatalf("search after a load and a change saw %v, want [1]", saw)
	}
	if saw := f.search(t); len(saw) != 1 || saw[0] != 1 {
		t.Fatalf("search after a catch-up with changes saw %v, want [1]: it catches up first", saw)
	}
	// Calm now: the search runs before the catch-up's read returns.
	f.hold = make(chan struct{})
	done := make(chan []int)
	go func() {
		var saw []int
		err := f.sync.within(context.Background(), func() {
			saw = append(saw, f.copy)
			if len(saw) == 1 {
				close(f.hold)
			}
		})
		if err != nil {
			t.Error(err)
		}
		done <- saw
	}()
	select {
	case saw := <-done:
		if len(saw) != 1 || saw[0] != 1 {
			t.Fatalf("calm search saw %v, want [1]", saw)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a calm search waited for its catch-up before searching")
	}
	f.hold = nil
	// Another process's change while calm: the search runs on the copy
	// behind it, then again on the copy current.
	f.change()
	f.change()
	if saw := f.search(t); len(saw) != 2 || saw[0] != 1 || saw[1] != 3 {
		t.Fatalf("calm search across two changes saw %v, want [1 3]", saw)
	}
	if saw := f.search(t); len(saw) != 1 || saw[0] != 3 {
		t.Fatalf("search after changes saw %v, want [3]", saw)
	}
	// The driver's own write ends the calm: it catches up first.
	f.writes.Add(1)
	f.change()
	if saw := f.search(t); len(saw) != 1 || saw[0] != 4 {
		t.Fatalf("search after the driver's write saw %v, want [4]: it catches up first", saw)
	}
	// A failed read fails the search, and leaves the lock free.
	f.search(t) // calm again
	boom := errors.New("boom")
	f.readErr = boom
	if err := f.sync.within(context.Background(), func() {}); !errors.Is(err, boom) {
		t.Fatalf("within with a failing read: %v, want %v", err, boom)
	}
	f.sync.mu.Lock()
	f.sync.mu.Unlock()
}
