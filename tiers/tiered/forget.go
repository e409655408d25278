package tiered

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// Erased counts what a Forget removed, per tier.
type Erased struct {
	// Turns are the window's turns, folded or not.
	Turns int64
	// Digests are digest versions.
	Digests int64
	// Facts are long-term facts, superseded ones included.
	Facts int64
	// Work are queued background jobs of the erased sessions (folds,
	// idle flushes, facts waiting to be stored), pending or claimed.
	Work int64
}

// Forget erases, synchronously, the background work queued for the
// sessions visible to id at level (memory.LevelSession, LevelAgent,
// LevelUser or, where the posture allows it, LevelStore) — folds, idle
// flushes and facts waiting to be stored, whose payloads hold what was
// said — and then every turn, digest version and fact visible at that
// level, tier by tier, and reports what it removed. A fold that was
// running when its job was erased finds its turns gone and removes the
// digest version it wrote, and the facts it queued are not stored once
// their source turns are gone.
//
// Under FailureMode Soft a failure of the store is logged and the counts
// so far are returned without an error.
func (m *Memory) Forget(ctx context.Context, id memory.Identity, level memory.Level) (Erased, error) {
	if err := m.enter(ctx); err != nil {
		return Erased{}, err
	}
	defer m.leave()
	f, err := m.st.Filter(id, level)
	if err != nil {
		return Erased{}, err
	}
	var out Erased
	if out.Work, err = m.cl.(driver.WorkEraser).EraseWork(ctx, Queue, f); err != nil {
		return out, m.soft(err, "forget")
	}
	for _, tier := range []struct {
		kinds []memory.Kind
		n     *int64
	}{
		// Turns first: no fold starts on them once they are gone.
		{[]memory.Kind{memory.KindTurn}, &out.Turns},
		{[]memory.Kind{memory.KindDigest}, &out.Digests},
		{[]memory.Kind{memory.KindFact, memory.KindSuperseded}, &out.Facts},
	} {
		n, err := m.st.Delete(ctx, id, memory.Query{Level: level, Kinds: tier.kinds})
		if err != nil {
			return out, m.soft(err, "forget")
		}
		*tier.n = n
	}
	m.mu.Lock()
	clear(m.sessions)
	m.mu.Unlock()
	return out, nil
}
