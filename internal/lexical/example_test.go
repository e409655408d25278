package lexical_test

import (
	"fmt"
	"slices"

	"github.com/agentmem/memory/internal/lexical"
)

// byName orders hits by score, then by name.
var byName = lexical.ByScore(func(a, b string) bool { return a < b })

// An index of entries keyed by their names, searched for the two best.
func Example() {
	x := lexical.NewIndex[string]()
	x.Add("a.txt", "OpenSSL upgrade needed on the payments host")
	x.Add("b.txt", "Payments latency spiked; the payment pods were restarted")
	x.Add("c.txt", "nothing to report")
	q := lexical.NewQuery("payment spikes")
	hits, err := x.Search(&q, lexical.DefaultParams(), lexical.NewTopK(2, byName), nil)
	if err != nil {
		panic(err)
	}
	for _, h := range hits {
		fmt.Printf("%s %.3f\n", h.Ref, h.Score)
	}
	// Output:
	// b.txt 1.431
	// a.txt 0.442
}

// The words of a text as the index sees them: folded, stopwords dropped,
// stemmed.
func ExampleAnalyze() {
	fmt.Println(slices.Collect(lexical.Analyze("The pods were RESTARTED after connecting to the databases")))
	// Output:
	// [pod restart connect databas]
}

// A search over the partitions one reader may see: one index per writer,
// statistics from exactly the partitions searched, and a filter applied
// before the best are chosen.
func ExampleSearch() {
	byWriter := map[string]*lexical.Index[string]{
		"alice": lexical.NewIndex[string](),
		"bob":   lexical.NewIndex[string](),
		"carol": lexical.NewIndex[string](),
	}
	byWriter["alice"].Add("alice/1", "deploy the billing service")
	byWriter["bob"].Add("bob/1", "billing deploy failed, rolled back")
	byWriter["bob"].Add("bob/2", "billing notes (draft)")
	byWriter["carol"].Add("carol/1", "billing billing billing") // not searched: moves no score
	q := lexical.NewQuery("billing deploy")
	parts := []*lexical.Index[string]{byWriter["alice"], byWriter["bob"]}
	notDraft := func(ref string) bool { return ref != "bob/2" }
	hits, err := lexical.Search(&q, parts, lexical.DefaultParams(), lexical.NewTopK(5, byName), notDraft)
	if err != nil {
		panic(err)
	}
	for _, h := range hits {
		fmt.Printf("%s %.3f\n", h.Ref, h.Score)
	}
	// Output:
	// alice/1 0.652
	// bob/1 0.525
}

// The reference ranking, from the texts alone: what Search over an index
// of the same texts returns.
func ExampleRank() {
	docs := []lexical.Doc[string]{
		{Ref: "x", Text: "payments latency spike"},
		{Ref: "y", Text: "payments payments restarted"},
		{Ref: "z", Text: "nothing to report"},
	}
	hits, err := lexical.Rank("payments spike", docs, lexical.DefaultParams(), 10, byName, nil)
	if err != nil {
		panic(err)
	}
	for _, h := range hits {
		fmt.Printf("%s %.3f\n", h.Ref, h.Score)
	}
	// Output:
	// x 1.380
	// y 0.624
}

// Partitions of one corpus, one per writer, their records tagged with
// their kinds: a search of one kind across writers reads no record to
// refuse the others.
func ExampleCorpus() {
	var kinds lexical.Tagger[string]
	c := lexical.NewCorpus[string]()
	ann, bo := c.NewIndex(), c.NewIndex()
	ann.AddTagged("ann-1", "Ann moved to Porto in May", kinds.Of("fact"))
	ann.AddTagged("ann-2", "where did you move to?", kinds.Of("turn"))
	bo.AddTagged("bo-1", "Bo moved his office to Lisbon", kinds.Of("fact"))
	q := lexical.NewQuery("moved to")
	q.Tags, _ = kinds.Query([]string{"fact"})
	hits, err := lexical.Search(&q, []*lexical.Index[string]{ann, bo}, lexical.DefaultParams(), lexical.NewTopK(5, byName), nil)
	if err != nil {
		panic(err)
	}
	for _, h := range hits {
		fmt.Println(h.Ref)
	}
	fmt.Println(c.Terms(), "terms")
	// Output:
	// ann-1
	// bo-1
	// 7 terms
}
