// Package langchaingo adapts any langchaingo embeddings.Embedder (OpenAI,
// Ollama, Vertex, Bedrock, Voyage, Jina, Hugging Face and the rest) to
// memory.Embedder, so every langchaingo provider works unchanged. The
// package is named after the library it adapts; it imports langchaingo's
// embeddings package and memory, nothing else of either module.
//
// langchaingo's embedders do not say which model they run, so New takes
// the name: it is what a store records (see package embedding), and two
// configurations that return different vectors for one text need two
// names.
package langchaingo

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentmem/memory"
	"github.com/tmc/langchaingo/embeddings"
)

// MaxModelBytes is the longest model name New accepts.
const MaxModelBytes = 256

// Embedder is a memory.QueryEmbedder over a langchaingo embedder: Embed
// calls EmbedDocuments and EmbedQuery calls EmbedQuery, so providers that
// embed queries differently keep doing so. It is safe for concurrent use
// when the wrapped embedder is, as langchaingo's are.
type Embedder struct {
	e     embeddings.Embedder
	model string
}

var _ memory.QueryEmbedder = (*Embedder)(nil)

// New returns the adapter of e, whose vectors come from the named model
// (include its version, and anything else that changes the vectors, such
// as a reduced dimension: "text-embedding-3-small@512"). A nil e, or a name
// that is empty, longer than MaxModelBytes or not printable UTF-8 is
// memory.ErrInvalidArgument.
func New(e embeddings.Embedder, model string) (*Embedder, error) {
	if e == nil {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "langchaingo: nil embedder")
	}
	if err := CheckModel(model); err != nil {
		return nil, err
	}
	return &Embedder{e: e, model: model}, nil
}

// CheckModel validates a model name as New does.
func CheckModel(model string) error {
	switch {
	case model == "":
		return memory.Errorf(memory.ErrInvalidArgument, "empty model name")
	case len(model) > MaxModelBytes:
		return memory.Errorf(memory.ErrInvalidArgument, "model name is %d bytes, the limit is %d", len(model), MaxModelBytes)
	case !utf8.ValidString(model) || strings.ContainsFunc(model, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return memory.Errorf(memory.ErrInvalidArgument, "model name %q is not printable UTF-8", model)
	}
	return nil
}

// Model returns the model name given to New.
func (a *Embedder) Model() string { return a.model }

// Embed embeds texts with EmbedDocuments and checks the result with
// memory.CheckEmbeddings: one vector per text, all of one dimension, all
// finite and not all zero. Malformed output is memory.ErrInvalidArgument
// (ErrTooLarge for too many dimensions) and none of it is returned. An
// error of the provider is memory.ErrUnavailable, wrapping the provider's
// error so errors.As finds it; context errors are returned unchanged.
func (a *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(texts) == 0 {
		return nil, nil
	}
	vecs, err := a.e.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, providerError(ctx, a.model, err)
	}
	if err := memory.CheckEmbeddings(len(texts), vecs); err != nil {
		return nil, modelError(a.model, err)
	}
	return vecs, nil
}

// EmbedQuery embeds one search query with the wrapped EmbedQuery and
// checks the vector as Embed checks each of its vectors.
func (a *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v, err := a.e.EmbedQuery(ctx, text)
	if err != nil {
		return nil, providerError(ctx, a.model, err)
	}
	if err := memory.CheckEmbeddings(1, [][]float32{v}); err != nil {
		return nil, modelError(a.model, err)
	}
	return v, nil
}

// providerError returns ctx's error when ctx ended (providers often wrap
// it in their own), and otherwise err with the model named.
func providerError(ctx context.Context, model string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return memory.Wrap(memory.ErrUnavailable, err, fmt.Sprintf("langchaingo model %q", model))
}

func modelError(model string, err error) error {
	e := err.(*memory.Error)
	return memory.Errorf(e.Kind, "langchaingo model %q: %s", model, e.Msg)
}
