package working_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/internal/storagetest"
	"github.com/agentmem/memory/tiers/working"
)

// increment is an UpdateFunc adding one to a {"n": <count>} document.
func increment(cur working.Document, found bool) (json.RawMessage, error) {
	var c struct{ N int }
	if found {
		if err := json.Unmarshal(cur.JSON, &c); err != nil {
			return nil, err
		}
	}
	return json.RawMessage(`{"n":` + strconv.Itoa(c.N+1) + `}`), nil
}

// TestWorkingCounter has 16 goroutines increment one counter document
// 1,000 times each, split over two replicas — two independent driver
// instances on the same storage (one in-memory driver shared by two
// stores), each with its own Memory — so real compare-and-swap conflicts
// happen between them and are retried. The count must end at exactly
// 16,000, and conflicts must have occurred.
func TestWorkingCounter(t *testing.T) {
	const goroutines, increments = 16, 1000
	// Not on Qdrant: there each attempt is three requests the in-process
	// stand-in answers by scanning the collection, so the 16,000 contended
	// updates took 106 s under -race, crowding the rest of a CI run; its
	// compare-and-swap races are the conformance suite's (SwapRace).
	drivers := storagetest.Without(workingDrivers, "qdrant")
	storagetest.Run(t, drivers, true, func(t *testing.T, open func() driver.Driver) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		var replicas [2]*working.Memory
		for i := range replicas {
			replicas[i], _ = newWorking(t, open(), working.Options{})
		}
		start := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, goroutines)
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w := replicas[g%2]
				for range increments {
					if _, err := w.Update(ctx, analyst, memory.LevelSquad, "counter", "working", increment); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		elapsed := time.Since(start)
		got, err := replicas[0].Get(ctx, analyst, memory.LevelSquad, "counter")
		if err != nil {
			t.Fatal(err)
		}
		if string(got.JSON) != `{"n":16000}` || got.Version != goroutines*increments {
			t.Errorf("counter is %s at version %d, want {\"n\":16000} at 16000", got.JSON, got.Version)
		}
		s0, s1 := replicas[0].Stats(), replicas[1].Stats()
		if s0.Updates != goroutines*increments/2 || s1.Updates != goroutines*increments/2 {
			t.Errorf("replicas stored %d and %d updates, want %d each", s0.Updates, s1.Updates, goroutines*increments/2)
		}
		if s0.Conflicts+s1.Conflicts == 0 {
			t.Errorf("no conflicts between the replicas: the test did not exercise retries")
		}
		t.Logf("%d updates in %v (%.0f/s); conflicts retried: %d and %d", goroutines*increments, elapsed.Round(time.Millisecond),
			float64(goroutines*increments)/elapsed.Seconds(), s0.Conflicts, s1.Conflicts)
	})
}

func TestWorkingSwap(t *testing.T) {
	forEachWorkingDriver(t, func(t *testing.T, open func() driver.Driver) {
		ctx := context.Background()
		d := open()
		w, _ := newWorking(t, d, working.Options{})
		doc := working.Document{Level: memory.LevelSquadAgent, Key: "draft", Type: "working", JSON: json.RawMessage(`{"v":1}`)}
		v1, err := w.Swap(ctx, analyst, doc, 0)
		if err != nil || v1.Version != 1 {
			t.Fatalf("first swap: %+v, %v", v1, err)
		}
		if _, err := w.Swap(ctx, analyst, doc, 0); !errors.Is(err, memory.ErrConflict) {
			t.Errorf("swap expecting no row: %v, want ErrConflict", err)
		}
		doc.JSON = json.RawMessage(`{"v":2}`)
		v2, err := w.Swap(ctx, analyst, doc, 1)
		if err != nil || v2.Version != 2 {
			t.Fatalf("second swap: %+v, %v", v2, err)
		}
		doc.JSON = json.RawMessage(`{"v":"stale"}`)
		if _, err := w.Swap(ctx, analyst, doc, 1); !errors.Is(err, memory.ErrConflict) {
			t.Errorf("stale swap: %v, want ErrConflict", err)
		}
		got, err := w.Get(ctx, analyst, memory.LevelSquadAgent, "draft")
		if err != nil || string(got.JSON) != `{"v":2}` || got.Version != 2 {
			t.Errorf("after a stale swap: %s v%d, %v; want {\"v\":2} v2", got.JSON, got.Version, err)
		}
		// A Put in between makes a swap of the version read before it fail.
		if _, err := w.Put(ctx, analyst, doc); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Swap(ctx, analyst, doc, 2); !errors.Is(err, memory.ErrConflict) {
			t.Errorf("swap after a put: %v, want ErrConflict", err)
		}

		// Update: creates, keeps the type, and fn's error aborts.
		up, err := w.Update(ctx, analyst, memory.LevelSquadAgent, "fresh", "", increment)
		created := working.Document{JSON: json.RawMessage(`{"n":1}`), Version: 1, Type: working.DefaultMemoryType}
		if err != nil {
			t.Errorf("update creating a row: %v", err)
		} else if diff := cmp.Diff(created, up, cmpopts.IgnoreFields(working.Document{}, "Level", "Key", "Scope", "Updated")); diff != "" {
			t.Errorf("update creating a row (-want +got):\n%s", diff)
		}
		up, err = w.Update(ctx, analyst, memory.LevelSquadAgent, "draft", "", func(cur working.Document, found bool) (json.RawMessage, error) {
			if !found || cur.Version != 3 {
				t.Errorf("update saw %+v, found %v", cur, found)
			}
			return json.RawMessage(`"done"`), nil
		})
		if err != nil || up.Version != 4 || up.Type != "working" {
			t.Errorf("update: %+v, %v", up, err)
		}
		boom := errors.New("boom")
		if _, err := w.Update(ctx, analyst, memory.LevelSquadAgent, "draft", "", func(working.Document, bool) (json.RawMessage, error) { return nil, boom }); !errors.Is(err, boom) {
			t.Errorf("update whose function fails: %v, want boom", err)
		}
		if _, err := w.Update(ctx, analyst, memory.LevelSquadAgent, "draft", "", nil); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("update without a function: %v", err)
		}
		if got, _ := w.Get(ctx, analyst, memory.LevelSquadAgent, "draft"); got.Version != 4 {
			t.Errorf("failed updates changed the row: %+v", got)
		}
	})
}

