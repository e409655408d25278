package postgres

import (
	"context"
	"sync"
	"sync/atomic"
)

// catchUp is what one catch-up statement read from the change log (see
// textlog.go) for an in-process copy of the records: the snapshot T it
// saw, whether the log was pruned past the copy's snapshot, and unless
// it was, the changes T sees that the copy's snapshot does not, each the
// state of one changed key in T.
type catchUp[Ch any] struct {
	snap    string
	pruned  bool
	changes []Ch
}

// logSync keeps an in-process copy of records (the text cache, the
// vector copy) current from the change log, by the protocol textlog.go
// describes; it holds the snapshot the copy is current at, and is told
// by its copy how to read, apply and load.
type logSync[Ch any] struct {
	// mu guards the copy's content: searches hold it shared, changes
	// exclusively.
	mu *sync.RWMutex
	// gen counts changes of the copy's content, under mu.
	gen uint64
	// snap is the pg_snapshot the copy is current at, as text. It
	// changes under mu held exclusively with the content, and under mu
	// held shared when a catch-up found nothing to change (advance).
	snap atomic.Pointer[string]

	// loaded reports whether the copy holds content; under mu.
	loaded func() bool
	// read runs the copy's catch-up statement for a copy at since.
	read func(ctx context.Context, since string) (catchUp[Ch], error)
	// apply applies changes to the copy, under mu held exclusively.
	apply func(changes []Ch)
	// load replaces the copy's content, under mu held exclusively: from
	// its stored snapshot when fromSnapshot and there is one to read
	// (stored reports whether it did), or from every record; snap is
	// the pg_snapshot of what it read.
	load func(ctx context.Context, fromSnapshot bool) (snap string, stored bool, err error)
	// fail classifies the errors of read (read is true) and load.
	fail func(ctx context.Context, err error, read bool) error

	// writes counts the driver's own writes (Driver.wrote).
	writes *atomic.Uint64
	// calm is one more than the count of writes read at the start of
	// the last catch-up, when it found nothing to change; 0 when it
	// found changes. It tells within whether to search while catching
	// up: a hint, never a reason to skip a catch-up.
	calm atomic.Uint64
}

// within runs search with mu held shared on the copy current, as current
// leaves it, and returns what current would. When the last catch-up
// found nothing to change and the driver has not written since, search
// runs on the copy as it is while the catch-up is read, and runs again,
// on the copy brought current, only when the catch-up finds changes:
// searches between which nothing changed then cost no round trip to the
// server beyond their own time. search may therefore run twice; its
// last run is the one on the copy current.
func (s *logSync[Ch]) within(ctx context.Context, search func()) error {
	ran, changed, err := s.catchUp(ctx, search)
	if err != nil {
		return err
	}
	if !ran || changed {
		search()
	}
	s.mu.RUnlock()
	return nil
}

// current returns with mu held shared and the copy current: holding
// every record as a snapshot taken during this call sees it.
func (s *logSync[Ch]) current(ctx context.Context) error {
	_, _, err := s.catchUp(ctx, nil)
	return err
}

// catchUp brings the copy current and returns with mu held shared, unless
// it fails. When the copy is loaded and calm (see calm), during, if not
// nil, runs on the copy as it is while the catch-up is read (ran), and
// changed reports whether the catch-up then changed the copy, leaving
// what during found behind it.
func (s *logSync[Ch]) catchUp(ctx context.Context, during func()) (ran, changed bool, err error) {
	s.mu.RLock()
	w := s.writes.Load()
	var (
		cu   catchUp[Ch]
		read bool   // cu was read, at gen
		gen  uint64 // s.gen when cu was read
	)
	if s.loaded() {
		from := s.snap.Load()
		if ran = during != nil && s.calm.Load() == w+1; ran {
			done := make(chan struct{})
			go func() {
				defer close(done)
				cu, err = s.read(ctx, *from)
			}()
			during()
			<-done
		} else {
			cu, err = s.read(ctx, *from)
		}
		if err != nil {
			s.mu.RUnlock()
			return ran, false, s.fail(ctx, err, true)
		}
		if !cu.pruned && len(cu.changes) == 0 {
			// Its content is that of cu.snap as well. Of two catch-ups
			// racing, the one that read the current snapshot wins.
			s.snap.CompareAndSwap(from, &cu.snap)
			s.calm.Store(w + 1)
			return ran, false, nil
		}
		read, gen = true, s.gen
	}
	s.calm.Store(0)
	s.mu.RUnlock()
	s.mu.Lock()
	err = s.refresh(ctx, cu, read && s.gen == gen)
	s.mu.Unlock()
	if err != nil {
		return ran, true, err
	}
	s.mu.RLock()
	return ran, true, nil
}

// refresh brings the copy current, with mu held exclusively: with cu
// when valid (read from the copy's snapshot, which no other search has
// moved on since), with a catch-up read now otherwise, or with a load
// when the copy is not loaded or the log was pruned past it.
func (s *logSync[Ch]) refresh(ctx context.Context, cu catchUp[Ch], valid bool) error {
	loaded := s.loaded()
	if loaded && !valid {
		var err error
		if cu, err = s.read(ctx, *s.snap.Load()); err != nil {
			return s.fail(ctx, err, true)
		}
	}
	if loaded && !cu.pruned {
		s.applyAt(cu)
		return nil
	}
	// Load from the stored snapshot and catch up from it, unless the log
	// has been pruned past it; then read every record.
	fromSnapshot := true
	for {
		snap, stored, err := s.load(ctx, fromSnapshot)
		if err != nil {
			return s.fail(ctx, err, false)
		}
		s.snap.Store(&snap)
		s.gen++
		if !stored {
			return nil
		}
		if cu, err = s.read(ctx, snap); err != nil {
			return s.fail(ctx, err, true)
		}
		if !cu.pruned {
			s.applyAt(cu)
			return nil
		}
		fromSnapshot = false
	}
}

// applyAt brings the copy to the snapshot cu read, with its changes.
// The caller holds mu for writing, and cu was read from the copy's
// current snapshot.
func (s *logSync[Ch]) applyAt(cu catchUp[Ch]) {
	s.apply(cu.changes)
	s.snap.Store(&cu.snap)
	s.gen++
}
