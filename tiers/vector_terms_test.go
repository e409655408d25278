package tiers

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// referenceScore is the definition termCounter.score must meet: the sum,
// over the distinct terms, of how often forEachWord yields each.
func referenceScore(terms []string, text string) int {
	n := 0
	forEachWord(text, func(w string) {
		for _, t := range terms {
			if w == t {
				n++
			}
		}
	})
	return n
}

// termPieces are what random texts and queries are made of: words in
// several cases, letters whose lower case differs in length or is ASCII
// (the Kelvin sign, the Turkish dotted I), digits, separators of one and
// several bytes, and invalid UTF-8.
var termPieces = []string{
	"openssl", "OpenSSL", "OPENSSL", "cve", "CVE", "2024", "x", "K", "\u212a", "\u212aey", "key", "KEY",
	"İstanbul", "istanbul", "i̇stanbul", "straße", "STRASSE", "Ωmega", "ωmega", "日本", "語",
	" ", "-", ": ", " | ", "\u00a0", "\u2014", "\xff", "\xe2\x82", "_", "é", "É", "a", "A1",
	strings.Repeat("long", 17), strings.Repeat("LONG", 17),
}

func randomText(rng *rand.Rand, pieces int) string {
	var b strings.Builder
	for range pieces {
		b.WriteString(termPieces[rng.IntN(len(termPieces))])
	}
	return b.String()
}

// TestTermCounterMatchesReference checks the fast counter against
// forEachWord on random texts and queries built from tricky pieces.
func TestTermCounterMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 20000 {
		query := randomText(rng, 1+rng.IntN(6))
		if !utf8.ValidString(query) {
			query = strings.ToValidUTF8(query, " ")
		}
		terms, err := queryTerms(query, 1)
		if err != nil {
			continue
		}
		text := randomText(rng, rng.IntN(30))
		c := newTermCounter(terms)
		if got, want := c.score(text), referenceScore(terms, text); got != want {
			t.Fatalf("case %d: score(%q) with terms %q = %d, want %d", i, text, terms, got, want)
		}
	}
}

// FuzzTermCounter checks the fast counter against forEachWord on any
// query and text.
func FuzzTermCounter(f *testing.F) {
	f.Add("openssl upgrade", "[scan/cve] Task: check OpenSSL | Result: openssl upgrade needed")
	f.Add("key", "\u212aey KEY k\u212a")
	f.Add("istanbul", "İstanbul \xff istanbul")
	f.Add(strings.Repeat("long", 17), strings.Repeat("LONG", 17)+" x")
	f.Fuzz(func(t *testing.T, query, text string) {
		terms, err := queryTerms(query, 1)
		if err != nil {
			return
		}
		c := newTermCounter(terms)
		if got, want := c.score(text), referenceScore(terms, text); got != want {
			t.Fatalf("score(%q) with terms %q = %d, want %d", text, terms, got, want)
		}
	})
}

func BenchmarkTermCounter(b *testing.B) {
	text := "[research/collect] Task: task 1234: payments checkout Login latency | Result: spike anomaly baseline pod restart crashloop memory leak"
	c := newTermCounter([]string{"payments", "latency", "spike"})
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if c.score(text) != 3 {
			b.Fatal("wrong score")
		}
	}
}
