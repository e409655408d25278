package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/postgres"
	"github.com/agentmem/memory/internal/sqldriver"
	"github.com/agentmem/memory/internal/textcache"
)

var textT0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Every text cache of the package's tests is worth a snapshot, however
// small, so that the conformance suite's handles and replicas store and
// start from snapshots as a large store's do; tests that count loads turn
// that off (noSnapshots).
func init() { textcache.SnapshotMinRecords = 1 }

// noSnapshots keeps text caches from storing snapshots in the background
// while t runs.
func noSnapshots(t *testing.T) {
	n := textcache.SnapshotMinRecords
	textcache.SnapshotMinRecords = 1 << 30
	t.Cleanup(func() { textcache.SnapshotMinRecords = n })
}

// textWho writes the records of the text tests.
var textWho = memory.Identity{Tenant: "acme", User: "alice", Session: "s1"}

func textRec(id, text string, sec int) memory.Record {
	return memory.Record{ID: id, Kind: memory.KindFact, Identity: textWho, Content: text, Created: textT0.Add(time.Duration(sec) * time.Second)}
}

// textWords are the words of the random texts of the text tests.
var textWords = strings.Fields("parcel late delivery refund tea green coffee invoice courier warehouse order ship")

// randomText returns 1 to 8 textWords.
func randomText(rnd *rand.Rand) string {
	ws := make([]string, 1+rnd.IntN(8))
	for i := range ws {
		ws[i] = textWords[rnd.IntN(len(textWords))]
	}
	return strings.Join(ws, " ")
}

// openOn opens another driver on dsn, closed when t ends.
func openOn(t *testing.T, dsn string) *postgres.Driver {
	t.Helper()
	d, err := postgres.Open(dsn, postgres.Options{})
	if err != nil {
		t.Fatalf("postgres.Open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// searchIDs returns the ids SearchText(text) finds in textWho's tenant,
// space-separated.
func searchIDs(t *testing.T, d *postgres.Driver, text string) string {
	t.Helper()
	got, err := d.SearchText(context.Background(), tenantQuery(textWho.Tenant), text, 20)
	if err != nil {
		t.Fatalf("SearchText(%q): %v", text, err)
	}
	return strings.Join(matchIDs(got), " ")
}

// rawInsert is an insert of one record of textWho by hand, in a
// transaction the test controls.
const rawInsert = `INSERT INTO memory_records (id, kind, tenant_id, user_id, agent_id, instance_id, squad_id, session_id,
	created, expires, tokens, label, rkey, metadata, content)
	VALUES ($1, 'fact', 'acme', 'alice', '', '', '', 's1', $2, NULL, 1, '', '', NULL, $3)
	ON CONFLICT (tenant_id, id) DO UPDATE SET content = excluded.content, version = memory_records.version + 1`

// TestTextInFlight checks (every text holding "parcel" holds one more
// word, so they score alike and rank newest first) the catch-up across transactions that commit
// out of the order of their ids: a change whose transaction took its id
// before others committed, and was still running when a search read
// those others, is found by the next search once it commits — an insert,
// a replacement and a deletion alike; and of two replacements of one
// record, the one committed last wins, though its transaction's id is
// the smaller.
func TestTextInFlight(t *testing.T) {
	noSnapshots(t)
	ctx := context.Background()
	d, dsn := openFresh(t, postgres.Options{})
	w := openOn(t, dsn)
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	expect := func(what, text, want string) {
		t.Helper()
		if got := searchIDs(t, d, text); got != want {
			t.Errorf("%s: SearchText(%s) = %q, want %q", what, text, got, want)
		}
	}
	must(w.Put(ctx, []memory.Record{textRec("old", "parcel stored", 1), textRec("gone", "parcel delete", 2), textRec("twice", "tea", 3)}))
	expect("the first search", "parcel", "gone old")

	// slow takes its transaction id first and commits last.
	slow, err := db.BeginTxx(ctx, nil)
	must(err)
	defer slow.Rollback()
	_, err = slow.ExecContext(ctx, rawInsert, "early", textT0.Add(10*time.Second).UnixNano(), "parcel early")
	must(err)
	_, err = slow.ExecContext(ctx, `DELETE FROM memory_records WHERE tenant_id = 'acme' AND id = 'gone'`)
	must(err)
	must(w.Put(ctx, []memory.Record{textRec("late", "parcel later", 11)}))
	expect("while the early transaction runs", "parcel", "late gone old")
	_, err = slow.ExecContext(ctx, rawInsert, "old", textT0.Add(time.Second).UnixNano(), "coffee now")
	must(err)
	expect("while the early transaction runs, having replaced a record", "parcel", "late gone old")
	must(slow.Commit())
	expect("after the early transaction committed", "parcel", "late early")

	// first takes its id before second, which replaces "twice" and
	// commits; first then replaces it too and commits last.
	first, err := db.BeginTxx(ctx, nil)
	must(err)
	defer first.Rollback()
	_, err = first.ExecContext(ctx, rawInsert, "unrelated", textT0.UnixNano(), "green")
	must(err)
	second, err := db.BeginTxx(ctx, nil)
	must(err)
	defer second.Rollback()
	_, err = second.ExecContext(ctx, rawInsert, "twice", textT0.Add(3*time.Second).UnixNano(), "parcel second")
	must(err)
	must(second.Commit())
	expect("after the second transaction replaced twice", "parcel", "late early twice")
	_, err = first.ExecContext(ctx, rawInsert, "twice", textT0.Add(3*time.Second).UnixNano(), "tea by the first")
	must(err)
	must(first.Commit())
	expect("after the first transaction, of the smaller id, replaced twice last", "parcel", "late early")
	expect("after the first transaction, of the smaller id, replaced twice last", "tea", "twice")
	if n := d.TextLoadsForTest(); n != 1 {
		t.Errorf("the text cache was loaded %d times, want once: every change above was caught up", n)
	}
}

// writeConcurrently starts four goroutines writing through writers in
// turn, each with a random source seeded from seed, until stop is
// called: deletions of records of textWho's tenant and batches of
// record(rnd, id), among 200 ids. stop waits for them and fails t if
// one failed other than by memory.ErrConflict.
func writeConcurrently(t *testing.T, writers []*postgres.Driver, seed uint64, record func(rnd *rand.Rand, id string) memory.Record) (stop func()) {
	t.Helper()
	ctx := context.Background()
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(g), seed))
			w := writers[g%len(writers)]
			for {
				select {
				case <-done:
					return
				default:
				}
				var err error
				switch rnd.IntN(6) {
				case 0:
					_, err = w.Delete(ctx, driver.Query{Filter: tenantQuery(textWho.Tenant).Filter, IDs: []string{fmt.Sprintf("r%03d", rnd.IntN(200))}})
				default:
					batch := make([]memory.Record, 1+rnd.IntN(8))
					for j := range batch {
						batch[j] = record(rnd, fmt.Sprintf("r%03d", rnd.IntN(200)))
					}
					err = w.Put(ctx, batch)
				}
				if err != nil && !errors.Is(err, memory.ErrConflict) {
					errs <- err
					return
				}
			}
		}()
	}
	return func() {
		t.Helper()
		close(done)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("a writer failed: %v", err)
		}
	}
}

