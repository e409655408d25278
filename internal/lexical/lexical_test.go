package lexical

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentmem/memory"
)

func TestWords(t *testing.T) {
	long := strings.Repeat("x", MaxWordBytes+10)
	got := slices.Collect(Words("OpenSSL 3.0: upgrade—now! \u212aey İstanbul\xffx ΟΔΟΣ οδος " + long + " end"))
	want := []string{"openssl", "3", "0", "upgrade", "now", "key", "istanbul", "x", "οδοσ", "οδοσ", long[:MaxWordBytes], "end"}
	if !slices.Equal(got, want) {
		t.Errorf("Words = %q, want %q", got, want)
	}
	// The cut falls on a rune boundary: 63 bytes of "x" and a two-byte
	// letter do not fit in 64.
	w := slices.Collect(Words(strings.Repeat("x", MaxWordBytes-1) + "é"))
	if len(w) != 1 || w[0] != strings.Repeat("x", MaxWordBytes-1) {
		t.Errorf("cut word = %q", w)
	}
}

func TestAnalyze(t *testing.T) {
	got := slices.Collect(Analyze("The payments pods were restarted, and THE connection is connecting to 2 databases"))
	want := []string{"payment", "pod", "restart", "connect", "connect", "2", "databas"}
	if !slices.Equal(got, want) {
		t.Errorf("Analyze = %q, want %q", got, want)
	}
	if got, want := Terms("a B a b c connected connection"), []string{"b", "c", "connect"}; !slices.Equal(got, want) {
		t.Errorf("Terms = %q, want %q", got, want)
	}
	for _, text := range []string{" -- ", "the a an of", ""} {
		if got := Terms(text); len(got) != 0 {
			t.Errorf("Terms(%q) = %q, want none", text, got)
		}
	}
	if !IsStopword("the") || !IsStopword("what") || !IsStopword("themselves") || IsStopword("The") || IsStopword("parcel") {
		t.Error("IsStopword")
	}
	if Stem("running") != "run" || Stem("café") != "café" || Stem("x2s") != "x2s" {
		t.Errorf("Stem: %q %q %q", Stem("running"), Stem("café"), Stem("x2s"))
	}
}

// TestBM25Formula checks the scores of a tiny corpus against the formula
// written out by hand.
func TestBM25Formula(t *testing.T) {
	docs := []Doc[string]{
		{"a", "payments latency spike"},      // 3 terms
		{"b", "payments payments restarted"}, // 3 terms
		{"c", "nothing report"},              // 2 terms
	}
	const k1, b = 1.2, 0.75
	avgdl := 8.0 / 3
	idf := func(df float64) float64 { return math.Log(1 + (3-df+0.5)/(df+0.5)) }
	w := func(tf, dl, df float64) float64 {
		return idf(df) * tf * (k1 + 1) / (tf + k1*(1-b+b*dl/avgdl))
	}
	want := map[string]float64{
		"a": w(1, 3, 2) + w(1, 3, 1),
		"b": w(2, 3, 2),
	}
	hits, err := Rank("payments spike", docs, DefaultParams(), 10, ByScore(func(a, b string) bool { return a < b }), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 {
		t.Fatalf("hits %v", hits)
	}
	for _, h := range hits {
		if math.Abs(h.Score-want[h.Ref]) > 1e-12 {
			t.Errorf("%s scored %v, want %v", h.Ref, h.Score, want[h.Ref])
		}
	}
	if hits[0].Ref != "a" {
		t.Errorf("best is %s, want a (the rarer term)", hits[0].Ref)
	}
	if IDF(10, 10) <= 0 || IDF(10, 0) <= IDF(10, 1) {
		t.Errorf("IDF(10,10) = %v, IDF(10,0) = %v, IDF(10,1) = %v", IDF(10, 10), IDF(10, 0), IDF(10, 1))
	}
}

func TestParams(t *testing.T) {
	for _, p := range []Params{{-1, 0.5}, {math.NaN(), 0.5}, {math.Inf(1), 0.5}, {1, -0.1}, {1, 1.5}, {1, math.NaN()}} {
		if err := p.Validate(); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("%v: %v", p, err)
		}
		x := NewIndex[int]()
		x.Add(1, "word")
		q := NewQuery("word")
		if _, err := x.Search(&q, p, NewTopK(1, byID), nil); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("Search with %v: %v", p, err)
		}
		if _, err := Rank("word", []Doc[int]{{1, "word"}}, p, 1, byID, nil); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("Rank with %v: %v", p, err)
		}
	}
	for _, p := range []Params{{}, {0, 1}, DefaultParams(), {3, 0.3}} {
		if err := p.Validate(); err != nil {
			t.Errorf("%v: %v", p, err)
		}
	}
	if _, err := Rank("word", nil, DefaultParams(), 0, byID, nil); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("Rank with k 0: %v", err)
	}
}

