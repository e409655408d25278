package sqldriver

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/textcache"
)

// TextCache is what a SQL driver keeps for text search: the records'
// analysed texts (textcache.Cache), the lock that guards them, and how
// far they are from the stored snapshot. Each driver adds what its cache
// is current at: SQLite an epoch and a rowid, PostgreSQL a pg_snapshot.
type TextCache struct {
	Mu sync.RWMutex
	// C is the texts; nil until loaded.
	C *textcache.Cache
	// Meter says when a snapshot of C is due.
	Meter textcache.Meter
	// Loads counts the times C was loaded, Snaps those of them that read
	// a stored snapshot, for tests.
	Loads, Snaps int
}

// TextSearch is how a driver's SearchText runs; see SQL.SearchText.
type TextSearch struct {
	Gate  *Gate
	Clock memory.Clock
	Cache *TextCache
	// Within runs search with Cache.Mu held shared on Cache brought up
	// to date, unless it fails; search may run more than once, and its
	// last run is the one on the cache up to date.
	Within func(ctx context.Context, search func()) error
	// After, when not nil, starts the driver's background work once a
	// search has ranked.
	After func()
	// DB reads the winners, with Columns, the select list ScanRecord
	// reads.
	DB      RowsQueryer
	Columns string
}

// SearchText is the driver contract's SearchText over a driver's text
// cache: RankText, then the winners read from the database
// (FetchMatches).
func (s *SQL) SearchText(ctx context.Context, ts *TextSearch, q driver.Query, text string, k int) ([]driver.Match, error) {
	ranked, err := s.RankText(ctx, ts, q, text, k)
	if err != nil || len(ranked) == 0 {
		return nil, err
	}
	found := make([]driver.Match, len(ranked))
	for i, m := range ranked {
		found[i] = driver.Match{Record: memory.Record{ID: m.Ref.ID}, Score: m.Score, WriterScore: m.WriterScore}
	}
	return s.FetchMatches(ctx, ts.DB, ts.Columns, q.Filter.Identity.Tenant, found)
}

// RankText is the driver contract's RankText (driver.TextRanker) over a
// driver's text cache: it checks the arguments, enters the gate, reads
// the clock, has the cache brought up to date, ranks the texts of the
// writers q's filter matches (textcache.Cache.Search) and starts the
// driver's background work.
func (s *SQL) RankText(ctx context.Context, ts *TextSearch, q driver.Query, text string, k int) ([]driver.RefMatch, error) {
	var found []driver.RefMatch
	err := s.inCurrentText(ctx, ts, driver.CheckSearchText(q, text, k), func(c *textcache.Cache, now int64) (err error) {
		found, err = c.Search(q, text, k, now)
		return err
	})
	return found, err
}

// WriterRefs is the driver contract's WriterRefs (driver.TextRanker)
// over a driver's text cache, as RankText runs.
func (s *SQL) WriterRefs(ctx context.Context, ts *TextSearch, q driver.Query, writers []memory.Identity) ([][]driver.Ref, error) {
	var refs [][]driver.Ref
	err := s.inCurrentText(ctx, ts, driver.CheckWriterRefs(q, writers), func(c *textcache.Cache, now int64) error {
		refs = c.WriterRefs(q, writers, now)
		return nil
	})
	return refs, err
}

// inCurrentText runs read on ts's cache brought up to date, with the
// clock's reading, once the gate admitted the call (invalid is the
// call's argument check), then starts the driver's background work.
func (s *SQL) inCurrentText(ctx context.Context, ts *TextSearch, invalid error, read func(*textcache.Cache, int64) error) error {
	if err := ts.Gate.Enter(ctx, s.d.Name, invalid); err != nil {
		return err
	}
	defer ts.Gate.Leave()
	now, err := ts.Clock.Nanos()
	if err != nil {
		return err
	}
	if werr := ts.Within(ctx, func() { err = read(ts.Cache.C, now) }); werr != nil {
		return werr
	}
	if ts.After != nil {
		ts.After()
	}
	return err
}

// LoadTextSnapshot returns, on q inside a read transaction, the cache the
// stored text snapshot holds and its description, when it was analysed
// as this code analyses and use accepts its description; nil when there
// is no such snapshot, or it cannot be read or decoded, which is logged
// to log. The snapshot is decoded as its chunks arrive.
func (s *SQL) LoadTextSnapshot(ctx context.Context, q Queryer, use func(Snapshot) bool, log *slog.Logger) (*textcache.Cache, Snapshot) {
	c, hdr, err := readSnapshot(ctx, s, q, textSnapshots, use, textcache.DecodeStream)
	if err != nil {
		if ctx.Err() == nil {
			log.Warn(s.d.Name+": the stored text snapshot cannot be read; reading every record", "err", err)
		}
		return nil, hdr
	}
	return c, hdr
}

// StoreTextSnapshot encodes tc's texts, unless they are unloaded, tagged
// with what tag returns (called with tc.Mu held shared), stores them as
// WriteTextSnapshot does, and tells tc.Meter.
func (s *SQL) StoreTextSnapshot(ctx context.Context, tc *TextCache, tag func() string, inTx func(context.Context, func(Queryer) error) error) error {
	tc.Mu.RLock()
	if tc.C == nil {
		tc.Mu.RUnlock()
		return nil
	}
	t, mark := tag(), tc.Meter.Mark()
	data := tc.C.Encode(nil)
	tc.Mu.RUnlock()
	at := time.Now()
	if err := s.WriteTextSnapshot(ctx, inTx, t, data); err != nil {
		return err
	}
	tc.Mu.Lock()
	tc.Meter.Stored(mark, at)
	tc.Mu.Unlock()
	return nil
}

// WriteTextSnapshot stores data, a snapshot of a text cache current at
// tag, as the store's text snapshot, writing through inTx, which runs fn
// in a write transaction of the driver's and commits it when fn returns
// nil. A write that another completes first gives up, returning nil.
// Errors are classified.
func (s *SQL) WriteTextSnapshot(ctx context.Context, inTx func(ctx context.Context, fn func(q Queryer) error) error, tag string, data []byte) error {
	return s.writeSnapshot(ctx, textSnapshots, inTx, tag, data)
}

// MaybeStoreTextSnapshot starts StoreTextSnapshot as one of chores when
// tc's texts are loaded and a snapshot of them is due (textcache.Meter),
// logging its failure to log.
func (s *SQL) MaybeStoreTextSnapshot(chores *Chores, tc *TextCache, tag func() string, inTx func(context.Context, func(Queryer) error) error, log *slog.Logger) {
	tc.Mu.RLock()
	due := tc.C != nil && tc.Meter.Due(time.Now(), tc.C.Len())
	tc.Mu.RUnlock()
	if !due {
		return
	}
	chores.Start("text snapshot", func(ctx context.Context) {
		if err := s.StoreTextSnapshot(ctx, tc, tag, inTx); err != nil && ctx.Err() == nil {
			log.Warn(s.d.Name+": write the text snapshot", "err", err)
		}
	})
}
