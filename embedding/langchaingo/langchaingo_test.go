package langchaingo_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/embedding/langchaingo"
	"github.com/tmc/langchaingo/embeddings"
)

// fake is an embeddings.Embedder whose output the test decides.
type fake struct {
	docs    func(texts []string) ([][]float32, error)
	query   func(text string) ([]float32, error)
	queried []string
}

func (f *fake) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return f.docs(texts)
}

func (f *fake) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	f.queried = append(f.queried, text)
	return f.query(text)
}

// lengths embeds each text as {len, 1}.
func lengths(texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t)), 1}
	}
	return out, nil
}

func TestEmbedKeepsOrder(t *testing.T) {
	a, err := langchaingo.New(&fake{docs: lengths}, "fake-v1")
	if err != nil {
		t.Fatal(err)
	}
	if a.Model() != "fake-v1" {
		t.Errorf("Model() = %q", a.Model())
	}
	vecs, err := a.Embed(context.Background(), []string{"a", "abc", "ab"})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float32{1, 3, 2} {
		if vecs[i][0] != want {
			t.Errorf("vector %d = %v, want first value %v", i, vecs[i], want)
		}
	}
	if vecs, err := a.Embed(context.Background(), nil); err != nil || vecs != nil {
		t.Errorf("no texts: %v, %v", vecs, err)
	}
}

func TestMalformedOutputIsClassified(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	cases := []struct {
		name string
		out  [][]float32
		kind error
	}{
		{"too few vectors", [][]float32{{1}}, memory.ErrInvalidArgument},
		{"too many vectors", [][]float32{{1}, {1}, {1}}, memory.ErrInvalidArgument},
		{"unequal dimensions", [][]float32{{1, 2}, {1}}, memory.ErrInvalidArgument},
		{"NaN", [][]float32{{1, nan}, {1, 2}}, memory.ErrInvalidArgument},
		{"infinity", [][]float32{{1, 2}, {inf, 2}}, memory.ErrInvalidArgument},
		{"all zeros", [][]float32{{0, 0}, {1, 2}}, memory.ErrInvalidArgument},
		{"empty vector", [][]float32{{}, {}}, memory.ErrInvalidArgument},
		{"too many dimensions", [][]float32{make([]float32, memory.MaxVectorDims+1), make([]float32, memory.MaxVectorDims+1)}, memory.ErrTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.kind == memory.ErrTooLarge {
				c.out[0][0], c.out[1][0] = 1, 1
			}
			a, _ := langchaingo.New(&fake{docs: func([]string) ([][]float32, error) { return c.out, nil }}, "bad-model")
			vecs, err := a.Embed(context.Background(), []string{"x", "y"})
			if !errors.Is(err, c.kind) {
				t.Fatalf("err = %v, want %v", err, c.kind)
			}
			if vecs != nil {
				t.Errorf("malformed output was returned: %v", vecs)
			}
			if !strings.Contains(err.Error(), `"bad-model"`) {
				t.Errorf("the error does not name the model: %v", err)
			}
		})
	}
}

type providerFailure struct{ status int }

func (e *providerFailure) Error() string { return fmt.Sprintf("status %d", e.status) }

func TestProviderErrorsStayReachable(t *testing.T) {
	a, _ := langchaingo.New(&fake{
		docs:  func([]string) ([][]float32, error) { return nil, fmt.Errorf("openai: %w", &providerFailure{429}) },
		query: func(string) ([]float32, error) { return nil, &providerFailure{503} },
	}, "m")
	_, err := a.Embed(context.Background(), []string{"x"})
	var pf *providerFailure
	if !errors.Is(err, memory.ErrUnavailable) {
		t.Errorf("Embed: err = %v, want memory.ErrUnavailable", err)
	}
	if !errors.As(err, &pf) || pf.status != 429 {
		t.Errorf("Embed: err = %v, the provider's error is not reachable", err)
	}
	_, err = a.EmbedQuery(context.Background(), "x")
	if !errors.Is(err, memory.ErrUnavailable) {
		t.Errorf("EmbedQuery: err = %v, want memory.ErrUnavailable", err)
	}
	if !errors.As(err, &pf) || pf.status != 503 {
		t.Errorf("EmbedQuery: err = %v, the provider's error is not reachable", err)
	}
}