// byID orders int references' hits by score, then the greater id first.
var byID = ByScore(newerID)

// newerID orders references of equal score: the greater first.
func newerID(a, b int) bool { return a > b }

// pieces are what random texts and queries are made of: words in several
// cases and inflections, stopwords, letters whose case variants differ in
// length (the Kelvin sign, the Turkish dotted I), digits, separators of
// one and several bytes, invalid UTF-8, and words past MaxWordBytes.
var pieces = []string{
	"openssl", "OpenSSL", "cve", "CVE", "2024", "x", "K", "\u212a", "\u212aey", "key", "KEY", "keys",
	"İstanbul", "istanbul", "straße", "Ωmega", "ωmega", "日本", "語", "the", "The", "and", "of",
	"connect", "connected", "connection", "running", "run", "runs", "payments", "payment",
	" ", " ", " ", "-", ": ", " | ", "\u00a0", "\u2014", "\xff", "\xe2\x82", "_", "é", "É", "a", "A1",
	strings.Repeat("long", 17), strings.Repeat("LONG", 18),
}

func randomText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

// randomQuery returns a random query text with at least one term.
func randomQuery(rng *rand.Rand) string {
	for {
		s := strings.ToValidUTF8(randomText(rng, 1+rng.IntN(6)), " ")
		if len(Terms(s)) > 0 {
			return s
		}
	}
}

// TestSearchMatchesRank checks that Search over any set of partitions,
// under random adds and removes, ranks exactly as Rank over the live
// documents of those partitions: the same references with bit-identical
// scores, keep applied before the best k are chosen.
func TestSearchMatchesRank(t *testing.T) {
	// The partitions are each in a corpus of their own, all in one, or
	// in two: a search reads a term's partitions off the corpus's list,
	// looks it up in each partition, or both.
	layouts := map[string]func(i int) int{
		"own corpora": func(i int) int { return i },
		"one corpus":  func(int) int { return 0 },
		"two corpora": func(i int) int { return i % 2 },
	}
	for name, corpusOf := range layouts {
		t.Run(name, func(t *testing.T) { testSearchMatchesRank(t, corpusOf) })
	}
	// Every search weighs its postings with the length norms of
	// Scorer.tabulate, as large ones do.
	defer func(at int) { tabulateAt = at }(tabulateAt)
	tabulateAt = 0
	t.Run("tabulated", func(t *testing.T) { testSearchMatchesRank(t, layouts["one corpus"]) })
	// The corpora pack every few postings added or dropped (pack.go),
	// so searches, adds, removes and compactions meet packed arrays.
	defer func(floor int) { packFloor = floor }(packFloor)
	packFloor = 4
	t.Run("packed often", func(t *testing.T) { testSearchMatchesRank(t, layouts["two corpora"]) })
	// Every search marks its partitions in a map, as a search of a few
	// partitions of a large corpus does (denseMarks).
	defer func(d int64) { denseMarks = d }(denseMarks)
	denseMarks = 0
	t.Run("marks in a map", func(t *testing.T) { testSearchMatchesRank(t, layouts["one corpus"]) })
}

