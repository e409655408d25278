package tiered

import (
	"context"
	"sync/atomic"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
)

// A recall's model calls are the requests its fact search makes to
// Options.Recall.Embedder (a lexical recall makes none). The embedder is
// wrapped to count them into a counter the recall's context carries, so
// that concurrent recalls each count their own.

// callsKey is the context key of a recall's counter.
type callsKey struct{}

// withCalls returns ctx carrying a new counter of embedder requests.
func withCalls(ctx context.Context) (context.Context, *atomic.Int64) {
	n := new(atomic.Int64)
	return context.WithValue(ctx, callsKey{}, n), n
}

// counted adds one request to ctx's counter, if it carries one.
func counted(ctx context.Context) {
	if n, ok := ctx.Value(callsKey{}).(*atomic.Int64); ok {
		n.Add(1)
	}
}

// countingEmbedder is an Embedder counting its requests into the
// counter of the context they are made with. It embeds queries as the
// embedder it wraps does: with EmbedQuery when it has it, else Embed.
type countingEmbedder struct{ e memory.Embedder }

func (c countingEmbedder) Model() string { return c.e.Model() }

func (c countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	counted(ctx)
	return c.e.Embed(ctx, texts)
}

func (c countingEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	counted(ctx)
	if q, ok := c.e.(memory.QueryEmbedder); ok {
		return q.EmbedQuery(ctx, text)
	}
	vecs, err := c.e.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	if err := memory.CheckEmbeddings(1, vecs); err != nil {
		return nil, err
	}
	return vecs[0], nil
}

// embedderUsage is the Usage of n embedder requests: the Embedder
// interface reports no tokens, so every request is unreported.
func embedderUsage(n int64) extract.Usage {
	return extract.Usage{ModelCalls: int(n), UnreportedCalls: int(n)}
}
