package lexical

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// referenceCount is the definition Query.Count must meet: the sum, over
// the distinct terms, of how often Words yields each.
func referenceCount(terms []string, text string) int {
	n := 0
	for w := range Words(text) {
		if slices.Contains(terms, w) {
			n++
		}
	}
	return n
}

// pieces are what random texts and queries are made of: words in several
// cases, letters whose lower case differs in length or is ASCII (the
// Kelvin sign, the Turkish dotted I), digits, separators of one and
// several bytes, and invalid UTF-8.
var pieces = []string{
	"openssl", "OpenSSL", "OPENSSL", "cve", "CVE", "2024", "x", "K", "\u212a", "\u212aey", "key", "KEY",
	"İstanbul", "istanbul", "i̇stanbul", "straße", "STRASSE", "Ωmega", "ωmega", "日本", "語",
	" ", "-", ": ", " | ", "\u00a0", "\u2014", "\xff", "\xe2\x82", "_", "é", "É", "a", "A1",
	strings.Repeat("long", 17), strings.Repeat("LONG", 17),
}

func randomText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

// randomTerms returns the distinct words of a random query with at least
// one word.
func randomTerms(rng *rand.Rand) []string {
	for {
		if terms := Terms(strings.ToValidUTF8(randomText(rng, 1+rng.IntN(6)), " ")); len(terms) > 0 {
			return terms
		}
	}
}

func TestWordsAndTerms(t *testing.T) {
	got := slices.Collect(Words("OpenSSL 3.0: upgrade—now! \u212aey İstanbul\xffx"))
	want := []string{"openssl", "3", "0", "upgrade", "now", "key", "istanbul", "x"} // İ lowers to i
	if !slices.Equal(got, want) {
		t.Errorf("Words = %q, want %q", got, want)
	}
	if got, want := Terms("a B a b c"), []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("Terms = %q, want %q", got, want)
	}
	if got := Terms(" -- "); len(got) != 0 {
		t.Errorf("Terms of no words = %q", got)
	}
}

// TestCountMatchesReference checks the fast count against Words on
// random texts and queries built from tricky pieces.
func TestCountMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 20000 {
		terms := randomTerms(rng)
		text := randomText(rng, rng.IntN(30))
		q := NewQuery(terms)
		if got, want := q.Count(text), referenceCount(terms, text); got != want {
			t.Fatalf("case %d: Count(%q) with terms %q = %d, want %d", i, text, terms, got, want)
		}
	}
}

// FuzzCount checks the fast count against Words on any query and text.
func FuzzCount(f *testing.F) {
	f.Add("openssl upgrade", "[scan/cve] Task: check OpenSSL | Result: openssl upgrade needed")
	f.Add("key", "\u212aey KEY k\u212a")
	f.Add("istanbul", "İstanbul \xff istanbul")
	f.Add(strings.Repeat("long", 17), strings.Repeat("LONG", 17)+" x")
	f.Fuzz(func(t *testing.T, query, text string) {
		if !utf8.ValidString(query) {
			return
		}
		terms := Terms(query)
		q := NewQuery(terms)
		if got, want := q.Count(text), referenceCount(terms, text); got != want {
			t.Fatalf("Count(%q) with terms %q = %d, want %d", text, terms, got, want)
		}
	})
}

// ref is a test reference: an id and the text indexed under it.
type ref struct {
	id   int
	text string
}

func before(a, b Hit[*ref]) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Ref.id > b.Ref.id
}

// TestIndexMatchesCount checks that an Index, under random adds and
// removes, ranks exactly as counting every live text does, with a keep
// filter applied before the best k are chosen.
func TestIndexMatchesCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := NewIndex[*ref]()
	var live []*ref
	for step := range 3000 {
		if len(live) > 0 && rng.IntN(4) == 0 {
			i := rng.IntN(len(live))
			x.Remove(live[i])
			x.Remove(live[i]) // twice is once
			live = slices.Delete(live, i, i+1)
		} else {
			r := &ref{id: step, text: randomText(rng, rng.IntN(20))}
			x.Add(r, r.text)
			x.Add(r, "ignored: an indexed reference keeps its text")
			live = append(live, r)
		}
		if x.Len() != len(live) || len(live) > 0 && !x.Has(live[len(live)-1]) {
			t.Fatalf("step %d: Len %d, want %d", step, x.Len(), len(live))
		}
		if step%10 != 0 {
			continue
		}
		q := NewQuery(randomTerms(rng))
		k := 1 + rng.IntN(8)
		odd := func(r *ref) bool { return r.id%2 == 1 }
		got := NewTopK(k, before)
		x.Score(&q, got, odd)
		want := NewTopK(k, before)
		for _, r := range live {
			if n := q.Count(r.text); n > 0 && odd(r) {
				want.Insert(Hit[*ref]{Ref: r, Score: n})
			}
		}
		if !slices.Equal(got.Hits(), want.Hits()) {
			t.Fatalf("step %d: index ranked %v, counting %v", step, hitsOf(got), hitsOf(want))
		}
	}
	n := 0
	for r := range x.Refs() {
		if !slices.Contains(live, r) {
			t.Fatalf("Refs yields %d, which is not live", r.id)
		}
		n++
	}
	if n != len(live) {
		t.Fatalf("Refs yields %d references, want %d", n, len(live))
	}
}

func hitsOf(t *TopK[*ref]) []string {
	var out []string
	for _, h := range t.Hits() {
		out = append(out, strings.Repeat("*", h.Score)+" "+h.Ref.text)
	}
	return out
}

// TestTopKMerge checks that hits split among several TopKs and merged
// rank as one TopK fed all of them.
func TestTopKMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 200 {
		k := 1 + rng.IntN(5)
		whole, parts := NewTopK(k, before), []*TopK[*ref]{NewTopK(k, before), NewTopK(k, before), NewTopK(k, before)}
		for i := range rng.IntN(40) {
			h := Hit[*ref]{Ref: &ref{id: i}, Score: rng.IntN(4)}
			if whole.Wants(h) {
				whole.Insert(h)
			}
			if p := parts[rng.IntN(3)]; p.Wants(h) {
				p.Insert(h)
			}
		}
		parts[0].Merge(parts[1])
		parts[0].Merge(parts[2])
		if !slices.Equal(parts[0].Hits(), whole.Hits()) {
			t.Fatalf("merged %v, whole %v", hitsOf(parts[0]), hitsOf(whole))
		}
	}
}

func BenchmarkCount(b *testing.B) {
	text := "[research/collect] Task: task 1234: payments checkout Login latency | Result: spike anomaly baseline pod restart crashloop memory leak"
	q := NewQuery([]string{"payments", "latency", "spike"})
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if q.Count(text) != 3 {
			b.Fatal("wrong score")
		}
	}
}
