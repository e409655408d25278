package recall

import (
	"context"

	"github.com/agentmem/memory/backend/driver"
)

// vectorRanking is the outcome of a recall's vector half.
type vectorRanking struct {
	hits []hit
	err  error
}

// startVector starts the vector half of a hybrid recall, which embeds text
// and searches the store's vectors for the n nearest under dq, on a
// goroutine of its own, so that the embedder's call and the search run
// while the lexical half does. The channel yields the outcome once. The
// caller cancels ctx when it no longer wants it, and receives from the
// channel before returning either way, so the goroutine never outlives
// the recall.
func (r *Recaller) startVector(ctx context.Context, dq driver.Query, text string, n int) <-chan vectorRanking {
	out := make(chan vectorRanking, 1)
	go func() {
		hits, err := r.vector(ctx, dq, text, n)
		out <- vectorRanking{hits, err}
	}()
	return out
}

// vector is the vector half of a hybrid recall: the n records nearest
// text's vector under dq, best first, by reference through a
// driver.VectorRanker (their records read later, for the few the recall
// keeps), or whole through driver.VectorSearcher. The search runs while
// the querier checks the store's model again (embedding.Querier), which
// on a database server is a round trip of its own.
func (r *Recaller) vector(ctx context.Context, dq driver.Query, text string, n int) ([]hit, error) {
	var hits []hit
	err := r.querier.EmbedQueryThen(ctx, text, func(vec []float32) error {
		var err error
		hits, err = r.nearest(ctx, dq, vec, n)
		return err
	})
	if err != nil {
		return nil, err
	}
	return hits, nil
}

// nearest returns the n records nearest vec under dq, best first.
func (r *Recaller) nearest(ctx context.Context, dq driver.Query, vec []float32, n int) ([]hit, error) {
	if vr, ok := r.store.Driver().(driver.VectorRanker); ok {
		ranked, err := vr.RankVector(ctx, dq, vec, n)
		if err != nil {
			return nil, err
		}
		hits := make([]hit, len(ranked))
		for i := range ranked {
			hits[i] = hit{ref: &ranked[i].Ref, score: ranked[i].Score}
		}
		return hits, nil
	}
	matches, err := r.store.Driver().(driver.VectorSearcher).Search(ctx, dq, vec, n)
	if err != nil {
		return nil, err
	}
	hits := make([]hit, len(matches))
	for i := range matches {
		m := &matches[i]
		ref := driver.RefOf(m.Record)
		hits[i] = hit{ref: &ref, rec: &m.Record, score: m.Score}
	}
	return hits, nil
}
