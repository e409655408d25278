package tiers

import (
	"context"
	"slices"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
)

// DefaultMaxEntries is how many step summaries a Summary keeps when
// SummaryOptions.MaxEntries is zero: the document's example, "keep the last
// 10 summaries".
const DefaultMaxEntries = 10

// SummaryOptions configure a Summary. The zero value is the documented
// default: the last 10 summaries per agent, no expiry, no token budget.
type SummaryOptions struct {
	// MaxEntries is how many summaries to keep (maxEntries); after each
	// Save the oldest beyond it are deleted, and Recall returns at most this
	// many. Zero means DefaultMaxEntries; negative is invalid.
	MaxEntries int
	// TTL discards summaries older than it (ttl; see ParseTTL). Each
	// summary is written with Expires = Created + TTL, and Recall and Save
	// also judge every stored summary by its age against the current TTL,
	// so shortening the TTL takes effect at once. Zero means no expiry;
	// negative is invalid.
	TTL time.Duration
	// MaxContextTokens is the token budget of the recalled block
	// (maxContextTokens), framing included; zero means no budget,
	// negative is invalid.
	MaxContextTokens int
	// Level is whose summaries are shared: the level every Recall, Save and
	// prune uses. The empty level means memory.LevelAgent — the document
	// keeps one ConfigMap per agent (agent-memory-<agent-name>), and the
	// agent level also binds the user when the caller has one.
	Level memory.Level
}

// Summary is the "summary" memory type: at the end of each step it stores
// one line (Step.Summary) as a memory.KindSummary record with Key
// "<workflow>/<step>", attributed to the caller's whole identity; at the
// start of the next step Recall returns the kept lines, oldest first, each
// rendered by RecalledLine, as the block the document prepends to the
// system prompt:
//
//	[Previous execution context]
//	[workflow-name/step-name] Task: ... | Result: ...
//	...
//
//	[Current task follows]
//
// Records go through a *backend.Store, so the store's posture and the
// Level decide who shares them; the store's token counter counts each line
// once, when it is saved, and the store's clock stamps lines and judges
// their age. A Summary is safe for concurrent use: once
// concurrent Saves in one scope have returned, exactly the newest
// MaxEntries summaries remain.
type Summary struct {
	store       *backend.Store
	level       memory.Level
	maxEntries  int
	ttl         time.Duration
	budget      int
	frameTokens int
}

// NewSummary returns a Summary storing through store. It fails with
// memory.ErrInvalidArgument for a nil store, a negative option or an
// unknown level.
func NewSummary(store *backend.Store, opt SummaryOptions) (*Summary, error) {
	switch {
	case store == nil:
		return nil, needStore("summary")
	case opt.MaxEntries < 0:
		return nil, memory.Errorf(memory.ErrInvalidArgument, "summary MaxEntries is %d; it cannot be negative", opt.MaxEntries)
	case opt.TTL < 0:
		return nil, memory.Errorf(memory.ErrInvalidArgument, "summary TTL is %s; it cannot be negative", opt.TTL)
	case opt.MaxContextTokens < 0:
		return nil, memory.Errorf(memory.ErrInvalidArgument, "summary MaxContextTokens is %d; it cannot be negative", opt.MaxContextTokens)
	case opt.Level != "" && !opt.Level.Valid():
		return nil, memory.Errorf(memory.ErrInvalidArgument, "summary level %q is unknown", string(opt.Level))
	}
	s := &Summary{
		store:      store,
		level:      opt.Level,
		maxEntries: opt.MaxEntries,
		ttl:        opt.TTL,
		budget:     opt.MaxContextTokens,
	}
	if s.level == "" {
		s.level = memory.LevelAgent
	}
	if s.maxEntries == 0 {
		s.maxEntries = DefaultMaxEntries
	}
	if s.budget > 0 {
		n, err := store.Tokens().CountTokens(context.Background(), frameText)
		if err != nil {
			return nil, err
		}
		s.frameTokens = n
	}
	return s, nil
}

// query is the memory query every call derives its scope from.
func (s *Summary) query() memory.Query {
	return memory.Query{Level: s.level, Kinds: []memory.Kind{memory.KindSummary}}
}

// stale reports whether r is older than the TTL at now.
func (s *Summary) stale(r memory.Record, now time.Time) bool {
	return s.ttl > 0 && !now.Before(r.Created.Add(s.ttl))
}

