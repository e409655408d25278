package memory

import "context"

// Embedder turns texts into vectors for similarity search
// (Record.Vector). Implementations must be safe for concurrent use and
// return ctx's error unchanged when ctx ends first. The embedding package
// gives stored records vectors with one, off the write path, and
// embedding/langchaingo adapts any langchaingo embeddings.Embedder.
//
// Embed embeds documents: what is stored. Several models embed a search
// query differently from the passages it should find (an instruction or
// prefix for queries, a different input type); such an embedder also
// implements QueryEmbedder, which searches use when it is there. The
// interface itself stays two methods, so an embedder that treats queries
// and documents alike needs nothing more.
type Embedder interface {
	// Model names the model and its version whose vectors Embed returns,
	// such as "text-embedding-3-small". A store records the name of the
	// model its vectors come from, and refuses vectors of another: two
	// embedders that return different vectors for one text must have
	// different names.
	Model() string
	// Embed returns one vector per text, in the order of texts, all of
	// one dimension, each valid for CheckVector.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// QueryEmbedder is the optional capability of an Embedder whose model
// embeds search queries differently from documents. Searches use
// EmbedQuery when the embedder has it, and Embed otherwise.
type QueryEmbedder interface {
	Embedder
	// EmbedQuery returns the vector of one search query, of the dimension
	// Embed returns.
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// CheckEmbeddings validates what an embedder returned for n texts: n
// vectors, all of one dimension, each valid for CheckVector. Malformed
// output is ErrInvalidArgument (ErrTooLarge for too many dimensions),
// naming the first bad vector, so that nothing of it is stored.
func CheckEmbeddings(n int, vecs [][]float32) error {
	if len(vecs) != n {
		return Errorf(ErrInvalidArgument, "the embedder returned %d vectors for %d texts", len(vecs), n)
	}
	for i, v := range vecs {
		if err := CheckVector(v); err != nil {
			e := err.(*Error)
			return Errorf(e.Kind, "the embedder's vector %d: %s", i, e.Msg)
		}
		if len(v) != len(vecs[0]) {
			return Errorf(ErrInvalidArgument, "the embedder returned vectors of %d and %d dimensions in one batch", len(vecs[0]), len(v))
		}
	}
	return nil
}
