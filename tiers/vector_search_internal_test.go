package tiers

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/lexical"
)

// Identities of the equivalence tests: two agents of one tenant sharing a
// directory, and a user-level caller of the first.
var (
	eqAgentA = memory.Identity{Tenant: "acme", Agent: "kaos://agent/ai/a", Session: "s1"}
	eqAgentB = memory.Identity{Tenant: "acme", Agent: "kaos://agent/ai/b", Session: "s2"}
	eqUserA  = memory.Identity{Tenant: "acme", User: "ann", Agent: "kaos://agent/ai/a", Session: "s3"}
)

// seedRandom writes n entries with random texts by random writers into
// dir and its index, as Saves would, the i-th created at benchBase + i
// seconds, and returns them.
func seedRandom(t *testing.T, dir string, rng *rand.Rand, n int) []vectorEntry {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, vectorTempDir), 0o750); err != nil {
		t.Fatal(err)
	}
	var index strings.Builder
	index.WriteString(newHeader())
	writers := []memory.Identity{eqAgentA, eqAgentB, eqUserA}
	var out []vectorEntry
	for i := range n {
		text := strings.ToValidUTF8(randomText(rng, 1+rng.IntN(25)), "?")
		text = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' {
				return ' '
			}
			return r
		}, text)
		name, err := newEntryName(benchBase.Add(time.Duration(i) * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		created, _ := parseEntryName(name)
		e := vectorEntry{name: name, created: created, who: writers[rng.IntN(len(writers))], key: "w/s", tokens: 1, text: text}
		if err := os.WriteFile(filepath.Join(dir, name), encodeEntry(e), 0o640); err != nil {
			t.Fatal(err)
		}
		index.WriteString(addLine(e))
		out = append(out, e)
	}
	if err := os.WriteFile(filepath.Join(dir, vectorIndexFile), []byte(index.String()), 0o640); err != nil {
		t.Fatal(err)
	}
	return out
}

// searchWords are what random entry texts and queries are made of: words
// in several cases, letters whose lower case differs in length, digits,
// separators and invalid UTF-8 (lexical's tests cover the words in depth).
var searchWords = []string{"openssl", "OpenSSL", "cve", "2024", "key", "keys", "\u212aey", "İstanbul", "istanbul", "straße", "a1", "x",
	"the", "restarted", "restart", " ", ", ", " | ", "\u2014", "\xff"}

// randomText joins n random searchWords.
func randomText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(searchWords[rng.IntN(len(searchWords))])
	}
	return b.String()
}

// referenceSearch is Search by brute force, with lexical.Rank: it reads
// the index file line by line for the entries it lists in id's scope (the
// documents BM25's statistics count) and returns the best k of those
// whose entry file exists and that are younger than ttl at now.
func referenceSearch(t *testing.T, dir string, id memory.Identity, ttl time.Duration, now time.Time, query string, k int) []string {
	t.Helper()
	if _, err := parseQuery(query, k); err != nil {
		t.Fatal(err)
	}
	filter, err := memory.Posture{}.Filter(id, memory.LevelAgent)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, vectorIndexFile))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]vectorEntry{}
	var names []string
	for _, line := range strings.Split(string(data), "\n")[1:] {
		add, e, ok := parseLineString(line)
		switch {
		case !ok:
		case add:
			if _, dup := listed[e.name]; !dup {
				names = append(names, e.name)
			}
			listed[e.name] = e
		default:
			delete(listed, e.name)
		}
	}
	var docs []lexical.Doc[vectorEntry]
	for _, name := range names {
		if e, ok := listed[name]; ok && filter.Matches(e.who) {
			docs = append(docs, lexical.Doc[vectorEntry]{Ref: e, Text: e.text})
		}
	}
	keep := func(e vectorEntry) bool {
		_, err := os.Stat(filepath.Join(dir, e.name))
		return err == nil && now.Before(time.Unix(0, e.created).Add(ttl))
	}
	order := lexical.ByScore(func(a, b vectorEntry) bool {
		return cmp.Or(cmp.Compare(b.created, a.created), strings.Compare(b.name, a.name)) < 0
	})
	hits, err := lexical.Rank(query, docs, lexical.DefaultParams(), k, order, keep)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%v %s %s", h.Score, h.Ref.name, h.Ref.text))
	}
	return out
}

// describeMatches renders matches as referenceSearch does.
func describeMatches(ms []VectorMatch) []string {
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%v %s %s", m.Score, m.Entry, m.Text))
	}
	return out
}

// randomQuery returns a query of one to four pieces holding a word.
func randomQuery(rng *rand.Rand) string {
	for {
		q := strings.ToValidUTF8(randomText(rng, 1+rng.IntN(4)), " ")
		if pq, err := parseQuery(q, 1); err == nil && len(pq.Terms()) > 0 {
			return q
		}
	}
}

