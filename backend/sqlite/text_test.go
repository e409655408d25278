//go:build cgo

package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/sqldriver"
	"github.com/agentmem/memory/internal/textcache"
)

// Every text cache of the package's tests is worth a snapshot, however
// small, so that the conformance suite's handles and replicas store and
// start from snapshots as a large store's do. Tests that count the
// snapshots they store set it otherwise.
func init() { textcache.SnapshotMinRecords = 1 }

// The text tests' records are textWho's, created textT0 and later.
var (
	textWho   = memory.Identity{Tenant: "acme", User: "alice", Session: "s1"}
	textT0    = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	textQuery = driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "acme"}}}
)

// textRec returns a fact of textWho, created sec seconds after textT0.
func textRec(id, text string, sec int) memory.Record {
	return memory.Record{ID: id, Kind: memory.KindFact, Identity: textWho, Content: text, Created: textT0.Add(time.Duration(sec) * time.Second)}
}

// parcelIDs returns the ids d's SearchText(parcel) finds in textQuery,
// space-separated.
func parcelIDs(t *testing.T, d *Driver, what string) string {
	t.Helper()
	got, err := d.SearchText(context.Background(), textQuery, "parcel", 10)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	ids := make([]string, len(got))
	for i, m := range got {
		ids[i] = m.Record.ID
	}
	return strings.Join(ids, " ")
}