func testSearchMatchesRank(t *testing.T, corpusOf func(i int) int) {
	rng := rand.New(rand.NewPCG(5, 6))
	const nparts = 12
	parts := make([]*Index[int], nparts)
	live := make([]map[int]string, nparts)
	corpora := map[int]*Corpus[int]{}
	for i := range parts {
		c := corpora[corpusOf(i)]
		if c == nil {
			c = NewCorpus[int]()
			corpora[corpusOf(i)] = c
		}
		parts[i] = c.NewIndex()
		live[i] = map[int]string{}
	}
	params := []Params{DefaultParams(), {}, {K1: 2, B: 1}}
	for step := range 9000 {
		pi := rng.IntN(nparts)
		x := parts[pi]
		// Every other thousand steps removes more than it adds, so
		// partitions empty and fill again.
		removing := 3
		if step/1000%2 == 1 {
			removing = 1
		}
		if len(live[pi]) > 0 && rng.IntN(removing+1) < max(1, 3-removing) {
			var ref int
			for ref = range live[pi] {
				break
			}
			if !x.Remove(ref) || x.Remove(ref) {
				t.Fatalf("step %d: Remove of %d not once", step, ref)
			}
			delete(live[pi], ref)
		} else {
			text := randomText(rng, rng.IntN(20))
			// Every other document is tagged with its reference's
			// rest by 5; the others, 0, and a search of tags 0
			// admits them all.
			var added bool
			if step%2 == 1 {
				added = x.AddTagged(step, text, uint8(step%5))
			} else {
				added = x.Add(step, text)
			}
			if !added || x.Add(step, "ignored: an indexed reference keeps its text") {
				t.Fatalf("step %d: Add not once", step)
			}
			live[pi][step] = text
		}
		checkCorpora(t, step, parts, corpora)
		if x.Len() != len(live[pi]) || x.Removed() > max(x.Len(), compactAt) {
			t.Fatalf("step %d: Len %d Removed %d, want Len %d", step, x.Len(), x.Removed(), len(live[pi]))
		}
		if step%7 != 0 {
			continue
		}
		var searched []*Index[int]
		var docs []Doc[int]
		one := rng.IntN(nparts) // alone, or with each of the others by chance
		alone := rng.IntN(3) == 0
		for i := range parts {
			if i == one || !alone && rng.IntN(2) == 0 {
				searched = append(searched, parts[i])
				for ref, text := range live[i] {
					docs = append(docs, Doc[int]{ref, text})
				}
			}
		}
		query := randomQuery(rng)
		q := NewQuery(query)
		k := 1 + rng.IntN(8)
		p := params[rng.IntN(len(params))]
		q.Tags = uint64(rng.IntN(32)) // of 0 to 4; 0 admits every tag
		// Only odd documents pass keep, and those whose tag q admits.
		odd := func(r int) bool { return r%2 == 1 }
		admitted := func(r int) bool { return odd(r) && (q.Tags == 0 || q.Tags&(1<<(r%5)) != 0) }
		top := NewTopK(k, byID)
		if step%2 == 0 {
			top = NewTopKByScore(k, newerID)
		}
		got, err := Search(&q, searched, p, top, odd)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Rank(query, docs, p, k, byID, admitted)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("step %d, query %q: Search %v, Rank %v", step, query, got, want)
		}
		// Counting texts one by one, as a scan does, scores the same.
		var st Stats
		tf := make([]int, len(q.Terms()))
		for _, d := range docs {
			st.AddDoc(q.Count(d.Text, tf), tf)
		}
		var sum Stats
		for _, x := range searched {
			sum.Add(x.Stats(&q))
		}
		if sum.Docs != st.Docs || sum.Length != st.Length || len(docs) > 0 && !slices.Equal(sum.DF, st.DF) {
			t.Fatalf("step %d: index stats %+v, counted %+v", step, sum, st)
		}
		sc := NewScorer(st, p)
		scan := NewTopK(k, byID)
		for _, d := range docs {
			if s := sc.Score(q.Count(d.Text, tf), tf); s > 0 && admitted(d.Ref) {
				if h := (Hit[int]{Ref: d.Ref, Score: s}); scan.Wants(h) {
					scan.Insert(h)
				}
			}
		}
		if !slices.Equal(scan.Hits(), want) {
			t.Fatalf("step %d, query %q: scan %v, Rank %v", step, query, scan.Hits(), want)
		}
		groups := checkGroupScores(t, step, query, &q, p, parts, live, searched)
		// SearchGroups ranks the same, with a partition repeated and a
		// nil one added, and each hit carries its partition's score.
		top = NewTopK(k, byID)
		if step%2 == 0 {
			top = NewTopKByScore(k, newerID)
		}
		hits, err := SearchGroups(&q, append(append(slices.Clone(searched), nil), searched...), p, top, odd)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != len(want) {
			t.Fatalf("step %d, query %q: SearchGroups %v, Rank %v", step, query, hits, want)
		}
		for i, h := range hits {
			pi := slices.IndexFunc(live, func(m map[int]string) bool { _, ok := m[h.Ref]; return ok })
			if h.Ref != want[i].Ref || h.Score != want[i].Score || h.Group != groups[pi] || h.Group <= 0 {
				t.Fatalf("step %d, query %q: SearchGroups hit %+v, Rank %+v, its partition's score %v", step, query, h, want[i], groups[pi])
			}
		}
	}
	n := 0
	for ref := range parts[0].Refs() {
		if _, ok := live[0][ref]; !ok {
			t.Fatalf("Refs yields %d, which is not live", ref)
		}
		n++
	}
	if n != len(live[0]) {
		t.Fatalf("Refs yields %d references, want %d", n, len(live[0]))
	}
}

