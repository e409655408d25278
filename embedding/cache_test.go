package embedding_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/embedding"
	"github.com/agentmem/memory/embedding/embeddingtest"
)

func TestCacheHitsAndDeduplicates(t *testing.T) {
	ctx := context.Background()
	f := newFake("m1")
	c := embedding.NewCache(f, embedding.CacheOptions{})
	v, err := c.Embed(ctx, []string{"a b", "c d", "a b"})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.sizes(); !slices.Equal(got, []int{2}) {
		t.Errorf("the model saw batches %v, want one of the 2 distinct texts", got)
	}
	if !slices.Equal(v[0], vec("a b")) || !slices.Equal(v[2], vec("a b")) || !slices.Equal(v[1], vec("c d")) {
		t.Errorf("vectors out of order")
	}
	v[0][0] = 42 // callers may modify what they get
	w, err := c.Embed(ctx, []string{"c d", "a b", "e f"})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.sizes(); !slices.Equal(got, []int{2, 1}) {
		t.Errorf("the model saw batches %v, want [2 1]", got)
	}
	if !slices.Equal(w[1], vec("a b")) {
		t.Errorf("a caller's change reached the cache")
	}
	if st := c.Stats(); st.Hits != 2 || st.Misses != 3 || st.Entries != 3 {
		t.Errorf("Stats = %+v", st)
	}
	// The model name is part of the key.
	g := newFake("m2")
	if _, err := embedding.NewCache(g, embedding.CacheOptions{}).Embed(ctx, []string{"a b"}); err != nil || g.texts() != 1 {
		t.Errorf("another model: %v, %d texts", err, g.texts())
	}
	if c.Model() != "m1" {
		t.Errorf("Model() = %q", c.Model())
	}
}

func TestCacheIsBounded(t *testing.T) {
	ctx := context.Background()
	f := newFake("m1")
	entry := 4*dims + 128
	c := embedding.NewCache(f, embedding.CacheOptions{MaxBytes: 3 * entry})
	for i := range 10 {
		if _, err := c.Embed(ctx, []string{fmt.Sprint("text ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if st := c.Stats(); st.Entries != 3 || st.Bytes > 3*entry {
		t.Errorf("Stats = %+v, want 3 entries within %d bytes", st, 3*entry)
	}
	// The most recently used survive: 7, 8, 9; 9 is touched, 10 added, 7 goes.
	c.Embed(ctx, []string{"text 9"})
	c.Embed(ctx, []string{"text 10"})
	n := f.texts()
	c.Embed(ctx, []string{"text 9", "text 8"})
	if f.texts() != n {
		t.Errorf("recently used texts were evicted")
	}
	c.Embed(ctx, []string{"text 7"})
	if f.texts() != n+1 {
		t.Errorf("the least recently used text was kept")
	}
}

// queryFake embeds queries differently from documents.
type queryFake struct{ *fake }

func (q queryFake) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	return embeddingtest.Vector("query: "+text, dims), nil
}

func TestCacheKeepsQueriesApart(t *testing.T) {
	ctx := context.Background()
	f := queryFake{newFake("m1")}
	c := embedding.NewCache(f, embedding.CacheOptions{})
	d, _ := c.Embed(ctx, []string{"alice"})
	q, err := c.EmbedQuery(ctx, "alice")
	if err != nil || !slices.Equal(q, embeddingtest.Vector("query: alice", dims)) || slices.Equal(q, d[0]) {
		t.Errorf("EmbedQuery = %v…, %v", head(q), err)
	}
	if _, err := c.EmbedQuery(ctx, "alice"); err != nil || c.Stats().Hits != 1 {
		t.Errorf("the query vector was not cached: %+v", c.Stats())
	}
	// Without a query path the document vector serves.
	plain := embedding.NewCache(newFake("m1"), embedding.CacheOptions{})
	if q, _ := plain.EmbedQuery(ctx, "alice"); !slices.Equal(q, vec("alice")) {
		t.Errorf("EmbedQuery without a query path: %v…", head(q))
	}
}

func TestCacheRefusesMalformedOutput(t *testing.T) {
	ctx := context.Background()
	f := newFake("m1")
	f.mangle = func(v [][]float32) [][]float32 { v[0][0] = float32(math.NaN()); return v }
	c := embedding.NewCache(f, embedding.CacheOptions{})
	if _, err := c.Embed(ctx, []string{"x"}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("NaN: %v", err)
	}
	if c.Stats().Entries != 0 {
		t.Errorf("malformed output was cached")
	}
	f.set(func(f *fake) { f.mangle = nil; f.fails = 1 })
	if _, err := c.Embed(ctx, []string{"x"}); err == nil {
		t.Errorf("the model's error was lost")
	}
}

func TestCacheConcurrent(t *testing.T) {
	ctx := context.Background()
	f := newFake("m1")
	c := embedding.NewCache(f, embedding.CacheOptions{MaxBytes: 20 * (4*dims + 128)})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				text := fmt.Sprint("text ", (g+i)%40)
				v, err := c.Embed(ctx, []string{text, "shared"})
				if err != nil || !slices.Equal(v[0], vec(text)) || !slices.Equal(v[1], vec("shared")) {
					t.Errorf("wrong vector for %q: %v", text, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if st := c.Stats(); st.Entries > 20 || st.Hits+st.Misses < 8*200 {
		t.Errorf("Stats = %+v", st)
	}
}
