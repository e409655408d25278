package lexical

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The engine benchmarks of issue 13 (BENCHMARKS.md, "Lexical engine"):
// synthetic English-like facts of 10 to 30 words drawn from a Zipf-like
// vocabulary, and queries of 5 to 10 words drawn from it too.

// benchVocab is the vocabulary of the synthetic facts: 20,000 made-up
// words of two to four syllables, with English-like endings so that the
// stemmer has work to do, and the stopwords mixed in at the common end.
var benchVocab = sync.OnceValue(func() []string {
	syllables := []string{"ka", "ro", "men", "ti", "sul", "bra", "po", "den", "vi", "lo", "mar", "ste", "qua", "ni", "gor", "fe", "lan", "dri", "hu", "zel"}
	endings := []string{"", "", "", "s", "ed", "ing", "tion", "ly", "er", "ment", "ness", "ies"}
	rng := rand.New(rand.NewPCG(13, 13))
	seen := map[string]bool{}
	words := []string{"the", "of", "and", "to", "in", "is", "a", "for", "with", "on"}
	for len(words) < 20_000 {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteString(syllables[rng.IntN(len(syllables))])
		}
		b.WriteString(endings[rng.IntN(len(endings))])
		if w := b.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
})

// benchGen draws words from benchVocab with Zipf-distributed ranks.
type benchGen struct {
	zipf *rand.Zipf
	rng  *rand.Rand
}

func newBenchGen(seed uint64) *benchGen {
	rng := rand.New(rand.NewPCG(seed, 1))
	return &benchGen{zipf: rand.NewZipf(rng, 1.07, 2, uint64(len(benchVocab())-1)), rng: rng}
}

// text returns min to max words.
func (g *benchGen) text(lo, hi int) string {
	vocab := benchVocab()
	n := lo + g.rng.IntN(hi-lo+1)
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocab[g.zipf.Uint64()])
	}
	return b.String()
}

// BenchFacts returns n synthetic facts of 10 to 30 words.
func benchFacts(n int, seed uint64) []string {
	g := newBenchGen(seed)
	out := make([]string, n)
	for i := range out {
		out[i] = g.text(10, 30)
	}
	return out
}

// benchQueries returns n queries of 5 to 10 words.
func benchQueries(n int) []Query {
	g := newBenchGen(99)
	out := make([]Query, n)
	for i := range out {
		out[i] = NewQuery(g.text(5, 10))
	}
	return out
}

// BenchmarkIndexFacts measures Add of 100,000 facts into a fresh index:
// facts per second over the whole build.
func BenchmarkIndexFacts(b *testing.B) {
	facts := benchFacts(100_000, 1)
	for b.Loop() {
		x := NewIndex[int]()
		for i, f := range facts {
			x.Add(i, f)
		}
	}
	b.ReportMetric(float64(len(facts)*b.N)/b.Elapsed().Seconds(), "facts/s")
}

// searchLatencies runs b.N searches, query i%len(qs) over parts(i), and
// reports the median and 99th percentile of their times.
func searchLatencies(b *testing.B, qs []Query, parts func(i int) []*Index[int]) {
	searchLatenciesK(b, qs, parts, 10, nil)
}

