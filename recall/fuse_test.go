package recall

import (
	"math"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// TestFusions checks the scores both fusions give, worked out by hand.
func TestFusions(t *testing.T) {
	rec := func(id string) memory.Record { return memory.Record{ID: id} }
	lexical := []Result{{rec("a"), 9}, {rec("b"), 3}, {rec("c"), 1}}
	vector := []driver.Match{{Record: rec("d"), Score: 0.9}, {Record: rec("b"), Score: 0.7}, {Record: rec("a"), Score: 0.4}}
	check := func(what string, got []Result, want map[string]float64) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d results, want %d", what, len(got), len(want))
		}
		for i, r := range got {
			if math.Abs(r.Score-want[r.Record.ID]) > 1e-12 {
				t.Errorf("%s: %s scores %v, want %v", what, r.Record.ID, r.Score, want[r.Record.ID])
			}
			if i > 0 && got[i-1].Score < r.Score {
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
	check("score fusion of a flat list", fuseScores([]Result{{rec("a"), 3}, {rec("b"), 3}}, nil), map[string]float64{"a": 1, "b": 1})
}
