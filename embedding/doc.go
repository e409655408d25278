// Package embedding gives stored records vectors, off the write path, with
// any memory.Embedder, and embeds search queries against them.
//
//   - Indexer embeds records in batches, in the background from the
//     driver's work queue (Enqueue after a write) or for a whole scope
//     (Backfill), and writes each vector with compare-and-swap, so a
//     record rewritten meanwhile never gets a stale vector.
//   - Cache remembers vectors by content hash, so a text is sent to the
//     model once.
//   - The store records its model's name and dimension (ModelInfo,
//     RecordedModel); a different model is memory.ErrConflict, or an
//     explicit re-embedding (Options.Reembed), never a silent mix.
//   - Querier embeds a query text after checking the recorded model.
//
// Adapters: embedding/langchaingo for any langchaingo embedder;
// embedding/embeddingtest is a deterministic embedder for tests.
package embedding