// searchLatenciesK is searchLatencies for the best k under keep.
func searchLatenciesK(b *testing.B, qs []Query, parts func(i int) []*Index[int], k int, keep func(int) bool) {
	newer := func(a, b int) bool { return a > b }
	var times []time.Duration
	i, found := 0, 0
	runtime.GC() // not the building's garbage in the timings
	for b.Loop() {
		q := &qs[i%len(qs)]
		p := parts(i)
		start := time.Now()
		hits, err := Search(q, p, DefaultParams(), NewTopKByScore(k, newer), keep)
		times = append(times, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		found += len(hits)
		i++
	}
	slices.Sort(times)
	b.ReportMetric(float64(found)/float64(len(times)), "hits/op")
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(times[len(times)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkSearch100k measures a warm search, k = 10, over 100,000 facts
// in one partition.
func BenchmarkSearch100k(b *testing.B) {
	facts := benchFacts(100_000, 1)
	before := heapInUse()
	x := NewIndex[int]()
	for i, f := range facts {
		x.Add(i, f)
	}
	perFact := float64(heapInUse()-before) / float64(len(facts))
	runtime.KeepAlive(facts) // freed during the build, they would hide its memory
	parts := []*Index[int]{x}
	searchLatencies(b, benchQueries(256), func(int) []*Index[int] { return parts })
	b.ReportMetric(perFact, "heap-B/fact")
}

// BenchmarkSearch100kTop300 measures a warm search for the best 300 of
// 100,000 facts in one partition, as a recall's candidates are asked
// for, under a keep that reads a record of each candidate it is asked
// about (as a driver's expiry check does), refusing one in 64.
func BenchmarkSearch100kTop300(b *testing.B) {
	facts := benchFacts(100_000, 1)
	x := NewIndex[int]()
	for i, f := range facts {
		x.Add(i, f)
	}
	type record struct {
		expires int64
		_       [56]byte // a record's other fields, so that each read is its own cache line
	}
	recs := make([]*record, len(facts))
	for i := range recs {
		recs[i] = &record{expires: int64(i % 64)}
	}
	keep := func(ref int) bool { return recs[ref].expires != 0 }
	parts := []*Index[int]{x}
	searchLatenciesK(b, benchQueries(256), func(int) []*Index[int] { return parts }, 300, keep)
}

// BenchmarkSearch100kIn1000Top300 is BenchmarkSearch100kTop300 over the
// same 100,000 facts kept in 1,000 partitions of 100 of one corpus, the
// facts of a thousand sessions, all searched: an agent-level recall.
func BenchmarkSearch100kIn1000Top300(b *testing.B) {
	facts := benchFacts(100_000, 1)
	c := NewCorpus[int]()
	parts := make([]*Index[int], 1000)
	for p := range parts {
		parts[p] = c.NewIndex()
	}
	for i, f := range facts {
		parts[i/100].Add(i, f)
	}
	type record struct {
		expires int64
		_       [56]byte
	}
	recs := make([]*record, len(facts))
	for i := range recs {
		recs[i] = &record{expires: int64(i % 64)}
	}
	keep := func(ref int) bool { return recs[ref].expires != 0 }
	searchLatenciesK(b, benchQueries(256), func(int) []*Index[int] { return parts }, 300, keep)
}

// BenchmarkSearchOneScopeOf1000 measures a search, k = 10, restricted to
// one partition of 1,000 facts among 1,000 such partitions (1,000,000
// facts), visiting the partitions in turn.
func BenchmarkSearchOneScopeOf1000(b *testing.B) {
	parts := make([][]*Index[int], 1000)
	facts := benchFacts(1_000_000, 2)
	for p := range parts {
		x := NewIndex[int]()
		for i := range 1000 {
			x.Add(p*1000+i, facts[p*1000+i])
		}
		parts[p] = []*Index[int]{x}
	}
	searchLatencies(b, benchQueries(256), func(i int) []*Index[int] { return parts[(i*7919)%len(parts)] })
}

// BenchmarkSearchAcross10Of1000 measures a search over ten partitions of
// 1,000 facts (a user-level read spanning ten sessions) among 1,000.
func BenchmarkSearchAcross10Of1000(b *testing.B) {
	all := make([]*Index[int], 1000)
	facts := benchFacts(1_000_000, 2)
	for p := range all {
		x := NewIndex[int]()
		for i := range 1000 {
			x.Add(p*1000+i, facts[p*1000+i])
		}
		all[p] = x
	}
	searchLatencies(b, benchQueries(256), func(i int) []*Index[int] {
		p := (i * 10) % len(all)
		return all[p : p+10]
	})
}

// BenchmarkAnalyzeFact measures Analyze of one synthetic fact.
func BenchmarkAnalyzeFact(b *testing.B) {
	facts := benchFacts(1024, 3)
	i := 0
	for b.Loop() {
		for range Analyze(facts[i%len(facts)]) {
		}
		i++
	}
}

// TestBenchVocabulary checks that the synthetic facts look like text:
// the commonest words dominate and the vocabulary is large.
func TestBenchVocabulary(t *testing.T) {
	counts := map[string]int{}
	n := 0
	for _, f := range benchFacts(2000, 1) {
		for w := range Words(f) {
			counts[w]++
			n++
		}
	}
	if len(counts) < 2000 || counts["the"] < n/50 {
		t.Fatalf("%d distinct words of %d, \"the\" %d times", len(counts), n, counts["the"])
	}
}

// heapInUse returns the bytes of live heap objects after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
