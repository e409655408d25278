package recall

import (
	"math"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// TestFusions checks the scores both fusions give, worked out by hand.
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
		for i, r := range got {
			if math.Abs(r.score-want[r.ref.ID]) > 1e-12 {
				t.Errorf("%s: %s scores %v, want %v", what, r.ref.ID, r.score, want[r.ref.ID])
			}
			if vectorIDs[r.ref.ID] != (r.rec != nil) {
				t.Errorf("%s: %s has record %v; only the vector matches' are read", what, r.ref.ID, r.rec)
			}
			if i > 0 && got[i-1].score < r.score {
				t.Errorf("%s: not best first at %d", what, i)
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