// checkCorpora checks that the corpora and their partitions agree: each
// term's list names each partition holding it once, at the position the
// partition records, no partition holds a term its corpus does not list,
// and a partition with no live document holds no term.
func checkCorpora(t *testing.T, step int, parts []*Index[int], corpora map[int]*Corpus[int]) {
	t.Helper()
	held := 0
	for _, c := range corpora {
		checkAccounts(t, step, c)
		for text, tm := range c.terms {
			if tm.text != text || len(tm.parts) == 0 {
				t.Fatalf("step %d: term %q listed as %q with %d partitions", step, text, tm.text, len(tm.parts))
			}
			for j, h := range tm.parts {
				if h.x.corpus != c || h.x.at[tm] != int32(j) {
					t.Fatalf("step %d: term %q lists a partition at %d that records %d", step, text, j, h.x.at[tm])
				}
				held++
			}
		}
	}
	n := 0
	taken := map[*Corpus[int]]map[int32]bool{}
	for _, x := range parts {
		n += len(x.at)
		if x.Len() == 0 && len(x.at) > 0 {
			t.Fatalf("step %d: an empty partition holds %d terms", step, len(x.at))
		}
		// A partition holding documents has a number of its own, in
		// 1 to last and not free; an empty one has none.
		c := x.corpus
		if taken[c] == nil {
			taken[c] = map[int32]bool{}
			for _, num := range c.free {
				if num < 1 || num > c.last() || taken[c][num] {
					t.Fatalf("step %d: number %d free twice or beyond %d", step, num, c.last())
				}
				taken[c][num] = true
			}
		}
		switch {
		case x.Len() == 0 && x.num != 0:
			t.Fatalf("step %d: an empty partition keeps number %d", step, x.num)
		case x.Len() > 0 && (x.num < 1 || x.num > c.last() || taken[c][x.num]):
			t.Fatalf("step %d: a partition holding documents has number %d, taken or beyond %d", step, x.num, c.last())
		}
		if x.num != 0 {
			taken[c][x.num] = true
		}
	}
	for c, nums := range taken {
		if len(nums) != int(c.last()) {
			// Every number up to last is free or taken by one of parts,
			// the corpus's only partitions.
			t.Fatalf("step %d: %d numbers accounted for, %d issued", step, len(nums), c.last())
		}
	}
	if n != held {
		t.Fatalf("step %d: the partitions hold %d terms, the corpora list %d", step, n, held)
	}
}

