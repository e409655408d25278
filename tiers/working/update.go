package working

import (
	"context"
	"encoding/json"
	"errors"
	"hash/maphash"
	"math/rand/v2"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
)

// Update's backoff between attempts that lost a race: full jitter over an
// interval that starts at updateBackoffMin and doubles up to
// updateBackoffMax.
const (
	updateBackoffMin = 20 * time.Microsecond
	updateBackoffMax = 4 * time.Millisecond
)

// lockStripes is how many in-process locks Update's rows hash onto.
const lockStripes = 64

var lockSeed = maphash.MakeSeed()

// Stats counts what a Memory's Update calls did.
type Stats struct {
	// Updates is how many Update calls stored a document.
	Updates int64
	// Conflicts is how many swaps of Update and Put lost to another
	// writer and were retried (or, at the last allowed attempt, returned
	// as memory.ErrConflict).
	Conflicts int64
}

// Stats returns the Memory's update counts so far.
func (w *Memory) Stats() Stats {
	return Stats{Updates: w.updates.Load(), Conflicts: w.retries.Load()}
}

// Swap stores doc as Put does, but only if the row's stored version is
// expect (0: no row), and returns the row as stored, with its new Version.
// A stale expect is memory.ErrConflict, and nothing is stored; a driver
// without compare-and-swap (driver.Swapper) gives memory.ErrUnimplemented.
func (w *Memory) Swap(ctx context.Context, id memory.Identity, doc Document, expect int64) (Document, error) {
	return w.swap(ctx, w.store, id, doc, expect)
}

// swap is Swap through st: the store, or its platform view.
func (w *Memory) swap(ctx context.Context, st *backend.Store, id memory.Identity, doc Document, expect int64) (Document, error) {
	if err := ctx.Err(); err != nil {
		return Document{}, err
	}
	rec, err := w.record(st, id, doc)
	if err != nil {
		return Document{}, err
	}
	v, err := st.Swap(ctx, id, rec, expect)
	if err != nil {
		return Document{}, named(rec, err)
	}
	rec.Version = v
	return toDocument(rec), nil
}

// UpdateFunc computes a document's new payload from its current state:
// cur is the stored row when found is true. Its error aborts the Update
// and is returned as is.
type UpdateFunc func(cur Document, found bool) (json.RawMessage, error)

// Update reads the row stored under key at level in id's scope, calls fn
// with it, and swaps fn's result in if nobody wrote the row in between; on
// a lost race it waits a short, jittered, growing while and starts again,
// until it succeeds, fn fails, MaxUpdateAttempts attempts have lost
// (memory.ErrConflict), or ctx ends. Only a lost race is retried: any
// other refusal — an id another identity of the tenant holds
// (memory.ErrPermissionDenied), say — ends the Update at once. The stored row keeps memoryType;
// empty means the current row's type, or DefaultMemoryType for a new row.
// It returns the row as stored, with its new Version.
//
// Within one Memory, Updates of one row take turns (an in-process lock
// per row, striped), so goroutines of one process do not fight; races are
// lost only to other processes or replicas sharing the storage, and to
// writers using Put or Swap directly. fn runs holding that lock: it must
// not call Update on the same Memory. fn may run more than once, so it
// must not have side effects beyond computing the payload. A result that
// fails CheckDocument aborts the Update. A driver without compare-and-swap
// gives memory.ErrUnimplemented.
func (w *Memory) Update(ctx context.Context, id memory.Identity, level memory.Level, key, memoryType string, fn UpdateFunc) (Document, error) {
	if err := ctx.Err(); err != nil {
		return Document{}, err
	}
	if fn == nil {
		return Document{}, memory.Errorf(memory.ErrInvalidArgument, "update of %q needs a function", key)
	}
	if err := checkKey(key); err != nil {
		return Document{}, err
	}
	doc, err := w.swapLoop(ctx, w.store, id, Document{Level: level, Key: key, Type: memoryType}, fn)
	if err == nil {
		w.updates.Add(1)
	}
	return doc, err
}

// swapLoop is Update's loop through st, for the row doc.Level and doc.Key
// name in id's scope, stored with doc.Type (empty: the current row's).
func (w *Memory) swapLoop(ctx context.Context, st *backend.Store, id memory.Identity, doc Document, fn UpdateFunc) (Document, error) {
	dq, err := w.exact(st, id, doc.Level, doc.Key)
	if err != nil {
		return Document{}, err
	}
	lock := w.locks[maphash.String(lockSeed, dq.IDs[0])%lockStripes]
	for attempt := 1; ; attempt++ {
		doc, err := w.updateLocked(ctx, st, lock, id, doc, fn, dq)
		var fe fnError
		switch {
		case err == nil:
			return doc, nil
		case errors.As(err, &fe):
			return Document{}, fe.err
		case !errors.Is(err, memory.ErrConflict):
			return Document{}, err
		}
		w.retries.Add(1)
		if w.attempts > 0 && attempt >= w.attempts {
			return Document{}, err
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return Document{}, err
		}
	}
}

// fnError carries an UpdateFunc's error out of an attempt, so that it
// aborts the Update whatever it wraps.
type fnError struct{ err error }

// Error is the UpdateFunc error's own message.
func (e fnError) Error() string { return e.err.Error() }

// updateLocked is one attempt of swapLoop holding the row's in-process
// lock.
func (w *Memory) updateLocked(ctx context.Context, st *backend.Store, lock chan struct{}, id memory.Identity, doc Document, fn UpdateFunc, dq driver.Query) (Document, error) {
	select {
	case lock <- struct{}{}:
	case <-ctx.Done():
		return Document{}, ctx.Err()
	}
	defer func() { <-lock }()
	return w.updateOnce(ctx, st, id, doc, fn, dq)
}

// updateOnce is one read, apply and swap of swapLoop.
func (w *Memory) updateOnce(ctx context.Context, st *backend.Store, id memory.Identity, doc Document, fn UpdateFunc, dq driver.Query) (Document, error) {
	cur, found, err := w.get(ctx, dq)
	if err != nil {
		return Document{}, err
	}
	payload, err := fn(cur, found)
	if err != nil {
		return Document{}, fnError{err}
	}
	if doc.Type == "" && found {
		doc.Type = cur.Type
	}
	var expect int64
	if found {
		expect = cur.Version
	}
	doc.JSON = payload
	return w.swap(ctx, st, id, doc, expect)
}

// backoff is the jittered wait after the attempt-th lost race.
func backoff(attempt int) time.Duration {
	d := updateBackoffMax
	if attempt < 16 {
		d = min(updateBackoffMin<<(attempt-1), updateBackoffMax)
	}
	return d/2 + rand.N(d/2+1)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
