//go:build cgo

package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/sqldriver"
	"github.com/agentmem/memory/internal/textcache"
)

// vectorRecords returns n records of textWho with ids prefix0000 on,
// each with a random vector of 8 dimensions.
func vectorRecords(prefix string, n int, seed uint64) []memory.Record {
	rnd := rand.New(rand.NewPCG(seed, 2))
	recs := snapshotRecords(prefix, n, seed)
	for i := range recs {
		v := make([]float32, 8)
		for j := range v {
			v[j] = float32(rnd.IntN(7) - 3)
		}
		v[rnd.IntN(8)] += 0.5
		recs[i].Vector = v
		if i%3 == 0 {
			recs[i].Metadata = map[string]string{memory.SpeakerKey: "Caroline"}
		}
	}
	return recs
}

// vectorRankings returns d's RankVector of textQuery for each of queries.
func vectorRankings(t *testing.T, d *Driver, queries [][]float32) [][]driver.RefMatch {
	t.Helper()
	out := make([][]driver.RefMatch, len(queries))
	for i, q := range queries {
		got, err := d.RankVector(context.Background(), textQuery, q, 20)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = got
	}
	return out
}

// TestVectorSnapshot checks the stored snapshot of the vector copy: a new
// handle starts from it while no vector changed since, and reads every
// vector when one did (another epoch), by this handle or another, or the
// snapshot is damaged; in every case its rankings equal those of a
// handle that reads every vector.
func TestVectorSnapshot(t *testing.T) {
	defer func(n int) { textcache.SnapshotMinRecords = n }(textcache.SnapshotMinRecords)
	textcache.SnapshotMinRecords = 1 << 30 // the test stores its snapshots itself
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "vsnap.db")
	open := func(opt Options) *Driver {
		t.Helper()
		d, err := Open(path, opt)
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
	queries := make([][]float32, 20)
	for i, r := range vectorRecords("q", len(queries), 77) {
		queries[i] = r.Vector
	}
	// fresh opens a new handle, ranks the queries, checks them against a
	// handle reading every vector, and checks that its copy was loaded
	// once, from a snapshot (want) or not.
	fresh := func(what string, fromSnapshot bool) {
		t.Helper()
		ref := open(Options{NoVectorSnapshots: true})
		want := vectorRankings(t, ref, queries)
		_ = ref.Close()
		if ref.vc.snaps != 0 {
			t.Fatalf("%s: a handle without vector snapshots read one", what)
		}
		d := open(Options{})
		got := vectorRankings(t, d, queries)
		for i := range got {
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("%s: query %d ranks\n %v\nwant %v", what, i, got[i], want[i])
			}
		}
		d.vc.mu.RLock()
		loads, snaps := d.vc.loads, d.vc.snaps
		d.vc.mu.RUnlock()
		wantSnaps := 0
		if fromSnapshot {
			wantSnaps = 1
		}
		if loads != 1 || snaps != wantSnaps {
			t.Errorf("%s: a new handle loaded its vectors %d times, %d of them from a snapshot; want once, %d", what, loads, snaps, wantSnaps)
		}
		_ = d.Close()
	}
	w := open(Options{})
	must(w.Put(ctx, vectorRecords("a", 300, 1)))
	vectorRankings(t, w, queries[:1])
	must(w.storeVectorSnapshot(ctx))
	fresh("after the snapshot", true)

	// A record added without a vector changes no vector.
	must(w.Put(ctx, snapshotRecords("plain", 5, 9)))
	fresh("after records without vectors were added", true)

	must(w.Put(ctx, vectorRecords("b", 50, 2)))
	fresh("after vectors were added", false)
	vectorRankings(t, w, queries[:1])
	must(w.storeVectorSnapshot(ctx))
	fresh("after the writer stored a snapshot of its current copy", true)

	// Another handle replaces and deletes: the epoch moves on.
	other := open(Options{})
	must(other.Put(ctx, vectorRecords("a", 20, 3)))
	_, err := other.Delete(ctx, driver.Query{Filter: textQuery.Filter, IDs: []string{"a0100", "a0101", "b0003"}})
	must(err)
	fresh("after another handle replaced and deleted vectors", false)

	// The writer's copy follows (it loads again), and its snapshot then
	// serves new handles.
	vectorRankings(t, w, queries[:1])
	must(w.storeVectorSnapshot(ctx))
	fresh("after the writer stored a snapshot again", true)

	// Damaged snapshots are not used.
	for what, damage := range map[string]string{
		"a damaged chunk":    `UPDATE memory_vector_snapshots SET data = CAST(zeroblob(length(data)) AS BLOB)`,
		"a chunk cut short":  `UPDATE memory_vector_snapshots SET data = substr(data, 1, length(data) - 1)`,
		"a chunk missing":    `DELETE FROM memory_vector_snapshots WHERE seq = 0`,
		"a length described": `UPDATE memory_settings SET value = json_set(value, '$.bytes', 1 << 40) WHERE name = 'vector_snapshot'`,
		"a checksum":         `UPDATE memory_settings SET value = json_set(value, '$.crc32c', 1) WHERE name = 'vector_snapshot'`,
	} {
		must(w.storeVectorSnapshot(ctx))
		_, err = w.w.Exec(damage)
		must(err)
		fresh("with "+what, false)
	}
	must(w.storeVectorSnapshot(ctx))
	fresh("with the snapshot stored again", true)

	// The text snapshot and the vector snapshot keep their chunks apart.
	must(w.storeSnapshot(ctx))
	fresh("after a text snapshot was stored", true)
}

