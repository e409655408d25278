package embedding_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/embedding"
	"github.com/agentmem/memory/embedding/embeddingtest"
)

// BenchmarkBackfill embeds 2,000 turns of one session per iteration, with
// the deterministic embedder (384 dimensions, so the model costs almost
// nothing and the pipeline is what is measured) and no cache, in batches
// of 64; records/s is what the pipeline sustains.
func BenchmarkBackfill(b *testing.B) {
	const n = 2000
	for _, drv := range []string{"inmem", "sqlite"} {
		b.Run(drv, func(b *testing.B) {
			ctx := context.Background()
			var total time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				var d interface {
					Close() error
				}
				var s *backend.Store
				if drv == "inmem" {
					in := inmem.New(inmem.Options{})
					d, s = in, backend.NewStore(in, backend.StoreOptions{Tokens: byteTokens{}})
				} else {
					sq, err := sqlite.Open(filepath.Join(b.TempDir(), fmt.Sprint(i, ".db")), sqlite.Options{})
					if err != nil {
						b.Fatal(err)
					}
					d, s = sq, backend.NewStore(sq, backend.StoreOptions{Tokens: byteTokens{}})
				}
				recs := make([]memory.Record, n)
				for j := range recs {
					recs[j] = memory.NewTurn(alice, memory.RoleUser, fmt.Sprintf("turn %d of a conversation about the weather in city %d and the trains", j, j%97), t0.Add(time.Duration(j)*time.Millisecond))
				}
				if err := s.Add(ctx, alice, recs...); err != nil {
					b.Fatal(err)
				}
				x, err := embedding.NewIndexer(ctx, s, &embeddingtest.Embedder{Dims: 384}, embedding.Options{NoWorkers: true, CacheBytes: -1})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := time.Now()
				got, err := x.Backfill(ctx, alice, memory.LevelSession)
				total += time.Since(start)
				b.StopTimer()
				if err != nil || got != n {
					b.Fatalf("Backfill = %d, %v", got, err)
				}
				x.Close()
				d.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(n*b.N)/total.Seconds(), "records/s")
		})
	}
}

// BenchmarkQueue measures Enqueue of 2,000 records (in Enqueue calls of
// 10) until one worker has embedded them all, on SQLite.
func BenchmarkQueue(b *testing.B) {
	const n = 2000
	ctx := context.Background()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		sq, err := sqlite.Open(filepath.Join(b.TempDir(), fmt.Sprint(i, ".db")), sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		s := backend.NewStore(sq, backend.StoreOptions{Tokens: byteTokens{}})
		recs := make([]memory.Record, n)
		ids := make([]string, n)
		for j := range recs {
			recs[j] = memory.NewTurn(alice, memory.RoleUser, fmt.Sprintf("turn %d about city %d", j, j%97), t0.Add(time.Duration(j)*time.Millisecond))
			ids[j] = recs[j].ID
		}
		if err := s.Add(ctx, alice, recs...); err != nil {
			b.Fatal(err)
		}
		x, err := embedding.NewIndexer(ctx, s, &embeddingtest.Embedder{Dims: 384}, embedding.Options{CacheBytes: -1, Poll: time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		for j := 0; j < n; j += 10 {
			if err := x.Enqueue(ctx, alice, ids[j:j+10]...); err != nil {
				b.Fatal(err)
			}
		}
		for x.Stats().Embedded < n {
			time.Sleep(time.Millisecond)
		}
		total += time.Since(start)
		b.StopTimer()
		x.Close()
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "records/s")
}
