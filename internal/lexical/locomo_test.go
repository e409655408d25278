package lexical

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// locomoPaths are where the LoCoMo development set may be, kept outside
// the repository (shared/eval beside the work tree, or the machine's
// shared directory for a clone elsewhere, as CI's): it is never
// committed, nor anything derived from it.
var locomoPaths = []string{"../../../shared/eval/locomo-dev.json", "/work/shared/eval/locomo-dev.json"}

// TestLoCoMoHitAt10 measures ranking quality, engine level: for each
// LoCoMo conversation it indexes every turn as "<speaker>: <text>", asks
// every question of categories 1 to 4 verbatim, and counts the questions
// with an evidence turn among the ten best. It compares the raw term
// frequency the library ranked by before, BM25 over plain words, and
// the engine (BM25 with stopwords dropped and Porter2 stemming). It skips
// when the data set is absent, unless AGENTMEM_REQUIRE_EVAL_DATA is 1 (as
// CI sets it: there it fails); run with -v to see the table
// (BENCHMARKS.md, "Lexical engine"). Under -race it skips, being too slow
// there: CI runs it in a step of its own without the race detector.
func TestLoCoMoHitAt10(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("a measurement: run it without -race and -short")
	}
	var data []byte
	err := os.ErrNotExist
	for _, p := range locomoPaths {
		if data, err = os.ReadFile(p); !os.IsNotExist(err) {
			break
		}
	}
	if os.IsNotExist(err) {
		if os.Getenv("AGENTMEM_REQUIRE_EVAL_DATA") == "1" {
			t.Fatalf("AGENTMEM_REQUIRE_EVAL_DATA=1, and none of %v exists", locomoPaths)
		}
		t.Skipf("none of %v exists", locomoPaths)
	}
	if err != nil {
		t.Fatal(err)
	}
	var convs []struct {
		QA []struct {
			Question string   `json:"question"`
			Evidence []string `json:"evidence"`
			Category int      `json:"category"`
		} `json:"qa"`
		Conversation map[string]json.RawMessage `json:"conversation"`
	}
	if err := json.Unmarshal(data, &convs); err != nil {
		t.Fatal(err)
	}
	plain := func(s string) []string { return slices.Collect(Words(s)) }
	stopped := func(s string) []string {
		var out []string
		for w := range Words(s) {
			if !IsStopword(w) {
				out = append(out, w)
			}
		}
		return out
	}
	stemmed := func(s string) []string {
		var out []string
		for w := range Words(s) {
			out = append(out, Stem(w))
		}
		return out
	}
	variants := []struct {
		name string
		rank func(query string, turns []Doc[int]) []int
	}{
		{"raw term frequency, plain words (before)", func(q string, d []Doc[int]) []int { return rankTF(q, d, plain) }},
		{"BM25, plain words", func(q string, d []Doc[int]) []int { return rankBM25(q, d, plain) }},
		{"BM25, stopwords dropped", func(q string, d []Doc[int]) []int { return rankBM25(q, d, stopped) }},
		{"BM25, Porter2, stopwords kept", func(q string, d []Doc[int]) []int { return rankBM25(q, d, stemmed) }},
		{"BM25, stopwords dropped, Porter2 (the engine)", func(q string, d []Doc[int]) []int {
			hits, err := Rank(q, d, DefaultParams(), 10, ByScore(func(a, b int) bool { return a > b }), nil)
			if err != nil {
				t.Fatal(err)
			}
			refs := make([]int, len(hits))
			for i, h := range hits {
				refs[i] = h.Ref
			}
			return refs
		}},
	}
	hits := make([][5]int, len(variants)) // by category 1-4; [0] all
	var asked [5]int
	for _, c := range convs {
		var turns []Doc[int]
		var ids []string
		for s := 1; ; s++ {
			raw, ok := c.Conversation["session_"+strconv.Itoa(s)]
			if !ok {
				break
			}
			var session []struct {
				Speaker string `json:"speaker"`
				DiaID   string `json:"dia_id"`
				Text    string `json:"text"`
			}
			if err := json.Unmarshal(raw, &session); err != nil {
				t.Fatal(err)
			}
			for _, turn := range session {
				turns = append(turns, Doc[int]{Ref: len(turns), Text: turn.Speaker + ": " + turn.Text})
				ids = append(ids, turn.DiaID)
			}
		}
		for _, qa := range c.QA {
			if qa.Category < 1 || qa.Category > 4 {
				continue
			}
			asked[0]++
			asked[qa.Category]++
			for v, variant := range variants {
				for _, ref := range variant.rank(qa.Question, turns) {
					if slices.Contains(qa.Evidence, ids[ref]) {
						hits[v][0]++
						hits[v][qa.Category]++
						break
					}
				}
			}
		}
	}
	if asked[0] == 0 {
		t.Fatal("no questions of categories 1-4")
	}
	t.Logf("LoCoMo dev, %d conversations, %d questions (categories 1-4: %d %d %d %d): Hit@10", len(convs), asked[0], asked[1], asked[2], asked[3], asked[4])
	for v, variant := range variants {
		var b strings.Builder
		for c := range 5 {
			b.WriteString(" " + strconv.FormatFloat(100*float64(hits[v][c])/float64(max(asked[c], 1)), 'f', 1, 64) + "%")
		}
		t.Logf("%-48s all, cat 1-4:%s (%d of %d)", variant.name, b.String(), hits[v][0], asked[0])
	}
	if engine, before := hits[len(variants)-1][0], hits[0][0]; engine <= before {
		t.Errorf("the engine finds %d, raw term frequency %d: BM25 should do better", engine, before)
	}
}

// rankTF returns the ten best turns by raw term frequency: how many of a
// turn's words are words of the query, newest first among equals.
func rankTF(query string, turns []Doc[int], words func(string) []string) []int {
	q := words(query)
	top := NewTopK(10, ByScore(func(a, b int) bool { return a > b }))
	for _, d := range turns {
		n := 0
		for _, w := range words(d.Text) {
			if slices.Contains(q, w) {
				n++
			}
		}
		if h := (Hit[int]{Ref: d.Ref, Score: float64(n)}); n > 0 && top.Wants(h) {
			top.Insert(h)
		}
	}
	return refsOf(top.Hits())
}

// rankBM25 returns the ten best turns by BM25 over the terms words
// gives, with the engine's Stats and Scorer.
func rankBM25(query string, turns []Doc[int], words func(string) []string) []int {
	var q []string
	for _, w := range words(query) {
		if !slices.Contains(q, w) {
			q = append(q, w)
		}
	}
	tfs := make([][]int, len(turns))
	lens := make([]int, len(turns))
	var st Stats
	for i, d := range turns {
		tf := make([]int, len(q))
		ws := words(d.Text)
		for _, w := range ws {
			if j := slices.Index(q, w); j >= 0 {
				tf[j]++
			}
		}
		tfs[i], lens[i] = tf, len(ws)
		st.AddDoc(len(ws), tf)
	}
	sc := NewScorer(st, DefaultParams())
	top := NewTopK(10, ByScore(func(a, b int) bool { return a > b }))
	for i, d := range turns {
		if s := sc.Score(lens[i], tfs[i]); s > 0 {
			if h := (Hit[int]{Ref: d.Ref, Score: s}); top.Wants(h) {
				top.Insert(h)
			}
		}
	}
	return refsOf(top.Hits())
}

func refsOf(hits []Hit[int]) []int {
	out := make([]int, len(hits))
	for i, h := range hits {
		out[i] = h.Ref
	}
	return out
}
