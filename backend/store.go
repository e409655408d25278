// Package backend is Store, the one place scope is enforced: it derives
// every driver query's filter from the caller's identity and the level
// asked for, applies the store's posture, fills in record ids, creation
// times and token counts, and checks sizes and validity before a driver
// sees a record. The drivers themselves (backend/inmem, backend/sqlite,
// backend/postgres, backend/fs, backend/configmap) implement the contract
// of backend/driver.
package backend

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/tokens"
)

// NewTokenCounter returns the exact, offline token counter of the named
// encoding, for StoreOptions.Tokens: "cl100k_base" (what a Store counts
// when Tokens is nil; gpt-4, gpt-3.5-turbo and the text-embedding models)
// or "o200k_base" (gpt-4o, gpt-4.1, gpt-4.5, gpt-5 and the o-series
// models). Its counts are those of OpenAI's tiktoken. An unknown name is
// memory.ErrInvalidArgument.
func NewTokenCounter(encoding string) (memory.TokenCounter, error) {
	c, err := tokens.New(encoding)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// DefaultSystemTenant is the tenant reserved for platform data when
// StoreOptions.SystemTenant is empty.
const DefaultSystemTenant = "system"

// StoreOptions configure a Store. The zero value is the documented default.
type StoreOptions struct {
	// Posture is the identity requirements; the zero value requires only
	// each level's own fields and refuses the store level.
	Posture memory.Posture
	// Tokens counts tokens for the per-record cache (Record.Tokens) of
	// every kind but documents; nil means exact cl100k_base counts.
	Tokens memory.TokenCounter
	// Clock stamps records written without a creation time; nil means time.Now.
	Clock memory.Clock
	// Logger receives debug records of erasures; nil discards them.
	Logger *slog.Logger
	// SystemTenant is the tenant reserved for platform data, such as the
	// defaults keyed working memory merges with every tenant's
	// overrides. No caller's identity may carry it: every call whose
	// identity has it is memory.ErrPermissionDenied, so no tenant can read
	// or write what the platform shares with all. Its records are reached
	// through Platform. Empty means DefaultSystemTenant.
	SystemTenant string
}

// Store is the scoped entry point to a driver: it checks the writer's
// identity against the posture, attributes every record to it, derives
// every read and erasure filter from the caller's identity and a level, and
// only then calls the driver. Tiers use a Store, never a bare driver, so
// scope is enforced in exactly one place. It implements memory.Store and
// memory.Forgetter and is safe for concurrent use.
type Store struct {
	d   driver.Driver
	opt StoreOptions
	// platform marks the view Platform returns: it reaches the system
	// tenant only, and writes only under Posture.AllowPlatform.
	platform bool
}

var (
	_ memory.Store     = (*Store)(nil)
	_ memory.Forgetter = (*Store)(nil)
)

// NewStore returns a Store over d.
func NewStore(d driver.Driver, opt StoreOptions) *Store {
	if opt.Tokens == nil {
		opt.Tokens = tokens.Counter{}
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.SystemTenant == "" {
		opt.SystemTenant = DefaultSystemTenant
	}
	return &Store{d: d, opt: opt}
}

// Platform returns the store's view of platform data: the same driver,
// posture and options, reaching the system tenant (SystemTenant) and no
// other. Every caller identity it is given must carry the system tenant.
// It reads for anyone — every tenant reads the platform's defaults — and
// writes (Add, Swap, Delete) only when the posture has AllowPlatform;
// otherwise they are memory.ErrPermissionDenied. Closing the view closes
// the driver, as closing the store does.
func (s *Store) Platform() *Store {
	p := *s
	p.platform = true
	return &p
}

// SystemTenant returns the tenant reserved for platform data.
func (s *Store) SystemTenant() string { return s.opt.SystemTenant }

// checkTenant refuses a caller whose tenant the store (or its platform
// view) does not reach.
func (s *Store) checkTenant(tenant string) error {
	switch {
	case s.platform && tenant != s.opt.SystemTenant:
		return memory.Errorf(memory.ErrPermissionDenied, "the platform view reaches only the system tenant %q, not %q", s.opt.SystemTenant, tenant)
	case !s.platform && tenant == s.opt.SystemTenant:
		return memory.Errorf(memory.ErrPermissionDenied, "tenant %q is reserved for platform data, which is reached only through the store's platform view", tenant)
	}
	return nil
}

// Driver returns the underlying driver, for optional capabilities.
func (s *Store) Driver() driver.Driver { return s.d }

// Posture returns the posture the store enforces.
func (s *Store) Posture() memory.Posture { return s.opt.Posture }

// CheckWrite checks the writer id as Add and Swap do before anything is
// stored: its tenant (the system tenant is refused, and a platform view
// writes only it, only under Posture.AllowPlatform), then the posture's
// identity requirements (memory.Posture.CheckWrite). Memory types that
// keep their data outside the driver (a process's turns, a directory of
// entry files) call it, so the Store stays the one place scope is
// enforced.
func (s *Store) CheckWrite(id memory.Identity) error {
	if err := s.checkTenant(id.Tenant); err != nil {
		return err
	}
	if s.platform && !s.opt.Posture.AllowPlatform {
		return memory.Errorf(memory.ErrPermissionDenied, "writing platform data (tenant %q) needs a posture with AllowPlatform", s.opt.SystemTenant)
	}
	return s.opt.Posture.CheckWrite(id)
}

// Filter derives the condition for id reading or erasing at level, as
// every read and erasure of the Store derives it: the tenant checked as
// CheckWrite checks it, then memory.Posture.Filter. Memory types that keep
// their data outside the driver match their entries with it.
func (s *Store) Filter(id memory.Identity, level memory.Level) (memory.Filter, error) {
	if err := s.checkTenant(id.Tenant); err != nil {
		return memory.Filter{}, err
	}
	return s.opt.Posture.Filter(id, level)
}

// Now returns the store's clock reading.
func (s *Store) Now() time.Time { return s.opt.Clock.Now() }

// Tokens returns the store's token counter.
func (s *Store) Tokens() memory.TokenCounter { return s.opt.Tokens }

// Add writes recs attributed to id. A record with an empty Identity gets
// id's whole identity (compound attribution), so what is stored meets the
// posture exactly as the writer does. The one exception is a keyed
// working-memory row: a document (memory.KindDocument) may carry the
// writer's identity reduced to the fields of one keyed level
// (memory.KeyedLevel, memory.Level.Keyed), as tiers/working keys
// such rows; any other identity on a record is memory.ErrPermissionDenied.
// A turn's Label must be a conversation role (memory.Role.Valid), or the
// batch is memory.ErrInvalidArgument. Records without a creation time are
// stamped with the clock, records without an id get a fresh one, and each
// record is validated (memory.Record.Validate) before its tokens are
// counted, once, here — except for documents, whose JSON is state handed
// between steps rather than prompt text and is rewritten whole on every
// update: a document keeps Tokens zero ("not counted") unless the caller
// sets it. The batch is stored whole or not at all.
func (s *Store) Add(ctx context.Context, id memory.Identity, recs ...memory.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.CheckWrite(id); err != nil {
		return err
	}
	if len(recs) == 0 {
		return nil
	}
	now := s.opt.Clock.Now()
	out := make([]memory.Record, len(recs))
	for i, r := range recs {
		r, err := s.prepare(ctx, id, r, now)
		if err != nil {
			return err
		}
		out[i] = r
	}
	return s.d.Put(ctx, out)
}

// prepare attributes r to the writer id and fills in its creation time,
// id and token count, as Add describes. The record is validated (sizes,
// UTF-8, JSON) before its tokens are counted, so no count runs on input
// that would be refused.
func (s *Store) prepare(ctx context.Context, id memory.Identity, r memory.Record, now time.Time) (memory.Record, error) {
	switch {
	case r.Identity == (memory.Identity{}):
		r.Identity = id
	case r.Identity == id:
	case !keyedRow(r, id):
		return r, memory.Errorf(memory.ErrPermissionDenied,
			"record %q carries an identity other than its writer's: only a document may, keyed at one working level by exactly the writer's fields of that level", r.ID)
	}
	if r.Created.IsZero() {
		r.Created = now
	}
	if r.ID == "" {
		r.ID = memory.NewID(r.Created)
	}
	if r.Kind == memory.KindTurn && !memory.Role(r.Label).Valid() {
		return r, memory.Errorf(memory.ErrInvalidArgument, "turn %q has role %q; a turn's Label is one of user, assistant, system and tool", r.ID, r.Label)
	}
	if err := r.Validate(); err != nil {
		return r, err
	}
	if r.Tokens == 0 && r.Content != "" && r.Kind != memory.KindDocument {
		n, err := s.opt.Tokens.CountTokens(ctx, r.Content)
		if err != nil {
			return r, err
		}
		r.Tokens = n
	}
	return r, nil
}

// Swap writes rec, attributed to id as Add does, only if the live record
// under rec.ID has version expect (0: none), and returns the version
// stored; see driver.Swapper. A driver without the capability gives
// memory.ErrUnimplemented.
func (s *Store) Swap(ctx context.Context, id memory.Identity, rec memory.Record, expect int64) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	sw, ok := s.d.(driver.Swapper)
	if !ok {
		return 0, memory.Errorf(memory.ErrUnimplemented, "the %T driver has no compare-and-swap", s.d)
	}
	if err := s.CheckWrite(id); err != nil {
		return 0, err
	}
	rec, err := s.prepare(ctx, id, rec, s.opt.Clock.Now())
	if err != nil {
		return 0, err
	}
	return sw.Swap(ctx, rec, expect)
}

// Search returns the k records visible to id under q that are nearest to
// vec; see driver.VectorSearcher. q.Limit is ignored. A driver without the
// capability gives memory.ErrUnimplemented.
func (s *Store) Search(ctx context.Context, id memory.Identity, q memory.Query, vec []float32, k int) ([]driver.Match, error) {
	vs, ok := s.d.(driver.VectorSearcher)
	if !ok {
		return nil, memory.Errorf(memory.ErrUnimplemented, "the %T driver has no vector search", s.d)
	}
	dq, err := s.searchQuery(ctx, id, q)
	if err != nil {
		return nil, err
	}
	return vs.Search(ctx, dq, vec, k)
}

// SearchText returns the k records id may read at q's level whose content
// best matches text, as driver.TextSearcher ranks them: by BM25 over the
// records of the identities the level's filter matches, kinds, key and
// expiry applied inside the search. q.Limit is ignored. A driver without
// the capability gives memory.ErrUnimplemented.
func (s *Store) SearchText(ctx context.Context, id memory.Identity, q memory.Query, text string, k int) ([]driver.Match, error) {
	ts, ok := s.d.(driver.TextSearcher)
	if !ok {
		return nil, memory.Errorf(memory.ErrUnimplemented, "the %T driver has no text search", s.d)
	}
	dq, err := s.searchQuery(ctx, id, q)
	if err != nil {
		return nil, err
	}
	return ts.SearchText(ctx, dq, text, k)
}

// searchQuery derives the driver query of a search by id under q: the
// query of Query, without a limit (a search returns its own k).
func (s *Store) searchQuery(ctx context.Context, id memory.Identity, q memory.Query) (driver.Query, error) {
	if err := ctx.Err(); err != nil {
		return driver.Query{}, err
	}
	q.Limit = 0
	return s.Query(id, q)
}

// keyedRow reports whether r is a keyed working-memory row of writer id:
// a document whose identity is id reduced to the fields of the keyed level
// that keeps exactly the fields r's identity has.
func keyedRow(r memory.Record, id memory.Identity) bool {
	if r.Kind != memory.KindDocument {
		return false
	}
	l := memory.KeyedLevel(r.Identity)
	return l != "" && r.Identity == id.Only(l.Keyed())
}

// Query derives the driver query for id reading q.
func (s *Store) Query(id memory.Identity, q memory.Query) (driver.Query, error) {
	f, err := s.Filter(id, q.Level)
	if err != nil {
		return driver.Query{}, err
	}
	if q.Limit < 0 {
		return driver.Query{}, memory.Errorf(memory.ErrInvalidArgument, "negative limit %d", q.Limit)
	}
	return driver.Query{Filter: f, Kinds: q.Kinds, Key: q.Key, Limit: q.Limit}, nil
}

// List returns the records visible to id under q, newest first.
func (s *Store) List(ctx context.Context, id memory.Identity, q memory.Query) ([]memory.Record, error) {
	dq, err := s.Query(id, q)
	if err != nil {
		return nil, err
	}
	return s.d.List(ctx, dq)
}

// Forget erases every record visible to id at level and reports the count.
func (s *Store) Forget(ctx context.Context, id memory.Identity, level memory.Level) (int64, error) {
	return s.Delete(ctx, id, memory.Query{Level: level})
}

// Delete erases the records visible to id under q (Limit is ignored) and
// reports the count.
func (s *Store) Delete(ctx context.Context, id memory.Identity, q memory.Query) (int64, error) {
	q.Limit = 0
	dq, err := s.Query(id, q)
	if err != nil {
		return 0, err
	}
	return s.DeleteQuery(ctx, dq)
}

// DeleteQuery erases the records a derived query selects, for tiers that
// narrow a derived query further (by ids, say). The query's tenant must be
// one the store reaches, and a platform view needs Posture.AllowPlatform.
func (s *Store) DeleteQuery(ctx context.Context, dq driver.Query) (int64, error) {
	if err := s.checkTenant(dq.Filter.Identity.Tenant); err != nil {
		return 0, err
	}
	if s.platform && !s.opt.Posture.AllowPlatform {
		return 0, memory.Errorf(memory.ErrPermissionDenied, "erasing platform data (tenant %q) needs a posture with AllowPlatform", s.opt.SystemTenant)
	}
	n, err := s.d.Delete(ctx, dq)
	if err == nil {
		s.opt.Logger.Debug("memory erased", "match", dq.Filter.Match.String(), "count", n)
	}
	return n, err
}

// Close closes the driver. It is idempotent.
func (s *Store) Close() error { return s.d.Close() }