// TestVectorSearchColdWarmMatchReference checks that the first Search of
// a fresh Vector (a scan) and later ones (the search index, built in the
// background) both return exactly what a brute-force search of the entry
// files returns, on random data with several writers, entries older than
// the TTL, and entry files removed by hand, and again after another
// Vector on the directory saves and prunes.
func TestVectorSearchColdWarmMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	entries := seedRandom(t, dir, rng, 600)
	for _, e := range entries[100:110] { // removed by hand: the index still lists them
		if err := os.Remove(filepath.Join(dir, e.name)); err != nil {
			t.Fatal(err)
		}
	}
	ttl := 500 * time.Second // the oldest 100 or so are stale
	now := benchBase.Add(600 * time.Second)
	clock := func() time.Time { return now }
	ctx := context.Background()
	store := testStore(t, clock, wordCounter{})
	opt := VectorOptions{Dir: dir, TTL: ttl, MaxEntries: 1000}
	check := func(v *Vector, id memory.Identity, query string, k int, what string) {
		t.Helper()
		got, err := v.Search(ctx, id, query, k)
		if err != nil {
			t.Fatal(err)
		}
		want := referenceSearch(t, dir, id, ttl, now, query, k)
		if !slices.Equal(describeMatches(got), want) {
			t.Fatalf("%s search %q (k %d) as %v found\n%q\nwant\n%q", what, query, k, id, describeMatches(got), want)
		}
	}
	ids := []memory.Identity{eqAgentA, eqAgentB, eqUserA}
	for i := range 40 {
		query, id, k := randomQuery(rng), ids[rng.IntN(len(ids))], 1+rng.IntN(20)
		v, err := NewVector(ctx, store, opt)
		if err != nil {
			t.Fatal(err)
		}
		if v.search.built() {
			t.Fatal("a fresh Vector has a search index")
		}
		check(v, id, query, k, "cold")
		v.waitBuild()
		if !v.search.built() {
			t.Fatal("no search index after the first search")
		}
		check(v, id, query, k, "warm")
		if i%10 == 0 { // another process saves and prunes
			other, err := NewVector(ctx, store, VectorOptions{Dir: dir, TTL: ttl, MaxEntries: 150})
			if err != nil {
				t.Fatal(err)
			}
			text := strings.ToValidUTF8(randomText(rng, 8), "?")
			if err := other.Save(ctx, ids[i%3], Step{Workflow: "w", Name: "s", Input: query, Output: text}); err != nil {
				t.Fatal(err)
			}
			_ = other.Close()
			check(v, id, query, k, "warm after another process wrote")
		}
		_ = v.Close()
	}
}

// TestVectorSearchBuildReconciles checks that an index built from an
// older view is brought up to date before use: entries added, pruned and
// removed while it was being built, and a replaced index file.
func TestVectorSearchBuildReconciles(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	dir := t.TempDir()
	seedRandom(t, dir, rng, 300)
	now := benchBase.Add(time.Hour)
	clock := func() time.Time { return now }
	ctx := context.Background()
	store := testStore(t, clock, wordCounter{})
	opt := VectorOptions{Dir: dir, MaxEntries: 1000}
	for _, replace := range []bool{false, true} {
		v, err := NewVector(ctx, store, opt)
		if err != nil {
			t.Fatal(err)
		}
		v.mu.Lock()
		if err := v.refreshSearch(ctx); err != nil {
			t.Fatal(err)
		}
		snapshot := v.view.live()
		v.mu.Unlock()
		// Meanwhile another process saves (pruning eqAgentA down to 50)
		// and, the second time, rebuilds the index file.
		other, err := NewVector(ctx, store, VectorOptions{Dir: dir, MaxEntries: 50})
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Save(ctx, eqAgentA, Step{Workflow: "w", Name: "s", Input: "openssl OpenSSL", Output: "key"}); err != nil {
			t.Fatal(err)
		}
		if replace {
			if err := other.Rebuild(ctx); err != nil {
				t.Fatal(err)
			}
		}
		_ = other.Close()
		v.mu.Lock()
		if err := v.refreshSearch(ctx); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		v.building = done
		v.mu.Unlock()
		v.build(snapshot, done)
		if !v.search.built() || v.building != nil {
			t.Fatalf("build did not install the index (replace %v)", replace)
		}
		if n := v.search.index.Len(); n != len(v.view.byName) {
			t.Fatalf("replace %v: the index holds %d entries, the view %d", replace, n, len(v.view.byName))
		}
		for e := range v.search.index.Refs() {
			if v.view.byName[e.name] != e {
				t.Fatalf("replace %v: the index holds %s, which the view does not", replace, e.name)
			}
		}
		for _, id := range []memory.Identity{eqAgentA, eqAgentB, eqUserA} {
			for _, query := range []string{"openssl", "key", "istanbul straße", "x a1 cve"} {
				got, err := v.Search(ctx, id, query, 30)
				if err != nil {
					t.Fatal(err)
				}
				if want := referenceSearch(t, dir, id, DefaultVectorTTL, now, query, 30); !slices.Equal(describeMatches(got), want) {
					t.Fatalf("replace %v: search %q as %v found\n%q\nwant\n%q", replace, query, id, describeMatches(got), want)
				}
			}
		}
		_ = v.Close()
	}
}

// TestVectorCloseStopsBuild checks that Close waits for the background
// build and that a closed Vector installs nothing.
func TestVectorCloseStopsBuild(t *testing.T) {
	dir := t.TempDir()
	seedVector(t, dir, 3000, benchWho, wordCounter{})
	now := benchBase.Add(time.Hour + 3000*time.Second)
	v, err := NewVector(context.Background(), testStore(t, func() time.Time { return now }, nil), VectorOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Search(context.Background(), benchWho, "payments", 3); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.building != nil {
		t.Fatal("a build is still at work after Close")
	}
}
