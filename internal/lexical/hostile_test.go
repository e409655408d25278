package lexical

import (
	"strings"
	"testing"
	"time"
)

// minTime returns the shortest of several timings of fn, so that a
// neighbouring test or a collection pause does not decide the result.
func minTime(fn func()) time.Duration {
	best := time.Duration(1 << 62)
	for range 5 {
		start := time.Now()
		fn()
		best = min(best, time.Since(start))
	}
	return best
}

// TestHostileInputIsLinear checks that indexing and querying cost time
// linear in the input, for the inputs most likely to be quadratic: one
// huge word, and one word repeated very many times. Four times the input
// may take at most growthLimit times as long.
func TestHostileInputIsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	cases := map[string]func(n int) string{
		"one huge word":     func(n int) string { return strings.Repeat("a", n) },
		"one word repeated": func(n int) string { return strings.Repeat("payments ", n/9) },
		"a letter repeated": func(n int) string { return strings.Repeat("x ", n/2) },
		"distinct words":    func(n int) string { return distinctWords(n) },
		"non-ASCII":         func(n int) string { return strings.Repeat("Ωμέγα ", n/11) },
	}
	for name, gen := range cases {
		t.Run(name, func(t *testing.T) {
			small, large := gen(128<<10), gen(512<<10)
			work := func(text string) func() {
				return func() {
					x := NewIndex[int]()
					x.Add(1, text)
					q := NewQuery(text[:min(len(text), 4096)])
					tf := make([]int, len(q.Terms()))
					q.Count(text, tf)
					if _, err := x.Search(&q, DefaultParams(), NewTopK(1, byID), nil); err != nil {
						t.Fatal(err)
					}
				}
			}
			ts, tl := minTime(work(small)), minTime(work(large))
			t.Logf("%s: 128 KiB %v, 512 KiB %v", name, ts, tl)
			if tl > growthLimit*ts+time.Millisecond {
				t.Errorf("4x the input took %.1fx as long (%v, then %v)", float64(tl)/float64(ts), ts, tl)
			}
		})
	}
}

// distinctWords returns about n bytes of words that are all different.
func distinctWords(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString("w")
		for j := i; j > 0; j /= 26 {
			b.WriteByte(byte('a' + j%26))
		}
		b.WriteByte(' ')
	}
	return b.String()
}

// TestHostileInputResults checks what the analyzer makes of a 1 MiB word
// and of a million repeats of one word.
func TestHostileInputResults(t *testing.T) {
	huge := strings.Repeat("A", 1<<20)
	if terms := Terms(huge); len(terms) != 1 || terms[0] != strings.Repeat("a", MaxWordBytes) {
		t.Fatalf("a 1 MiB word gives %d terms", len(terms))
	}
	x := NewIndex[int]()
	x.Add(1, strings.Repeat("payments ", 1_000_000))
	x.Add(2, "payments today")
	q := NewQuery("payments")
	if st := x.Stats(&q); st.Length != 1_000_002 || st.DF[0] != 2 {
		t.Fatalf("stats %+v", st)
	}
	hits, _ := x.Search(&q, DefaultParams(), NewTopK(2, byID), nil)
	// BM25 saturates: a million repeats score less than k1+1 times one.
	if len(hits) != 2 || hits[0].Ref != 1 || hits[0].Score > (DefaultK1+1)*IDF(2, 2) {
		t.Fatalf("hits %v", hits)
	}
}