// checkAccounts checks that c counts the postings added and dropped
// since it packed, and packed once they reached the threshold (pack.go),
// and that it finds each of its numbered partitions by number.
func checkAccounts(t *testing.T, step int, c *Corpus[int]) {
	t.Helper()
	total := 0
	for _, tm := range c.terms {
		for _, h := range tm.parts {
			total += len(h.list)
		}
	}
	if total != c.packed+c.added-c.dropped || c.added+c.dropped >= max(c.packed/4, packFloor) {
		t.Fatalf("step %d: %d postings; %d when packed, %d added and %d dropped since", step, total, c.packed, c.added, c.dropped)
	}
	for i, x := range c.byNum {
		if x != nil && (x.num != int32(i+1) || x.Len() == 0) || x == nil && !slices.Contains(c.free, int32(i+1)) {
			t.Fatalf("step %d: number %d finds a partition numbered otherwise, empty, or none while not free", step, i+1)
		}
	}
}

// checkGroupScores checks the partitions' scores as one document that
// SearchGroups' hits carry, over searched with a partition listed twice
// and a nil one added, against Rank over their live texts joined into one
// document per partition: every live document a hit, each carrying its
// partition's score, and every partition scoring above 0 reached. It
// returns those scores, by partition.
func checkGroupScores(t *testing.T, step int, query string, q *Query, p Params, parts []*Index[int], live []map[int]string, searched []*Index[int]) []float64 {
	t.Helper()
	var groups []Doc[int]
	docs := 0
	for i, x := range parts {
		if !slices.Contains(searched, x) || len(live[i]) == 0 {
			continue
		}
		refs := slices.Sorted(maps.Keys(live[i]))
		texts := make([]string, len(refs))
		for j, ref := range refs {
			texts[j] = live[i][ref]
		}
		groups = append(groups, Doc[int]{i, strings.Join(texts, " ")})
		docs += len(refs)
	}
	want := make([]float64, len(parts))
	if len(groups) > 0 {
		hits, err := Rank(query, groups, p, len(groups), byID, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			want[h.Ref] = h.Score
		}
	}
	all := *q
	all.Tags = 0 // every document a candidate
	withRepeat := append(append(slices.Clone(searched), nil), searched...)
	hits, err := SearchGroups(&all, withRepeat, p, NewTopK(docs+1, byID), nil)
	if err != nil {
		t.Fatal(err)
	}
	reached := make([]bool, len(parts))
	for _, h := range hits {
		pi := slices.IndexFunc(live, func(m map[int]string) bool { _, ok := m[h.Ref]; return ok })
		if h.Group != want[pi] {
			t.Fatalf("step %d, query %q: a hit of partition %d carries %v, Rank over the joined texts %v", step, query, pi, h.Group, want[pi])
		}
		reached[pi] = true
	}
	for i, w := range want {
		if w > 0 && !reached[i] {
			t.Fatalf("step %d, query %q: partition %d scores %v as one document, and no hit of it came", step, query, i, w)
		}
	}
	return want
}

// TestOutsideScopeMovesNoScore checks that documents in a partition not
// searched change no score, and that documents keep refuses still count.
func TestOutsideScopeMovesNoScore(t *testing.T) {
	mine, theirs := NewIndex[int](), NewIndex[int]()
	mine.Add(1, "openssl upgrade needed on payments")
	mine.Add(2, "payments latency spike")
	q := NewQuery("openssl payments")
	before, _ := Search(&q, []*Index[int]{mine}, DefaultParams(), NewTopK(5, byID), nil)
	for i := range 1000 {
		theirs.Add(100+i, "openssl openssl openssl")
	}
	after, _ := Search(&q, []*Index[int]{mine, mine}, DefaultParams(), NewTopK(5, byID), nil)
	if !slices.Equal(before, after) || len(before) != 2 {
		t.Fatalf("another partition moved the scores: %v, then %v", before, after)
	}
	both, _ := Search(&q, []*Index[int]{mine, theirs}, DefaultParams(), NewTopK(5, byID), func(r int) bool { return r < 100 })
	if len(both) != 2 || both[0].Score == before[0].Score {
		t.Fatalf("searched partitions' statistics not counted: %v vs %v", both, before)
	}
}

