package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/postgres"
)

// vecDims is the dimension of the vector copy tests' vectors.
const vecDims = 8

// randomVec returns a random vector of vecDims dimensions.
func randomVec(rnd *rand.Rand) []float32 {
	v := make([]float32, vecDims)
	for i := range v {
		v[i] = float32(rnd.NormFloat64())
	}
	return v
}

// vecRec is a record of textWho with vector vec (none when nil).
func vecRec(id string, sec int, vec []float32) memory.Record {
	r := textRec(id, "v "+id, sec)
	r.Vector = vec
	if sec%7 == 0 {
		r.Content += "?"
		r.Metadata = map[string]string{memory.SpeakerKey: "Ana"}
	}
	return r
}

// sameVectorRankings checks that got's rankings of queries are those of
// a driver that has just loaded its copy, and that Search agrees with
// RankVector.
func sameVectorRankings(t *testing.T, got *postgres.Driver, dsn string, queries [][]float32) {
	t.Helper()
	ctx := context.Background()
	fresh, err := postgres.Open(dsn, postgres.Options{InProcessVectors: true})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	q := tenantQuery(textWho.Tenant)
	for _, vec := range queries {
		have, err := got.RankVector(ctx, q, vec, 10)
		if err != nil {
			t.Fatal(err)
		}
		want, err := fresh.RankVector(ctx, q, vec, 10)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, have); diff != "" {
			t.Fatalf("the caught-up copy ranks unlike a freshly loaded one (-fresh +caught up):\n%s", diff)
		}
		found, err := got.Search(ctx, q, vec, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) != len(have) {
			t.Fatalf("Search found %d, RankVector %d", len(found), len(have))
		}
		for i, m := range found {
			if diff := cmp.Diff(have[i].Ref, driver.RefOf(m.Record)); diff != "" || m.Score != have[i].Score {
				t.Fatalf("Search's match %d differs from RankVector's (score %v against %v): %s", i, m.Score, have[i].Score, diff)
			}
		}
	}
	if fresh.VectorLoadsForTest() != 1 {
		t.Fatalf("the fresh driver loaded its copy %d times, want once", fresh.VectorLoadsForTest())
	}
}

// TestVectorCopyConcurrentWriters checks that a driver searching its
// vector copy while two other drivers insert, replace (with and without
// a vector) and delete records ends up ranking exactly as a copy loaded
// afterwards does, having loaded its own once.
func TestVectorCopyConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	searcher, dsn := openFresh(t, postgres.Options{InProcessVectors: true})
	writers := []*postgres.Driver{openOn(t, dsn), openOn(t, dsn)}
	if err := writers[0].Put(ctx, []memory.Record{vecRec("first", 1, randomVec(rand.New(rand.NewPCG(1, 1))))}); err != nil {
		t.Fatal(err)
	}
	stop := writeConcurrently(t, writers, 9, func(rnd *rand.Rand, id string) memory.Record {
		var vec []float32
		if rnd.IntN(5) != 0 {
			vec = randomVec(rnd)
		}
		return vecRec(id, rnd.IntN(100), vec)
	})
	rnd := rand.New(rand.NewPCG(99, 9))
	deadline := time.Now().Add(3 * time.Second)
	searches := 0
	for time.Now().Before(deadline) {
		if _, err := searcher.RankVector(ctx, tenantQuery(textWho.Tenant), randomVec(rnd), 10); err != nil {
			t.Fatalf("RankVector during the writes: %v", err)
		}
		searches++
	}
	stop()
	t.Logf("%d searches during the writes", searches)
	queries := make([][]float32, 40)
	for i := range queries {
		queries[i] = randomVec(rnd)
	}
	sameVectorRankings(t, searcher, dsn, queries)
	if n := searcher.VectorLoadsForTest(); n != 1 {
		t.Errorf("the searcher loaded its copy %d times, want once", n)
	}
}

// TestVectorCopyLogPruned checks pruning: a copy that caught up before
// the log was pruned goes on catching up, and one that had not loads
// every vector again, finding what changed meanwhile.
func TestVectorCopyLogPruned(t *testing.T) {
	ctx := context.Background()
	w, dsn := openFresh(t, postgres.Options{})
	opt := postgres.Options{InProcessVectors: true}
	current, err := postgres.Open(dsn, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer current.Close()
	lagging, err := postgres.Open(dsn, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer lagging.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	x, y := []float32{1, 0, 0, 0, 0, 0, 0, 0}, []float32{0, 1, 0, 0, 0, 0, 0, 0}
	ids := func(d *postgres.Driver) string {
		t.Helper()
		got, err := d.RankVector(ctx, tenantQuery(textWho.Tenant), x, 10)
		must(err)
		s := ""
		for _, m := range got {
			if m.Score > 0.5 {
				s += m.Ref.ID + " "
			}
		}
		return s
	}
	must(w.Put(ctx, []memory.Record{vecRec("a", 1, x), vecRec("b", 2, x)}))
	for _, d := range []*postgres.Driver{current, lagging} {
		if got := ids(d); got != "b a " {
			t.Fatalf("the first search = %q, want \"b a \"", got)
		}
	}
	must(w.Put(ctx, []memory.Record{vecRec("b", 2, y), vecRec("c", 3, x)}))
	if got := ids(current); got != "c a " {
		t.Fatalf("the caught-up copy finds %q, want \"c a \"", got)
	}
	must(w.PruneTextLogForTest(ctx))
	must(w.Put(ctx, []memory.Record{vecRec("d", 4, x), vecRec("a", 1, nil)}))
	if got := ids(current); got != "d c " {
		t.Errorf("the copy current before the prune finds %q, want \"d c \"", got)
	}
	if got := ids(lagging); got != "d c " {
		t.Errorf("the copy that lagged behind the prune finds %q, want \"d c \"", got)
	}
	if n := current.VectorLoadsForTest(); n != 1 {
		t.Errorf("the copy current before the prune was loaded %d times, want once", n)
	}
	if n := lagging.VectorLoadsForTest(); n != 2 {
		t.Errorf("the copy that lagged behind the prune was loaded %d times, want twice", n)
	}
}

// TestVectorCopyAsks checks that the question flag the server computes
// for the copy's Refs is driver.Asks of each record's content.
func TestVectorCopyAsks(t *testing.T) {
	ctx := context.Background()
	d, _ := openFresh(t, postgres.Options{InProcessVectors: true})
	contents := []string{"plain", "why?", "why? ", "\"why?\"", "(why?)\t\r\n", "[why?’]", "“why?”", "why？", "why?x", "?", " ", "why?.", "naïve?\u00a0", "¿qué?'"}
	recs := make([]memory.Record, len(contents))
	for i, c := range contents {
		recs[i] = textRec(fmt.Sprint("q", i), c, i)
		recs[i].Vector = []float32{1, float32(i), 0, 0, 0, 0, 0, 0}
	}
	if err := d.Put(ctx, recs); err != nil {
		t.Fatal(err)
	}
	got, err := d.RankVector(ctx, tenantQuery(textWho.Tenant), []float32{1, 0, 0, 0, 0, 0, 0, 0}, len(recs))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) {
		t.Fatalf("RankVector found %d, want %d", len(got), len(recs))
	}
	for _, m := range got {
		var i int
		fmt.Sscanf(m.Ref.ID, "q%d", &i)
		if want := driver.Asks(contents[i]); m.Ref.Asks != want {
			t.Errorf("content %q: Asks %v, want %v", contents[i], m.Ref.Asks, want)
		}
	}
}
