package recall

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// TestFusions checks the scores both fusions give, worked out by hand;
// they come in no particular order (read orders them).
func TestFusions(t *testing.T) {
	ref := func(id string, score float64) hit { return hit{ref: &driver.Ref{ID: id}, score: score} }
	read := func(id string, score float64) hit { // a hit whose record a search read
		return hit{ref: &driver.Ref{ID: id}, rec: &memory.Record{ID: id}, score: score}
	}
	lexical := []hit{ref("a", 9), ref("b", 3), ref("c", 1)}
	vector := []hit{read("d", 0.9), read("b", 0.7), read("a", 0.4)}
	vectorIDs := map[string]bool{"a": true, "b": true, "d": true}
	check := func(what string, got []hit, want map[string]float64) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d results, want %d", what, len(got), len(want))
		}
		for _, r := range got {
			if math.Abs(r.score-want[r.ref.ID]) > 1e-12 {
				t.Errorf("%s: %s scores %v, want %v", what, r.ref.ID, r.score, want[r.ref.ID])
			}
			if vectorIDs[r.ref.ID] != (r.rec != nil) {
				t.Errorf("%s: %s has record %v; only the vector matches' are read", what, r.ref.ID, r.rec)
			}
		}
	}
	// Lexical scaled: a 1, b 0.25, c 0; vector scaled: d 1, b 0.6, a 0.
	check("score fusion", fuseScores(lexical, vector), map[string]float64{"a": 1, "b": 0.85, "c": 0, "d": 1})
	k := float64(DefaultFusionK)
	check("rank fusion", fuse(k, lexical, vector), map[string]float64{
		"a": 1/(k+1) + 1/(k+3), "b": 2 / (k + 2), "c": 1 / (k + 3), "d": 1 / (k + 1),
	})
	// A list whose scores are all equal scales to 1, not to NaN.
	vectorIDs = nil
	check("score fusion of a flat list", fuseScores([]hit{ref("a", 3), ref("c", 3)}, nil), map[string]float64{"a": 1, "c": 1})
}

// TestSortFirst checks that sortFirst orders the best n of hits, over
// many equal scores, as sorting them all does, for every n, and leaves
// the rest behind them.
func TestSortFirst(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for round := range 200 {
		hits := make([]hit, rnd.IntN(40))
		for i := range hits {
			ref := &driver.Ref{ID: fmt.Sprint("r", i), Created: t0.Add(time.Duration(rnd.IntN(3)) * time.Second)}
			hits[i] = hit{ref: ref, score: float64(rnd.IntN(5))}
		}
		want := slices.Clone(hits)
		sortHits(want)
		for n := 0; n <= len(hits)+1; n++ {
			got := slices.Clone(hits)
			rnd.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
			m := sortFirst(got, n)
			if m < min(n, len(hits)) || m > len(hits) {
				t.Fatalf("round %d: sortFirst(%d of %d) ordered %d", round, n, len(hits), m)
			}
			for i := range m {
				if got[i].ref != want[i].ref {
					t.Fatalf("round %d: sortFirst(%d of %d): hit %d is %s, want %s", round, n, len(hits), i, got[i].ref.ID, want[i].ref.ID)
				}
			}
			rest := slices.Clone(got[m:])
			sortHits(rest)
			for i := range rest {
				if rest[i].ref != want[m+i].ref {
					t.Fatalf("round %d: sortFirst(%d of %d) lost or repeated a hit behind the first %d", round, n, len(hits), m)
				}
			}
		}
	}
}