// TestWorkingUpdateGivesUp has a writer change the row after every read,
// so each swap loses: with MaxUpdateAttempts 3, Update tries three times
// and returns ErrConflict; without a bound, it stops when its context ends.
func TestWorkingUpdateGivesUp(t *testing.T) {
	ctx := context.Background()
	d := inmem.New(inmem.Options{})
	other, _ := newWorking(t, d, working.Options{})
	for _, attempts := range []int{3, 0} {
		w, _ := newWorking(t, d, working.Options{MaxUpdateAttempts: attempts})
		calls := 0
		uctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err := w.Update(uctx, analyst, memory.LevelSquad, "contended", "", func(working.Document, bool) (json.RawMessage, error) {
			calls++
			if _, err := other.Put(ctx, analyst, working.Document{Level: memory.LevelSquad, Key: "contended", JSON: json.RawMessage(strconv.Itoa(calls))}); err != nil {
				t.Error(err)
			}
			return json.RawMessage(`"mine"`), nil
		})
		cancel()
		switch {
		case attempts == 3 && (!errors.Is(err, memory.ErrConflict) || calls != 3 || w.Stats().Conflicts != 3):
			t.Errorf("bounded update: %v after %d calls, %d conflicts; want ErrConflict after 3", err, calls, w.Stats().Conflicts)
		case attempts == 0 && (!errors.Is(err, context.DeadlineExceeded) || calls < 10):
			t.Errorf("unbounded update: %v after %d calls; want the context's deadline after many", err, calls)
		}
	}
}

// TestWorkingUpdateFuncErrors checks fn's errors abort at once, even one
// that wraps memory.ErrConflict, and a panicking fn leaves the row's lock
// free.
func TestWorkingUpdateFuncErrors(t *testing.T) {
	ctx := context.Background()
	w, _ := newWorking(t, inmem.New(inmem.Options{}), working.Options{})
	calls := 0
	conflict := memory.Errorf(memory.ErrConflict, "the caller's own conflict")
	_, err := w.Update(ctx, analyst, memory.LevelSquad, "k", "", func(working.Document, bool) (json.RawMessage, error) {
		calls++
		return nil, conflict
	})
	if err != conflict || calls != 1 || w.Stats().Conflicts != 0 {
		t.Errorf("fn's conflict error: %v after %d calls, %d retries; want it returned after one call", err, calls, w.Stats().Conflicts)
	}
	func() {
		defer func() { _ = recover() }()
		_, _ = w.Update(ctx, analyst, memory.LevelSquad, "k", "", func(working.Document, bool) (json.RawMessage, error) { panic("fn panics") })
	}()
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := w.Update(tctx, analyst, memory.LevelSquad, "k", "", increment); err != nil {
		t.Errorf("update after a panicking fn: %v", err)
	}
}

// swaplessDriver hides every capability of the driver it wraps.
type swaplessDriver struct{ driver.Driver }

func TestWorkingWithoutSwap(t *testing.T) {
	ctx := context.Background()
	w, _ := newWorking(t, swaplessDriver{inmem.New(inmem.Options{})}, working.Options{})
	if _, err := w.Swap(ctx, analyst, working.Document{Key: "k", JSON: json.RawMessage(`1`)}, 0); !errors.Is(err, memory.ErrUnimplemented) {
		t.Errorf("Swap: %v, want ErrUnimplemented", err)
	}
	if _, err := w.Update(ctx, analyst, memory.LevelSquad, "k", "", increment); !errors.Is(err, memory.ErrUnimplemented) {
		t.Errorf("Update: %v, want ErrUnimplemented", err)
	}
	if _, err := w.Put(ctx, analyst, working.Document{Key: "k", JSON: json.RawMessage(`1`)}); err != nil {
		t.Errorf("Put needs no capability: %v", err)
	}
}

// TestWorkingUpdateCancelledWhileWaiting checks an Update waiting for the
// row's in-process lock honours its context.
func TestWorkingUpdateCancelledWhileWaiting(t *testing.T) {
	ctx := context.Background()
	w, _ := newWorking(t, inmem.New(inmem.Options{}), working.Options{})
	inside := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := w.Update(ctx, analyst, memory.LevelSquad, "slow", "", func(cur working.Document, found bool) (json.RawMessage, error) {
			close(inside)
			<-release
			return increment(cur, found)
		})
		done <- err
	}()
	<-inside
	wctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := w.Update(wctx, analyst, memory.LevelSquad, "slow", "", increment); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting update: %v, want the context's deadline", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