// TestTextConcurrentWriters races writers on two handles — new records,
// replacements, deletions, in batches of one to eight — against searches
// through a third, then checks that the searcher's rankings equal the
// lexical engine's reference over what is stored, for many queries: no
// change was lost in the race, however the writers' transactions
// interleaved.
func TestTextConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	searcher, dsn := openFresh(t, postgres.Options{})
	writers := []*postgres.Driver{openOn(t, dsn), openOn(t, dsn)}
	text := randomText
	stop := writeConcurrently(t, writers, 7, func(rnd *rand.Rand, id string) memory.Record {
		return textRec(id, text(rnd), rnd.IntN(100))
	})
	rnd := rand.New(rand.NewPCG(99, 7))
	deadline := time.Now().Add(3 * time.Second)
	searches := 0
	for time.Now().Before(deadline) {
		if _, err := searcher.SearchText(ctx, tenantQuery(textWho.Tenant), text(rnd), 10); err != nil {
			t.Fatalf("SearchText during the writes: %v", err)
		}
		searches++
	}
	stop()
	stored, err := searcher.List(ctx, tenantQuery(textWho.Tenant))
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) == 0 {
		t.Fatal("the writers left nothing stored")
	}
	t.Logf("%d searches during the writes; %d records stored", searches, len(stored))
	queries := make([]string, 40)
	for i := range queries {
		queries[i] = text(rnd)
	}
	backendtest.SameTextRankings(t, searcher, tenantQuery(textWho.Tenant), queries, 10)
}