func TestContextErrorsUnchanged(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	called := false
	f := &fake{docs: func([]string) ([][]float32, error) {
		called = true
		cancel()
		return nil, fmt.Errorf("provider: %w", context.Canceled)
	}}
	a, _ := langchaingo.New(f, "m")
	if _, err := a.Embed(ctx, []string{"x"}); err != context.Canceled {
		t.Errorf("cancelled during the call: err = %v, want context.Canceled itself", err)
	}
	called = false
	if _, err := a.Embed(ctx, []string{"x"}); err != context.Canceled || called {
		t.Errorf("cancelled before the call: err = %v, provider called %v", err, called)
	}
}

func TestEmbedQueryUsesTheProvidersQueryPath(t *testing.T) {
	f := &fake{
		docs:  lengths,
		query: func(text string) ([]float32, error) { return []float32{0, 0, 7}, nil },
	}
	a, _ := langchaingo.New(f, "m")
	v, err := a.EmbedQuery(context.Background(), "where did alice move?")
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 3 || v[2] != 7 || len(f.queried) != 1 {
		t.Errorf("EmbedQuery = %v (queried %v), want the provider's query vector", v, f.queried)
	}
	f.query = func(string) ([]float32, error) { return []float32{0, 0}, nil }
	if _, err := a.EmbedQuery(context.Background(), "x"); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("zero query vector: err = %v", err)
	}
}

func TestNewRefusesBadArguments(t *testing.T) {
	f := &fake{docs: lengths}
	for _, model := range []string{"", strings.Repeat("m", langchaingo.MaxModelBytes+1), "a\nb", "\xff"} {
		if _, err := langchaingo.New(f, model); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("model %q: err = %v", model, err)
		}
	}
	if _, err := langchaingo.New(nil, "m"); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("nil embedder: err = %v", err)
	}
}

// TestLangchaingoEmbedderImpl runs the adapter over langchaingo's own
// batching embedder, as a provider's client plugs into it.
func TestLangchaingoEmbedderImpl(t *testing.T) {
	var batches []int
	client := embeddings.EmbedderClientFunc(func(ctx context.Context, texts []string) ([][]float32, error) {
		batches = append(batches, len(texts))
		return lengths(texts)
	})
	impl, err := embeddings.NewEmbedder(client, embeddings.WithBatchSize(2))
	if err != nil {
		t.Fatal(err)
	}
	a, err := langchaingo.New(impl, "client-v1")
	if err != nil {
		t.Fatal(err)
	}
	vecs, err := a.Embed(context.Background(), []string{"a", "bb", "ccc"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 3 || vecs[2][0] != 3 || len(batches) != 2 {
		t.Errorf("vectors %v in batches %v", vecs, batches)
	}
}

func ExampleNew() {
	// Any langchaingo embedder: openai.New, ollama.New, ... wrapped by
	// embeddings.NewEmbedder. Here a client function stands in for one.
	client := embeddings.EmbedderClientFunc(func(ctx context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, t := range texts {
			out[i] = []float32{float32(len(t)), 1}
		}
		return out, nil
	})
	lc, err := embeddings.NewEmbedder(client)
	if err != nil {
		fmt.Println(err)
		return
	}
	e, err := langchaingo.New(lc, "length-v1")
	if err != nil {
		fmt.Println(err)
		return
	}
	vecs, err := e.Embed(context.Background(), []string{"hi", "hello"})
	fmt.Println(e.Model(), vecs, err)
	// Output: length-v1 [[2 1] [5 1]] <nil>
}