// TestTies checks that documents of the same terms and length score
// exactly alike, however they were reached, and are ordered by the tie.
func TestTies(t *testing.T) {
	a, b := NewIndex[int](), NewIndex[int]()
	words := "alpha beta gamma delta epsilon zeta eta theta"
	for i := range 50 {
		// The same words in another order, in another partition.
		w := strings.Fields(words)
		rand.New(rand.NewPCG(uint64(i), 1)).Shuffle(len(w), func(i, j int) { w[i], w[j] = w[j], w[i] })
		if i%2 == 0 {
			a.Add(i, strings.Join(w, " "))
		} else {
			b.Add(i, strings.Join(w, " "))
		}
		a.Add(1000+i, fmt.Sprintf("filler %d text", i))
	}
	q := NewQuery("theta alpha delta zeta")
	hits, err := Search(&q, []*Index[int]{a, b}, DefaultParams(), NewTopK(50, byID), nil)
	if err != nil || len(hits) != 50 {
		t.Fatalf("%v, %v", len(hits), err)
	}
	for i, h := range hits {
		if h.Score != hits[0].Score || h.Ref != 49-i {
			t.Fatalf("hit %d: %v, want ref %d with score %v", i, h, 49-i, hits[0].Score)
		}
	}
}

// TestCompactionBoundsDeadWeight adds and removes many documents and
// checks the index holds postings of at most about as many removed
// documents as live ones.
func TestCompactionBoundsDeadWeight(t *testing.T) {
	x := NewIndex[int]()
	for i := range 100_000 {
		x.Add(i, fmt.Sprintf("entry %d holds word%d", i, i%1000))
		if i >= 10 {
			x.Remove(i - 10)
		}
		if len(x.refs) > 2*max(x.Len(), compactAt)+1 {
			t.Fatalf("after %d: %d documents held for %d live", i, len(x.refs), x.Len())
		}
	}
	if len(x.at) > 2000 || x.corpus.Terms() != len(x.at) {
		t.Fatalf("%d terms held for %d live documents (%d in the corpus)", len(x.at), x.Len(), x.corpus.Terms())
	}
	q := NewQuery("word999 entry")
	hits, _ := x.Search(&q, DefaultParams(), NewTopK(3, byID), nil)
	if len(hits) != 3 || hits[0].Ref != 99_999 {
		t.Fatalf("after compaction: %v", hits)
	}
}

// TestTopKMerge checks that hits split among several TopKs and merged
// rank as one TopK fed all of them.
// TestTopKByScore checks that a TopK made by NewTopKByScore keeps what
// one made by NewTopK with ByScore keeps, in the same order, and that
// Refuses refuses only hits Wants refuses, over offers with many equal
// scores.
func TestTopKByScore(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 300 {
		k := 1 + rng.IntN(12)
		fast, plain := NewTopKByScore(k, newerID), NewTopK(k, byID)
		refused := 0
		for i := range rng.IntN(200) {
			h := Hit[int]{Ref: rng.IntN(1000)*1000 + i, Score: float64(rng.IntN(6)) / 4}
			if fast.Refuses(h.Score) {
				refused++
				if fast.Wants(h) {
					t.Fatalf("Refuses(%v) though Wants(%v): kept %v", h.Score, h, fast.Hits())
				}
			} else if fast.Wants(h) {
				fast.Insert(h)
			}
			if plain.Refuses(h.Score) {
				t.Fatal("a TopK of NewTopK refused a score")
			}
			if plain.Wants(h) {
				plain.Insert(h)
			}
			if rng.IntN(20) == 0 { // Hits sorts; the next offer heaps again
				fast.Hits()
			}
		}
		if !slices.Equal(fast.Hits(), plain.Hits()) {
			t.Fatalf("NewTopKByScore kept %v, NewTopK %v", fast.Hits(), plain.Hits())
		}
	}
}

func TestTopKMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 200 {
		k := 1 + rng.IntN(5)
		whole, parts := NewTopK(k, byID), []*TopK[int]{NewTopK(k, byID), NewTopK(k, byID), NewTopK(k, byID)}
		for i := range rng.IntN(40) {
			h := Hit[int]{Ref: i, Score: float64(rng.IntN(4))}
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
			t.Fatalf("merged %v, whole %v", parts[0].Hits(), whole.Hits())
		}
	}
}

// FuzzAnalyze checks the analyzer's invariants on any text: terms are
// non-empty, folded, at most MaxWordBytes long before folding, never
// stopwords; Terms are distinct; the results are deterministic; and an
// Index of the text agrees with counting it.
func FuzzAnalyze(f *testing.F) {
	f.Add("[scan/cve] Task: check OpenSSL | Result: openssl upgrade needed")
	f.Add("\u212aey KEY k\u212a ΟΔΟΣ ς")
	f.Add("İstanbul \xff istanbul the and")
	f.Add(strings.Repeat("long", 17) + "é" + strings.Repeat("LONG", 17))
	f.Fuzz(func(t *testing.T, text string) {
		all := slices.Collect(Analyze(text))
		if again := slices.Collect(Analyze(text)); !slices.Equal(all, again) {
			t.Fatalf("Analyze not deterministic: %q, then %q", all, again)
		}
		for _, term := range all {
			if term == "" || !utf8.ValidString(term) || fold(term) != term || IsStopword(term) || len(term) > 3*MaxWordBytes {
				t.Fatalf("bad term %q of %q", term, text)
			}
		}
		words := slices.Collect(Words(text))
		for _, w := range words {
			if w == "" || fold(w) != w {
				t.Fatalf("bad word %q of %q", w, text)
			}
		}
		terms := Terms(text)
		for i, term := range terms {
			if !slices.Contains(all, term) || slices.Contains(terms[:i], term) {
				t.Fatalf("Terms %q of %q, Analyze %q", terms, text, all)
			}
		}
		if len(all) > 0 && len(terms) == 0 {
			t.Fatalf("no Terms though Analyze has %q", all)
		}
		q := NewQuery(text)
		tf := make([]int, len(q.Terms()))
		if n := q.Count(text, tf); n != len(all) {
			t.Fatalf("Count length %d, Analyze %d", n, len(all))
		}
		x := NewIndex[int]()
		x.Add(1, text)
		if st := x.Stats(&q); st.Length != len(all) || st.Docs != 1 {
			t.Fatalf("Stats %+v for %d terms", st, len(all))
		}
	})
}

// TestSearchKeepRefusingMost checks that a search whose keep refuses
// almost every document, whose documents score alike in large groups, or
// both, returns the best k of those keep accepts, as Rank does, for small
// and large k.
func TestSearchKeepRefusingMost(t *testing.T) {
	x := NewIndex[int]()
	var docs []Doc[int]
	for i := range 5000 {
		text := "alpha beta"
		if i%3 == 0 {
			text = "alpha alpha gamma " + strings.Repeat("delta ", i%7)
		}
		x.Add(i, text)
		docs = append(docs, Doc[int]{i, text})
	}
	for _, keep := range []func(int) bool{
		nil,
		func(r int) bool { return r%97 == 5 },
		func(r int) bool { return r > 4990 },
		func(int) bool { return false },
	} {
		for _, k := range []int{1, 10, 300, 6000} {
			for _, query := range []string{"alpha", "beta", "alpha gamma delta"} {
				q := NewQuery(query)
				got, err := x.Search(&q, DefaultParams(), NewTopK(k, byID), keep)
				if err != nil {
					t.Fatal(err)
				}
				want, err := Rank(query, docs, DefaultParams(), k, byID, keep)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("query %q, k %d: Search returned %d hits, Rank %d", query, k, len(got), len(want))
				}
			}
		}
	}
}
