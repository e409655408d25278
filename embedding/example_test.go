package embedding_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/embedding"
	"github.com/agentmem/memory/embedding/embeddingtest"
)

func Example() {
	ctx := context.Background()
	store := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer store.Close()
	who := memory.Identity{Tenant: "acme", User: "alice", Session: "s1"}
	// A real program passes langchaingo.New(openaiEmbedder, "text-embedding-3-small").
	emb := &embeddingtest.Embedder{Dims: 64}

	idx, err := embedding.NewIndexer(ctx, store, emb, embedding.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	turns := []memory.Record{
		memory.NewTurn(who, memory.RoleUser, "I moved to Lisbon in May", now),
		memory.NewTurn(who, memory.RoleUser, "The build fails on the ARM runner", now.Add(time.Second)),
	}
	if err := store.Add(ctx, who, turns...); err != nil {
		fmt.Println(err)
		return
	}
	// Off the write path: queue the new records; a worker embeds them.
	if err := idx.Enqueue(ctx, who, turns[0].ID, turns[1].ID); err != nil {
		fmt.Println(err)
		return
	}
	// Records written before the indexer existed: Backfill (here it finds
	// nothing the worker has not done, or does what it has not yet).
	if _, err := idx.Backfill(ctx, who, memory.LevelSession); err != nil {
		fmt.Println(err)
		return
	}
	idx.Close()

	q, _ := embedding.NewQuerier(store, emb)
	matches, err := q.Search(ctx, who, memory.Query{Level: memory.LevelSession}, "where did I move?", 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(matches[0].Record.Content)
	info, _, _ := embedding.RecordedModel(ctx, store)
	fmt.Println(info.Model, info.Dims)

	// Another model on this store is refused.
	_, err = embedding.NewIndexer(ctx, store, &embeddingtest.Embedder{Dims: 32}, embedding.Options{})
	fmt.Println(err)
	// Output:
	// I moved to Lisbon in May
	// embeddingtest-words-v1/64 64
	// memory: conflict: the store's vectors come from model "embeddingtest-words-v1/64", not "embeddingtest-words-v1/32": use that model, or re-embed the store (Options.Reembed)
}

func ExampleCache() {
	emb := &embeddingtest.Embedder{}
	c := embedding.NewCache(emb, embedding.CacheOptions{})
	c.Embed(context.Background(), []string{"hello", "hello", "world"})
	c.Embed(context.Background(), []string{"world"})
	fmt.Println(emb.Texts(), c.Stats().Hits)
	// Output: 2 1
}
