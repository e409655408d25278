package qdrant_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/qdrant"
	"github.com/agentmem/memory/internal/lexical"
	"github.com/agentmem/memory/internal/qdrantserver"
)

// openDims opens a driver on a new in-process server with vectors of
// dims dimensions.
func openDims(t *testing.T, dims int) *qdrant.Driver {
	t.Helper()
	host, port := qdrantserver.Start(t)
	d, err := qdrant.New(context.Background(), qdrant.Options{Client: newClient(t, host, port), Collection: "mem", Dims: dims, ExactSearch: true})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// TestSearchHybrid checks the fused search against RRF computed from
// the driver's own text and vector searches at the prefetch depth: the
// same records in the same order with the same scores, inside the
// query's scope; then a text without words (the vector search alone).
func TestSearchHybrid(t *testing.T) {
	d := openDims(t, 4)
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(7, 9))
	words := []string{"parcel", "late", "green", "tea", "garden", "train", "river", "piano"}
	var recs []memory.Record
	for _, tenant := range []string{"mine", "other"} {
		for i := range 60 {
			var text []string
			for range 1 + rnd.IntN(6) {
				text = append(text, words[rnd.IntN(len(words))])
			}
			recs = append(recs, memory.Record{
				ID: fmt.Sprintf("r%02d", i), Kind: memory.KindFact, Identity: memory.Identity{Tenant: tenant, User: "u"},
				Content: strings.Join(text, " "), Created: t0.Add(time.Duration(i) * time.Second),
				Vector: []float32{rnd.Float32() - 0.5, rnd.Float32() - 0.5, rnd.Float32() - 0.5, rnd.Float32() + 0.1},
			})
		}
	}
	if err := d.Put(ctx, recs); err != nil {
		t.Fatal(err)
	}
	q := tenantQuery("mine")
	const k = 5
	depth := 20 // hybridDepth(5)
	vec := []float32{0.3, -0.2, 0.1, 0.5}
	text := "late parcel by the river"
	byText, err := d.SearchText(ctx, q, text, depth)
	if err != nil {
		t.Fatal(err)
	}
	byVec, err := d.Search(ctx, q, vec, depth)
	if err != nil {
		t.Fatal(err)
	}
	fused := map[string]float64{}
	created := map[string]time.Time{}
	for _, list := range [][]driver.Match{byText, byVec} {
		for rank, m := range list {
			fused[m.Record.ID] += 1 / float64(2+rank) // Qdrant's RRF, k = 2, ranks from 0
			created[m.Record.ID] = m.Record.Created
		}
	}
	got, err := d.SearchHybrid(ctx, q, text, vec, k)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != k {
		t.Fatalf("SearchHybrid returned %d matches, want %d", len(got), k)
	}
	for i, m := range got {
		if m.Record.Identity.Tenant != "mine" {
			t.Errorf("result %d (%s) is tenant %q's: a leak", i, m.Record.ID, m.Record.Identity.Tenant)
		}
		if want := fused[m.Record.ID]; math.Abs(m.Score-want) > 1e-6 {
			t.Errorf("result %d (%s) has fused score %v, RRF of the two searches gives %v", i, m.Record.ID, m.Score, want)
		}
		for id, s := range fused {
			better := s > m.Score+1e-6 || (math.Abs(s-m.Score) <= 1e-6 && created[id].After(m.Record.Created))
			if better && !containsID(got[:i], id) {
				t.Errorf("result %d is %s (%v), but %s (%v) ranks above it and is not before it", i, m.Record.ID, m.Score, id, s)
			}
		}
	}

	// A text without words: the vector search alone, fused.
	alone, err := d.SearchHybrid(ctx, q, "the of and", vec, k)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range alone {
		if m.Record.ID != byVec[i].Record.ID || math.Abs(m.Score-1/float64(2+i)) > 1e-6 {
			t.Errorf("hybrid search without words: result %d is %s (%v), want %s (%v)", i, m.Record.ID, m.Score, byVec[i].Record.ID, 1/float64(2+i))
		}
	}
	if _, err := d.SearchHybrid(ctx, q, text, []float32{1, 2}, k); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("SearchHybrid with a vector of another dimension: %v, want memory.ErrInvalidArgument", err)
	}
	if _, err := d.SearchHybrid(ctx, q, "bad \xff", vec, k); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("SearchHybrid with invalid UTF-8: %v, want memory.ErrInvalidArgument", err)
	}
}

func containsID(ms []driver.Match, id string) bool {
	for _, m := range ms {
		if m.Record.ID == id {
			return true
		}
	}
	return false
}

// TestTextScores checks a text search's scores against the BM25 the
// package documents, computed here from the lexical engine's parts: IDF
// from the scope's counts, the term frequency part with the fixed
// average length.
func TestTextScores(t *testing.T) {
	d := openDims(t, 0)
	ctx := context.Background()
	texts := []string{"parcel late late", "parcel", "green tea and a parcel for the garden", "tea", ""}
	var recs []memory.Record
	for i, s := range texts {
		recs = append(recs, memory.Record{ID: fmt.Sprint("t", i), Kind: memory.KindFact, Identity: memory.Identity{Tenant: "a"}, Content: s, Created: t0})
		// Another tenant's records must not move the statistics.
		recs = append(recs, memory.Record{ID: fmt.Sprint("o", i), Kind: memory.KindFact, Identity: memory.Identity{Tenant: "b"}, Content: "parcel parcel", Created: t0})
	}
	if err := d.Put(ctx, recs); err != nil {
		t.Fatal(err)
	}
	got, err := d.SearchText(ctx, tenantQuery("a"), "late parcel", 10)
	if err != nil {
		t.Fatal(err)
	}
	n := 4 // records of tenant a with content
	df := map[string]int{"late": 1, "parcel": 3}
	score := func(text string) float64 {
		terms := map[string]int{}
		dl := 0
		for term := range lexical.Analyze(text) {
			terms[term]++
			dl++
		}
		s := 0.0
		for _, term := range []string{"late", "parcel"} {
			if f := float64(terms[term]); f > 0 {
				s += lexical.IDF(n, df[term]) * f * (lexical.DefaultK1 + 1) / (f + lexical.DefaultK1*(1-lexical.DefaultB+lexical.DefaultB*float64(dl)/qdrant.DefaultTextLength))
			}
		}
		return s
	}
	want := []string{"t0", "t1", "t2"}
	if len(got) != len(want) {
		t.Fatalf("SearchText = %d matches, want %v", len(got), want)
	}
	for i, m := range got {
		if m.Record.ID != want[i] {
			t.Errorf("result %d is %s, want %s", i, m.Record.ID, want[i])
		}
		if ref := score(m.Record.Content); math.Abs(m.Score-ref) > 1e-5*ref {
			t.Errorf("%s scores %v, the documented BM25 %v", m.Record.ID, m.Score, ref)
		}
		if m.WriterScore != 0 {
			t.Errorf("%s has writer score %v, want 0", m.Record.ID, m.WriterScore)
		}
	}
}
