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

// counting returns e counting its requests into the counter of the
// context they are made with, with e's shape: an EmbedQuery only when e
// has one, so that searches embed queries as they would with e.
func counting(e memory.Embedder) memory.Embedder {
	if q, ok := e.(memory.QueryEmbedder); ok {
		return countingQueryEmbedder{countingEmbedder{e}, q}
	}
	return countingEmbedder{e}
}

// countingEmbedder is an Embedder counting its requests.
type countingEmbedder struct{ e memory.Embedder }

func (c countingEmbedder) Model() string { return c.e.Model() }

func (c countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	counted(ctx)
	return c.e.Embed(ctx, texts)
}

// countingQueryEmbedder is a QueryEmbedder counting its requests.
type countingQueryEmbedder struct {
	countingEmbedder
	q memory.QueryEmbedder
}

func (c countingQueryEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	counted(ctx)
	return c.q.EmbedQuery(ctx, text)
}

// embedderUsage is the Usage of n embedder requests: the Embedder
// interface reports no tokens, so every request is unreported.
func embedderUsage(n int64) extract.Usage {
	return extract.Usage{ModelCalls: int(n), UnreportedCalls: int(n)}
}
