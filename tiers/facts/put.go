package facts

import (
	"context"
	"errors"
	"maps"
	"time"

	"github.com/agentmem/memory"
)

// maxAttempts bounds the retries of a write that lost a race to a change
// that left what it depends on as it was: a fact deleted and created
// again, a live fact rewritten but still live.
const maxAttempts = 8

// record returns the live fact record id writes for text, with its
// sources, its tokens counted with the store's counter (so the record
// returned is the record stored), validated as the store will validate it.
func (f *Facts) record(ctx context.Context, id memory.Identity, text string, sources []string) (memory.Record, error) {
	r := memory.NewFact(id, text, f.st.Now())
	r.Metadata = map[string]string{}
	if len(sources) > 0 {
		r.Metadata[SourcesKey] = encodeSources(sources)
	}
	n, err := f.st.Tokens().CountTokens(ctx, text)
	if err != nil {
		return memory.Record{}, err
	}
	r.Tokens = n
	if err := r.Validate(); err != nil {
		return memory.Record{}, err
	}
	return r, nil
}

// put stores the fact b for id, superseding the fact supersedes names
// (none when empty), and reports what it did. The order makes racing
// updates of one fact safe and leaves nothing behind when one loses: the
// superseded fact is rewritten first, on its version, naming b's id (known
// before b is stored: it derives from the text), so of racing writers
// exactly one wins; then b is created, create-only. When creating b fails,
// the superseded fact is restored.
//
// The fact to supersede is one of id's reach (see reach), rewritten under
// its own attribution. When it is missing, out of id's reach, or already
// superseded by a fact other than b, put leaves it alone: with strict (an
// Update) that is memory.ErrNotFound or memory.ErrConflict, otherwise (an
// Add) b is stored superseding nothing. One that b already supersedes (an
// earlier call stopped between its two writes) is not rewritten again. A
// b whose text is stored as a superseded fact is never made live again:
// with strict that is memory.ErrInvalidArgument, otherwise the superseded
// record is reported and nothing changes.
func (f *Facts) put(ctx context.Context, id memory.Identity, b memory.Record, supersedes string, strict bool) (Added, error) {
	got, err := f.own(ctx, id, b.ID)
	if err != nil {
		return Added{}, err
	}
	if supersedes != "" {
		dq, err := f.reach(id)
		if err != nil {
			return Added{}, err
		}
		if a, ok, err := f.one(ctx, dq, supersedes); err != nil {
			return Added{}, err
		} else if ok {
			got[a.ID] = a
		}
	}
	if r, ok := got[b.ID]; ok && r.Kind == memory.KindSuperseded {
		if strict {
			return Added{}, memory.Errorf(memory.ErrInvalidArgument, "facts: the text is that of fact %s, which fact %s superseded; a superseded text is never made live again (delete %s first to store it anew)", r.ID, r.Metadata[SupersededByKey], r.ID)
		}
		return Added{Record: r, Status: Superseded}, nil
	}
	var replaced string
	var prior, swapped memory.Record // the fact this call supersedes, before and after
	if supersedes != "" {
		a, ok := got[supersedes]
		if ok && a.Kind == memory.KindFact {
			// Rewritten under its own attribution, which it keeps.
			if swapped, prior, err = f.supersede(ctx, a.Identity, a, b.ID, b.Created); err != nil {
				return Added{}, err
			}
			a, ok = swapped, swapped.ID != ""
			if prior.ID == "" {
				swapped = memory.Record{} // what a's id holds now, not written here
			}
		}
		switch {
		case ok && a.Kind == memory.KindSuperseded && a.Metadata[SupersededByKey] == b.ID:
			replaced = a.ID
		case !strict:
		case !ok:
			return Added{}, memory.Errorf(memory.ErrNotFound, "facts: no fact %s within this identity's reach (its agent's facts of its user)", supersedes)
		default:
			return Added{}, memory.Errorf(memory.ErrConflict, "facts: fact %s is already superseded, by fact %s", supersedes, a.Metadata[SupersededByKey])
		}
	}
	if replaced != "" {
		b.Metadata[SupersedesKey] = replaced
	}
	r, status, err := f.create(ctx, id, b)
	if err != nil {
		if swapped.ID != "" {
			f.restore(ctx, prior.Identity, prior, swapped)
		}
		return Added{}, err
	}
	return Added{Record: r, Status: status, Replaced: replaced}, nil
}

// create writes the fact record b create-only and returns what its id
// holds then: b itself (Created), or the record found there (Existing, or
// Superseded when that is a superseded fact). A record deleted between
// the refused create and the read is created again.
func (f *Facts) create(ctx context.Context, id memory.Identity, b memory.Record) (memory.Record, Status, error) {
	for range maxAttempts {
		v, err := f.st.Swap(ctx, id, b, 0)
		if err == nil {
			b.Version = v
			return b, Created, nil
		}
		if !errors.Is(err, memory.ErrConflict) {
			return memory.Record{}, "", err
		}
		got, err := f.own(ctx, id, b.ID)
		if err != nil {
			return memory.Record{}, "", err
		}
		if r, ok := got[b.ID]; ok {
			if r.Kind == memory.KindSuperseded {
				return r, Superseded, nil
			}
			return r, Existing, nil
		}
	}
	return memory.Record{}, "", memory.Errorf(memory.ErrConflict, "facts: fact %s was created and deleted again %d times while it was being added; try again", b.ID, maxAttempts)
}

// supersede rewrites the live fact a, which id (a's own attribution)
// wrote, as superseded by the fact byID at
// time at (when the successor's validity starts), on a's version, and returns the record stored and the live record it
// replaced. When a was rewritten in between and is still live, it tries
// again on the new version; when a is no longer a live fact, it returns
// what a's id holds now (the zero record when nothing) and no prior.
func (f *Facts) supersede(ctx context.Context, id memory.Identity, a memory.Record, byID string, at time.Time) (stored, prior memory.Record, err error) {
	for range maxAttempts {
		s := a
		s.Kind = memory.KindSuperseded
		s.Metadata = maps.Clone(a.Metadata)
		if s.Metadata == nil {
			s.Metadata = map[string]string{}
		}
		s.Metadata[SupersededByKey] = byID
		s.Metadata[SupersededAtKey] = at.UTC().Format(time.RFC3339Nano)
		v, err := f.st.Swap(ctx, id, s, a.Version)
		if err == nil {
			s.Version = v
			return s, a, nil
		}
		if !errors.Is(err, memory.ErrConflict) {
			return memory.Record{}, memory.Record{}, err
		}
		got, err := f.own(ctx, id, a.ID)
		if err != nil {
			return memory.Record{}, memory.Record{}, err
		}
		cur, ok := got[a.ID]
		if !ok || cur.Kind != memory.KindFact {
			return cur, memory.Record{}, nil
		}
		a = cur
	}
	return memory.Record{}, memory.Record{}, memory.Errorf(memory.ErrConflict, "facts: fact %s changed %d times while it was being superseded; try again", a.ID, maxAttempts)
}

// restore puts back the live fact prior that supersede replaced with
// swapped, if nothing wrote it since, when storing its successor failed.
// It runs even when ctx has ended (a cancelled call should not leave the
// fact superseded by nothing) and is best effort: if it fails, the fact
// stays superseded by an id that holds nothing, and calling Update or Add
// again with the same text completes the change.
func (f *Facts) restore(ctx context.Context, id memory.Identity, prior, swapped memory.Record) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, _ = f.st.Swap(ctx, id, prior, swapped.Version)
}