// TestVectorSnapshotInBackground checks that a copy loaded from the
// records stores its snapshot in the background after a search, that a
// new handle then starts from it, and that a handle with
// NoVectorSnapshots stores none.
func TestVectorSnapshotInBackground(t *testing.T) {
	ctx := context.Background()
	defer func(n int) { textcache.SnapshotMinRecords = n }(textcache.SnapshotMinRecords)
	textcache.SnapshotMinRecords = 100
	stored := func(d *Driver) bool {
		t.Helper()
		var n int
		if err := d.r.Get(&n, `SELECT count(*) FROM memory_settings WHERE name = ?`, sqldriver.SettingVectorSnapshot); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	for _, off := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("bg-%v.db", off))
		d, err := Open(path, Options{NoVectorSnapshots: off})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		recs := vectorRecords("a", 200, 5)
		if err := d.Put(ctx, recs); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		if off {
			deadline = time.Now().Add(time.Second)
		}
		for !stored(d) && time.Now().Before(deadline) {
			if _, err := d.RankVector(ctx, textQuery, recs[0].Vector, 5); err != nil {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if off {
			if stored(d) {
				t.Fatal("a handle with NoVectorSnapshots stored a vector snapshot")
			}
			continue
		}
		if !stored(d) {
			t.Fatal("no vector snapshot was stored within 10 s of searches")
		}
		nd, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer nd.Close()
		if _, err := nd.RankVector(ctx, textQuery, recs[0].Vector, 5); err != nil {
			t.Fatal(err)
		}
		if nd.vc.snaps != 1 {
			t.Errorf("a new handle loaded %d vector snapshots, want 1", nd.vc.snaps)
		}
	}
}

// TestVectorSnapshotPolicy checks when a copy that changed since its
// snapshot stores another: not for a few changed vectors, which would
// rewrite every vector for each, but once an eighth of them changed.
func TestVectorSnapshotPolicy(t *testing.T) {
	ctx := context.Background()
	defer func(r, c int, i time.Duration) {
		textcache.SnapshotMinRecords, textcache.SnapshotMinChanges, textcache.SnapshotMinInterval = r, c, i
	}(textcache.SnapshotMinRecords, textcache.SnapshotMinChanges, textcache.SnapshotMinInterval)
	textcache.SnapshotMinRecords, textcache.SnapshotMinChanges, textcache.SnapshotMinInterval = 1, 1, 0
	d, err := Open(filepath.Join(t.TempDir(), "policy.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	generation := func() string {
		t.Helper()
		var v string
		if err := d.r.Get(&v, `SELECT coalesce((SELECT json_extract(value, '$.generation') FROM memory_settings WHERE name = ?), '')`, sqldriver.SettingVectorSnapshot); err != nil {
			t.Fatal(err)
		}
		return v
	}
	// search searches, and waits for the snapshot it may have started.
	search := func() {
		t.Helper()
		if _, err := d.RankVector(ctx, textQuery, queriesOf(1)[0], 5); err != nil {
			t.Fatal(err)
		}
		d.chores.Wait()
	}
	if err := d.Put(ctx, vectorRecords("a", 400, 1)); err != nil {
		t.Fatal(err)
	}
	search()
	first := generation()
	if first == "" {
		t.Fatal("a copy loaded from the records stored no snapshot")
	}
	if err := d.Put(ctx, vectorRecords("a", 10, 2)); err != nil { // 10 of 400 replaced
		t.Fatal(err)
	}
	search()
	if g := generation(); g != first {
		t.Fatal("10 changed vectors of 400 stored the snapshot again")
	}
	if err := d.Put(ctx, vectorRecords("b", 60, 3)); err != nil { // 70 of 460 changed since
		t.Fatal(err)
	}
	search()
	if g := generation(); g == first {
		t.Fatal("an eighth of the vectors changed and the snapshot was not stored again")
	}
}

// queriesOf returns n query vectors.
func queriesOf(n int) [][]float32 {
	out := make([][]float32, n)
	for i, r := range vectorRecords("q", n, 77) {
		out[i] = r.Vector
	}
	return out
}

// TestVectorSnapshotLarge checks that a snapshot of several chunks
// (sqldriver.SnapshotChunkBytes each, each written in a transaction of
// its own) is read back whole by a new handle.
func TestVectorSnapshotLarge(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "large.db")
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rnd := rand.New(rand.NewPCG(8, 9))
	recs := snapshotRecords("big", 600, 4)
	for i := range recs {
		recs[i].Vector = make([]float32, 512)
		for j := range recs[i].Vector {
			recs[i].Vector[j] = rnd.Float32() - 0.5
		}
	}
	if err := d.Put(ctx, recs); err != nil {
		t.Fatal(err)
	}
	want, err := d.RankVector(ctx, textQuery, recs[3].Vector, 50)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.storeVectorSnapshot(ctx); err != nil {
		t.Fatal(err)
	}
	// The chunks of the snapshot the header names: a snapshot written in
	// the background beside it may have chunks of its own in the table.
	var chunks, largest int
	if err := d.r.QueryRow(`SELECT count(*), max(length(data)) FROM memory_vector_snapshots
		WHERE generation = (SELECT value ->> '$.generation' FROM memory_settings WHERE name = ?)`,
		sqldriver.SettingVectorSnapshot).Scan(&chunks, &largest); err != nil {
		t.Fatal(err)
	}
	if chunks < 2 || largest != sqldriver.SnapshotChunkBytes {
		t.Fatalf("%d chunks of at most %d bytes: not the several full chunks the test needs", chunks, largest)
	}
	nd, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer nd.Close()
	before := blobReads.Load()
	got, err := nd.RankVector(ctx, textQuery, recs[3].Vector, 50)
	if err != nil {
		t.Fatal(err)
	}
	if nd.vc.snaps != 1 || !slices.Equal(got, want) {
		t.Fatalf("a new handle read %d snapshots and ranks otherwise", nd.vc.snaps)
	}
	// The chunks were read in place (blobs.go), not through database/sql.
	if read := blobReads.Load() - before; read < int64(chunks) {
		t.Errorf("%d of the snapshot's %d chunks were read in place", read, chunks)
	}
}

// TestOvertakenSnapshotLeavesNoChunks checks that a snapshot write
// another completes first, between two of its chunks, drops the chunks
// it wrote after the other's write dropped the earlier ones: the table
// holds the stored snapshot's chunks only.
func TestOvertakenSnapshotLeavesNoChunks(t *testing.T) {
	ctx := context.Background()
	d, err := Open(filepath.Join(t.TempDir(), "overtaken.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	mine := make([]byte, 2*sqldriver.SnapshotChunkBytes+10) // three chunks
	writes := 0
	overtaken := func(ctx context.Context, fn func(sqldriver.Queryer) error) error {
		if writes++; writes == 2 { // after the first chunk, another snapshot whole
			if err := sq.WriteVectorSnapshot(ctx, d.inTx, "other", []byte("other")); err != nil {
				return err
			}
		}
		return d.inTx(ctx, fn)
	}
	if err := sq.WriteVectorSnapshot(ctx, overtaken, "mine", mine); err != nil {
		t.Fatal(err)
	}
	if writes != 4 {
		t.Fatalf("%d transactions, want 3 chunks and the last check", writes)
	}
	var tag string
	var stray int
	if err := d.r.QueryRow(`SELECT value ->> '$.tag', (SELECT count(*) FROM memory_vector_snapshots
		WHERE generation <> (SELECT value ->> '$.generation' FROM memory_settings WHERE name = ?))
		FROM memory_settings WHERE name = ?`, sqldriver.SettingVectorSnapshot, sqldriver.SettingVectorSnapshot).Scan(&tag, &stray); err != nil {
		t.Fatal(err)
	}
	if tag != "other" || stray != 0 {
		t.Errorf("stored snapshot %q, and %d chunks of another left in the table", tag, stray)
	}
}