// TestTextLogPruned checks pruning: a cache that caught up before the log
// was pruned goes on catching up, and one that had not loads every text
// again, finding what changed meanwhile.
func TestTextLogPruned(t *testing.T) {
	noSnapshots(t)
	ctx := context.Background()
	w, dsn := openFresh(t, postgres.Options{})
	current, lagging := openOn(t, dsn), openOn(t, dsn)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.Put(ctx, []memory.Record{textRec("a", "parcel", 1), textRec("b", "parcel parcel", 2)}))
	for _, d := range []*postgres.Driver{current, lagging} {
		if got := searchIDs(t, d, "parcel"); got != "b a" {
			t.Fatalf("the first search = %q, want \"b a\"", got)
		}
	}
	must(w.Put(ctx, []memory.Record{textRec("b", "tea", 2), textRec("c", "parcel", 3)}))
	if got := searchIDs(t, current, "parcel"); got != "c a" {
		t.Fatalf("the caught-up cache finds %q, want \"c a\"", got)
	}
	must(w.PruneTextLogForTest(ctx))
	var left int
	must(w.DB().Get(&left, `SELECT count(*) FROM memory_text_changes`))
	if left != 0 {
		t.Errorf("after pruning, the log holds %d changes, want none", left)
	}
	must(w.Put(ctx, []memory.Record{textRec("d", "parcel", 4)}))
	if got := searchIDs(t, current, "parcel"); got != "d c a" {
		t.Errorf("the cache current before the prune finds %q, want \"d c a\"", got)
	}
	if got := searchIDs(t, lagging, "parcel"); got != "d c a" {
		t.Errorf("the cache that lagged behind the prune finds %q, want \"d c a\"", got)
	}
	if n := current.TextLoadsForTest(); n != 1 {
		t.Errorf("the cache current before the prune was loaded %d times, want once", n)
	}
	if n := lagging.TextLoadsForTest(); n != 2 {
		t.Errorf("the cache that lagged behind the prune was loaded %d times, want twice", n)
	}
}

