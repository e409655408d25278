package tiered

import (
	"context"

	"github.com/agentmem/memory"
)

// Erased counts what a Forget removed, per tier.
type Erased struct {
	// Turns are the window's turns, folded or not.
	Turns int64
	// Digests are digest versions.
	Digests int64
	// Facts are long-term facts, superseded ones included.
	Facts int64
}

// Forget erases, synchronously, every turn, digest version and fact
// visible to id at level (memory.LevelSession, LevelAgent, LevelUser or,
// where the posture allows it, LevelStore), tier by tier, and reports
// what it removed. Background work queued for the erased sessions finds
// nothing left and ends without a trace: a fold has no turns to fold, a
// fold that was running removes the digest version it wrote when it finds
// its turns gone, and a fold's facts are not stored once their source
// turns are gone.
//
// Under FailureMode Soft a failure of the store is logged and the counts
// so far are returned without an error.
func (m *Memory) Forget(ctx context.Context, id memory.Identity, level memory.Level) (Erased, error) {
	if err := m.enter(ctx); err != nil {
		return Erased{}, err
	}
	defer m.leave()
	if _, err := m.st.Filter(id, level); err != nil {
		return Erased{}, err
	}
	var out Erased
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