// Recall returns the newest step summaries visible to id at the Summary's
// level as the "[Previous execution context]" block, oldest line first,
// each line rendered by RecalledLine (so recalled text cannot forge a
// delimiter). Summaries older than the TTL are never returned. At most
// MaxEntries lines are returned and, with a budget, only as many of the
// newest as fit in MaxContextTokens: the framing's count plus, per line,
// its cached token count (counted again when the rendering changed the
// line) and one for its line break. Recall stops at the first line that
// does not fit, so the lines are always the latest ones, unbroken. With
// nothing to recall the Recollection is empty; its Records hold the
// summaries as stored, and its Tokens is the count of the whole block by
// the store's counter. A level whose fields id lacks is
// memory.ErrIncompleteScope.
//
// Summary recalls by recency: about is ignored. It reads one source, the
// store, so Degraded is always nil: a failure to list or count is the
// call's error.
func (s *Summary) Recall(ctx context.Context, id memory.Identity, about string) (memory.Recollection, error) {
	if err := ctx.Err(); err != nil {
		return memory.Recollection{}, err
	}
	q := s.query()
	q.Limit = s.maxEntries
	recs, err := s.store.List(ctx, id, q)
	if err != nil {
		return memory.Recollection{}, err
	}
	now := s.store.Now()
	var kept []memory.Record
	var lines []string
	used := s.frameTokens
	for _, r := range recs {
		if len(kept) == s.maxEntries {
			break
		}
		if r.Expired(now) || s.stale(r, now) {
			continue
		}
		line := RecalledLine(r.Content)
		if s.budget > 0 {
			n := r.Tokens
			if line != r.Content || (n == 0 && line != "") {
				if n, err = s.store.Tokens().CountTokens(ctx, line); err != nil {
					return memory.Recollection{}, err
				}
			}
			if used+n+1 > s.budget {
				break
			}
			used += n + 1
		}
		kept = append(kept, r)
		lines = append(lines, line)
	}
	if len(kept) == 0 {
		return memory.Recollection{}, nil
	}
	slices.Reverse(kept)
	slices.Reverse(lines)
	return recollection(ctx, s.store.Tokens(), kept, lines)
}

// Save stores step's one-line summary (Step.Summary) attributed to id,
// then deletes the summaries in the same scope beyond the newest
// MaxEntries and any older than the TTL. The step must pass Step.Validate
// (invalid UTF-8 in its input or output is refused, not repaired), id must
// pass the store's write check and hold the level's fields; all are
// checked before anything is written. If pruning fails after the summary
// was stored, Save returns the error and the next Save prunes again.
func (s *Summary) Save(ctx context.Context, id memory.Identity, step Step) error {
	if _, err := saveScope(ctx, s.store, id, s.level, step); err != nil {
		return err
	}
	dq, err := s.store.Query(id, s.query())
	if err != nil {
		return err
	}
	now := s.store.Now()
	rec := memory.NewSummary(id, step.key(), step.Summary(), now) // the store counts its tokens
	if s.ttl > 0 {
		rec.Expires = now.Add(s.ttl)
	}
	if err := s.store.Add(ctx, id, rec); err != nil {
		return err
	}
	return s.prune(ctx, id, dq)
}

// prune deletes the step summaries visible through dq beyond the newest
// maxEntries and those older than the TTL.
//
// Concurrent Saves stay correct without a lock: each Save lists only after
// its own write, and deletes only summaries that had maxEntries newer ones
// beside them. The newest maxEntries summaries ever written in the scope
// never have that many newer ones, so no Save deletes them; and the last
// Save to list sees every write, so it deletes all the others.
func (s *Summary) prune(ctx context.Context, id memory.Identity, dq driver.Query) error {
	recs, err := s.store.List(ctx, id, s.query())
	if err != nil {
		return err
	}
	now := s.store.Now()
	var doomed []string
	for i, r := range recs {
		if i >= s.maxEntries || s.stale(r, now) {
			doomed = append(doomed, r.ID)
		}
	}
	_, err = s.deleteIDs(ctx, dq, doomed)
	return err
}

// deleteIDs deletes the records with the given ids that dq selects, in
// batches the driver accepts, and reports how many it removed.
func (s *Summary) deleteIDs(ctx context.Context, dq driver.Query, ids []string) (int64, error) {
	var total int64
	for len(ids) > 0 {
		n := min(len(ids), memory.MaxBatch)
		dq.IDs = ids[:n]
		ids = ids[n:]
		removed, err := s.store.DeleteQuery(ctx, dq)
		total += removed
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// Forget erases the step summaries visible to id at level, expired or
// not, and reports how many it removed; other records are untouched.
func (s *Summary) Forget(ctx context.Context, id memory.Identity, level memory.Level) (int64, error) {
	q := s.query()
	q.Level = level
	return s.store.Delete(ctx, id, q)
}