// TestTextLogPrunedInBackground checks that writes prune the log in the
// background, and that closing the driver waits for it.
func TestTextLogPrunedInBackground(t *testing.T) {
	ctx := context.Background()
	d, _ := openFresh(t, postgres.Options{})
	d.SetTextLogPruningForTest(0, 0)
	for i := range 20 {
		if err := d.Put(ctx, []memory.Record{textRec(fmt.Sprintf("r%d", i), "parcel", i)}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		// Every write made the next prune possible; one more runs after
		// the last write's transaction has finished.
		if err := d.Put(ctx, []memory.Record{textRec("poke", "tea", 0)}); err != nil {
			t.Fatal(err)
		}
		var left int
		if err := d.DB().Get(&left, `SELECT count(*) FROM memory_text_changes`); err != nil {
			t.Fatal(err)
		}
		if left <= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log still holds %d changes after 10 s of writes that prune it", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestTextTruncate checks that a TRUNCATE of the records, which no driver
// call makes, makes every cache load again.
func TestTextTruncate(t *testing.T) {
	noSnapshots(t)
	ctx := context.Background()
	d, dsn := openFresh(t, postgres.Options{})
	w := openOn(t, dsn)
	if err := w.Put(ctx, []memory.Record{textRec("a", "parcel", 1)}); err != nil {
		t.Fatal(err)
	}
	if got := searchIDs(t, d, "parcel"); got != "a" {
		t.Fatalf("the first search = %q, want \"a\"", got)
	}
	if _, err := w.DB().Exec(`TRUNCATE memory_records`); err != nil {
		t.Fatal(err)
	}
	if err := w.Put(ctx, []memory.Record{textRec("b", "tea", 2)}); err != nil {
		t.Fatal(err)
	}
	if got := searchIDs(t, d, "parcel"); got != "" {
		t.Errorf("after TRUNCATE, SearchText(parcel) = %q, want nothing", got)
	}
	if got := searchIDs(t, d, "tea"); got != "b" {
		t.Errorf("after TRUNCATE, SearchText(tea) = %q, want \"b\"", got)
	}
	if n := d.TextLoadsForTest(); n != 2 {
		t.Errorf("the text cache was loaded %d times, want twice", n)
	}
}

// TestTextMigrateFromVersion4 opens a database as the version 4 driver
// left it, holding records written without the change log: the first
// text search finds them, and what another handle changes after the
// migration is caught up with.
func TestTextMigrateFromVersion4(t *testing.T) {
	noSnapshots(t)
	ctx := context.Background()
	dsn := freshDB(t)
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	stmts := append([]string{postgres.CreateSchemaTableForTest}, postgres.MigrationsForTest[:4]...)
	stmts = append(stmts, "INSERT INTO memory_schema (id, version) VALUES (1, 4)")
	for _, stmt := range stmts {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	for _, r := range []struct{ id, text string }{{"v4-a", "parcel stored"}, {"v4-b", "parcel kept"}} {
		if _, err := db.Exec(rawInsert, r.id, textT0.UnixNano(), r.text); err != nil {
			t.Fatal(err)
		}
	}
	_ = db.Close()
	d, w := openOn(t, dsn), openOn(t, dsn)
	var version int
	if err := d.DB().Get(&version, "SELECT version FROM memory_schema"); err != nil || version != postgres.SchemaVersion {
		t.Fatalf("schema version after migration = %d, %v; want %d", version, err, postgres.SchemaVersion)
	}
	if got := searchIDs(t, d, "parcel"); got != "v4-b v4-a" {
		t.Errorf("the first search after the migration = %q, want \"v4-b v4-a\"", got)
	}
	if err := w.Put(ctx, []memory.Record{textRec("v4-a", "tea", 0), textRec("v5", "parcel added", 9)}); err != nil {
		t.Fatal(err)
	}
	if got := searchIDs(t, d, "parcel"); got != "v5 v4-b" {
		t.Errorf("after another handle replaced v4-a and added v5, SearchText(parcel) = %q, want \"v5 v4-b\"", got)
	}
	if n := d.TextLoadsForTest(); n != 1 {
		t.Errorf("the text cache was loaded %d times, want once", n)
	}
}

// TestTextSnapshot checks the stored snapshot of the text cache: a new
// driver starts from it and catches up with the change log, whatever
// other handles replaced, deleted or added since, and reads every record
// when the log was pruned past it, or the snapshot is damaged or of
// another analyzer; in every case its rankings equal the reference's.
func TestTextSnapshot(t *testing.T) {
	noSnapshots(t) // the test stores its snapshots itself
	ctx := context.Background()
	w, dsn := openFresh(t, postgres.Options{})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	q := tenantQuery(textWho.Tenant)
	rnd := rand.New(rand.NewPCG(5, 6))
	text := func() string { return randomText(rnd) }
	batch := func(prefix string, n int) []memory.Record {
		recs := make([]memory.Record, n)
		for i := range recs {
			recs[i] = textRec(fmt.Sprintf("%s%04d", prefix, i), text(), i)
		}
		return recs
	}
	queries := make([]string, 30)
	for i := range queries {
		queries[i] = text()
	}
	// fresh opens a new driver, ranks the queries and checks how it
	// loaded its cache: loads times, snaps of them from the snapshot.
	fresh := func(what string, loads, snaps int) {
		t.Helper()
		d := openOn(t, dsn)
		backendtest.SameTextRankings(t, d, q, queries, 10)
		if l, s := d.TextLoadsForTest(), d.TextSnapshotLoadsForTest(); l != loads || s != snaps {
			t.Errorf("%s: a new driver loaded its cache %d times, %d of them from the snapshot; want %d and %d", what, l, s, loads, snaps)
		}
		_ = d.Close()
	}
	must(w.Put(ctx, batch("a", 300)))
	backendtest.SameTextRankings(t, w, q, queries[:1], 10)
	must(w.StoreTextSnapshotForTest(ctx))
	fresh("after the snapshot", 1, 1)

	other := openOn(t, dsn)
	must(other.Put(ctx, batch("a", 20)))
	must(other.Put(ctx, batch("b", 30)))
	_, err := other.Delete(ctx, driver.Query{Filter: q.Filter, IDs: []string{"a0100", "a0101", "b0003"}})
	must(err)
	fresh("after another handle replaced, added and deleted records", 1, 1)

	must(w.PruneTextLogForTest(ctx))
	fresh("after the log was pruned past the snapshot", 2, 1)

	backendtest.SameTextRankings(t, w, q, queries[:1], 10)
	must(w.StoreTextSnapshotForTest(ctx))
	fresh("after the snapshot was stored again", 1, 1)
	_, err = w.DB().Exec(`UPDATE memory_text_snapshots SET data = decode(repeat('00', length(data)), 'hex')`)
	must(err)
	fresh("with a damaged snapshot", 1, 0)
	must(w.StoreTextSnapshotForTest(ctx))
	_, err = w.DB().Exec(`UPDATE memory_settings SET value = jsonb_set(value::jsonb, '{analyzer}', '"0-other"')::text WHERE name = $1`, sqldriver.SettingTextSnapshot)
	must(err)
	fresh("with a snapshot of another analyzer", 1, 0)
}
