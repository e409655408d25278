package embeddingtest_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/embedding/embeddingtest"
)

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

func TestDeterministicUnitVectors(t *testing.T) {
	var e embeddingtest.Embedder
	texts := []string{"The cat sat on the mat", "the CAT sat on the mat!", "", "!!!", "quarterly revenue grew"}
	a, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if err := memory.CheckEmbeddings(len(texts), a); err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if len(a[i]) != embeddingtest.DefaultDims {
			t.Fatalf("vector %d has %d dimensions", i, len(a[i]))
		}
		if c := cosine(a[i], b[i]); c < 0.999999 {
			t.Errorf("text %q: two calls differ (cosine %v)", texts[i], c)
		}
		var n float64
		for _, x := range a[i] {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-5 {
			t.Errorf("text %q: squared norm %v, want 1", texts[i], n)
		}
	}
	if c := cosine(a[0], a[1]); c < 0.999999 {
		t.Errorf("case and punctuation changed the vector: cosine %v", c)
	}
	if e.Calls() != 2 || e.Texts() != int64(2*len(texts)) {
		t.Errorf("Calls %d, Texts %d; want 2, %d", e.Calls(), e.Texts(), 2*len(texts))
	}
}

func TestSimilarTextsAreNearer(t *testing.T) {
	e := embeddingtest.Embedder{Dims: 256}
	v, err := e.Embed(context.Background(), []string{
		"alice moved to lisbon in may",
		"in may alice moved to porto",
		"the build failed on the arm runner",
	})
	if err != nil {
		t.Fatal(err)
	}
	near, far := cosine(v[0], v[1]), cosine(v[0], v[2])
	if near <= far || near < 0.5 {
		t.Errorf("shared words: cosine %v; no shared words: %v", near, far)
	}
	if e.Model() != "embeddingtest-words-v1/256" {
		t.Errorf("Model() = %q", e.Model())
	}
}

func TestBadDimsAndCancelledContext(t *testing.T) {
	for _, d := range []int{-1, memory.MaxVectorDims + 1} {
		e := embeddingtest.Embedder{Dims: d}
		if _, err := e.Embed(context.Background(), []string{"x"}); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("Dims %d: err = %v, want ErrInvalidArgument", d, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var e embeddingtest.Embedder
	if _, err := e.Embed(ctx, []string{"x"}); err != context.Canceled {
		t.Errorf("cancelled: err = %v", err)
	}
	if e.Calls() != 0 {
		t.Errorf("a cancelled call was counted")
	}
}

func ExampleEmbedder() {
	e := embeddingtest.Embedder{Dims: 8}
	vecs, err := e.Embed(context.Background(), []string{"hello world", "hello world"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(e.Model(), len(vecs), len(vecs[0]), cosine(vecs[0], vecs[1]) > 0.9999)
	// Output: embeddingtest-words-v1/8 2 8 true
}