// TestTextCacheLoads checks when the text cache is loaded: once, by the
// first search; not again for this driver's own appends, replacements,
// swaps and deletions, which it applies or catches up with; and again
// after another handle on the file replaces or deletes a record, which
// this driver cannot know but by the epoch. Every search's result is
// checked too, so a cache that skipped a load would be caught.
func TestTextCacheLoads(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "texts.db")
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	other, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	rec, q := textRec, textQuery
	step := func(what, want string, loads int) {
		t.Helper()
		if s := parcelIDs(t, d, what); s != want {
			t.Errorf("%s: SearchText(parcel) = %q, want %q", what, s, want)
		}
		d.tc.Mu.RLock()
		n := d.tc.Loads
		d.tc.Mu.RUnlock()
		if n != loads {
			t.Errorf("%s: the text cache was loaded %d times, want %d", what, n, loads)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(d.Put(ctx, []memory.Record{rec("a", "the parcel is late", 1)}))
	step("the first search", "a", 1)
	must(d.Put(ctx, []memory.Record{rec("b", "parcel parcel", 2)}))
	step("after an append", "b a", 1)
	must(d.Put(ctx, []memory.Record{rec("b", "green tea", 2)}))
	step("after this driver replaced b", "a", 1)
	_, err = d.Swap(ctx, rec("c", "a parcel again", 3), 0)
	must(err)
	step("after this driver's swap created c", "c a", 1)
	_, err = d.Swap(ctx, rec("c", "no more", 3), 1)
	must(err)
	step("after this driver's swap rewrote c", "a", 1)
	must(d.Put(ctx, []memory.Record{rec("e", "parcel here", 5)}))
	_, err = d.Delete(ctx, driver.Query{Filter: q.Filter, IDs: []string{"a"}})
	must(err)
	step("after this driver deleted a", "e", 1)
	must(other.Put(ctx, []memory.Record{rec("f", "parcel there", 6)}))
	step("after another handle appended f", "f e", 1)
	must(other.Put(ctx, []memory.Record{rec("e", "tea", 5)}))
	step("after another handle replaced e", "f", 2)
	_, err = other.Delete(ctx, driver.Query{Filter: q.Filter, IDs: []string{"f"}})
	must(err)
	step("after another handle deleted f", "", 3)
}

// TestTextCacheRowidReuse checks that a record appended after this driver
// deleted the record of the largest rowid is found: SQLite gives the new
// record that rowid again, at or below the largest rowid the cache read.
func TestTextCacheRowidReuse(t *testing.T) {
	ctx := context.Background()
	d, err := Open(filepath.Join(t.TempDir(), "reuse.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rec, q := textRec, textQuery
	search := func(what, want string) {
		t.Helper()
		if s := parcelIDs(t, d, what); s != want {
			t.Errorf("%s: SearchText(parcel) = %q, want %q", what, s, want)
		}
	}
	if err := d.Put(ctx, []memory.Record{rec("a", "parcel one", 1), rec("b", "parcel two", 2)}); err != nil {
		t.Fatal(err)
	}
	search("the first search", "b a")
	if _, err := d.Delete(ctx, driver.Query{Filter: q.Filter, IDs: []string{"b"}}); err != nil {
		t.Fatal(err)
	}
	search("after deleting the newest row", "a")
	if err := d.Put(ctx, []memory.Record{rec("c", "parcel three", 3)}); err != nil {
		t.Fatal(err)
	}
	search("after appending into the freed rowid", "c a")
}

// snapshotWords are the words of the snapshot tests' texts.
var snapshotWords = strings.Fields("parcel late delivery refund tea green coffee invoice courier warehouse order ship")

// snapshotTexts returns n texts of 1 to 8 snapshotWords.
func snapshotTexts(seed uint64, n int) []string {
	rnd := rand.New(rand.NewPCG(seed, 1))
	out := make([]string, n)
	for i := range out {
		ws := make([]string, 1+rnd.IntN(8))
		for j := range ws {
			ws[j] = snapshotWords[rnd.IntN(len(snapshotWords))]
		}
		out[i] = strings.Join(ws, " ")
	}
	return out
}

// snapshotRecords returns n records of textWho with ids prefix0000 on.
func snapshotRecords(prefix string, n int, seed uint64) []memory.Record {
	recs := make([]memory.Record, n)
	for i, text := range snapshotTexts(seed, n) {
		recs[i] = textRec(fmt.Sprintf("%s%04d", prefix, i), text, i)
	}
	return recs
}

// TestTextSnapshot checks the stored snapshot of the text cache: a new
// handle starts from it when only records were added since, and reads
// every record when records were replaced or deleted since (another
// epoch), or the snapshot is damaged or of another analyzer; in every
// case its rankings equal the reference's.
func TestTextSnapshot(t *testing.T) {
	defer func(n int) { textcache.SnapshotMinRecords = n }(textcache.SnapshotMinRecords)
	textcache.SnapshotMinRecords = 1 << 30 // the test stores its snapshots itself
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "snap.db")
	open := func() *Driver {
		t.Helper()
		d, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		return d
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	q := textQuery
	queries := snapshotTexts(99, 30)
	// fresh opens a new handle, ranks the queries and reports whether its
	// cache was loaded once, from a snapshot (want) or not.
	fresh := func(what string, fromSnapshot bool) {
		t.Helper()
		d := open()
		backendtest.SameTextRankings(t, d, q, queries, 10)
		d.tc.Mu.RLock()
		loads, snaps := d.tc.Loads, d.tc.Snaps
		d.tc.Mu.RUnlock()
		want := 0
		if fromSnapshot {
			want = 1
		}
		if loads != 1 || snaps != want {
			t.Errorf("%s: a new handle loaded its cache %d times, %d of them from a snapshot; want once, %d", what, loads, snaps, want)
		}
		_ = d.Close()
	}
	w := open()
	must(w.Put(ctx, snapshotRecords("a", 300, 1)))
	backendtest.SameTextRankings(t, w, q, queries[:1], 10)
	must(w.storeSnapshot(ctx))
	fresh("after the snapshot", true)

	must(w.Put(ctx, snapshotRecords("b", 50, 2)))
	fresh("after records were added", true)

	// Another handle replaces and deletes: the epoch moves on.
	other := open()
	must(other.Put(ctx, snapshotRecords("a", 20, 3)))
	_, err := other.Delete(ctx, driver.Query{Filter: q.Filter, IDs: []string{"a0100", "a0101", "b0003"}})
	must(err)
	fresh("after another handle replaced and deleted records", false)

	// The writer's own replacement moves its epoch on too; its cache
	// follows, and the snapshot it stores then serves new handles.
	must(w.Put(ctx, snapshotRecords("a", 5, 4)))
	backendtest.SameTextRankings(t, w, q, queries[:1], 10)
	must(w.storeSnapshot(ctx))
	fresh("after the writer stored a snapshot of its current cache", true)

	// A damaged chunk, and a snapshot of another analyzer, are not used.
	_, err = w.w.Exec(`UPDATE memory_text_snapshots SET data = CAST(zeroblob(length(data)) AS BLOB)`)
	must(err)
	fresh("with a damaged snapshot", false)
	// Chunks that do not add up to the description are not decoded.
	for what, damage := range map[string]string{
		"a chunk cut short":  `UPDATE memory_text_snapshots SET data = substr(data, 1, length(data) - 1)`,
		"a chunk missing":    `DELETE FROM memory_text_snapshots WHERE seq = 0`,
		"a length described": `UPDATE memory_settings SET value = json_set(value, '$.bytes', 1 << 40) WHERE name = 'text_snapshot'`,
	} {
		must(w.storeSnapshot(ctx))
		_, err = w.w.Exec(damage)
		must(err)
		fresh("with "+what, false)
	}
	must(w.storeSnapshot(ctx))
	fresh("with the snapshot stored again", true)
	_, err = w.w.Exec(`UPDATE memory_settings SET value = json_set(value, '$.analyzer', '0-other') WHERE name = ?`, sqldriver.SettingTextSnapshot)
	must(err)
	fresh("with a snapshot of another analyzer", false)
}

// TestTextSnapshotInBackground checks that a cache loaded from the
// records stores its snapshot in the background, and that a new handle
// then starts from it.
func TestTextSnapshotInBackground(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bg.db")
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	defer func(n int) { textcache.SnapshotMinRecords = n }(textcache.SnapshotMinRecords)
	textcache.SnapshotMinRecords = 100
	if err := d.Put(ctx, snapshotRecords("a", 200, 5)); err != nil {
		t.Fatal(err)
	}
	q := textQuery
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := d.SearchText(ctx, q, "parcel", 5); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := d.r.Get(&n, `SELECT count(*) FROM memory_settings WHERE name = ?`, sqldriver.SettingTextSnapshot); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no snapshot was stored within 10 s of searches")
		}
		time.Sleep(10 * time.Millisecond)
	}
	nd, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer nd.Close()
	backendtest.SameTextRankings(t, nd, q, snapshotTexts(7, 10), 10)
	if nd.tc.Snaps != 1 {
		t.Errorf("a new handle loaded %d snapshots, want 1", nd.tc.Snaps)
	}
}
