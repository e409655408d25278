package facts

import (
	"context"
	"slices"

	"github.com/agentmem/memory"
)

// History returns the versions of fact factID that id may read at level,
// oldest first: the facts it superseded, one before the other (following
// SupersedesKey back), then factID itself, then the facts that superseded
// it in turn (following SupersededByKey forward). Each record's Kind
// says whether it is still live, and Validity when it was valid. The
// chain stops at a version that was deleted or is not visible at level.
// When a fact was superseded by a text already stored as a live fact,
// only the old fact records the link (SupersededByKey): the history of
// the newer fact does not reach back to it. factID not visible at level
// is memory.ErrNotFound.
func (f *Facts) History(ctx context.Context, id memory.Identity, level memory.Level, factID string) ([]memory.Record, error) {
	start, err := f.Get(ctx, id, level, factID)
	if err != nil {
		return nil, err
	}
	dq, err := f.st.Query(id, memory.Query{Level: level, Kinds: factKinds})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{start.ID: true}
	// next returns the version cur links to under key, if it is visible,
	// not seen yet and, going back, links to cur in turn (a fact deleted
	// and added again under the old id is not the version cur superseded).
	next := func(cur memory.Record, key string) (memory.Record, bool, error) {
		nid := cur.Metadata[key]
		if nid == "" || seen[nid] || checkID(key, nid) != nil {
			return memory.Record{}, false, nil
		}
		r, ok, err := f.one(ctx, dq, nid)
		if err != nil || !ok {
			return memory.Record{}, false, err
		}
		if key == SupersedesKey && (r.Kind != memory.KindSuperseded || r.Metadata[SupersededByKey] != cur.ID) {
			return memory.Record{}, false, nil
		}
		seen[nid] = true
		return r, true, nil
	}
	// walk returns the versions linked from start under key, in the
	// order followed.
	walk := func(key string) ([]memory.Record, error) {
		var out []memory.Record
		for cur := start; ; {
			r, ok, err := next(cur, key)
			if err != nil || !ok {
				return out, err
			}
			out = append(out, r)
			cur = r
		}
	}
	before, err := walk(SupersedesKey)
	if err != nil {
		return nil, err
	}
	after, err := walk(SupersededByKey)
	if err != nil {
		return nil, err
	}
	slices.Reverse(before)
	out := append(before, start)
	out = append(out, after...)
	return out, nil
}
