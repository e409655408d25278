package tiered_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/tiers/tiered"
)

// benchDriver opens the named embedded driver over fresh storage.
func benchDriver(b *testing.B, name string) driver.Driver {
	switch name {
	case "inmem":
		d := inmem.New(inmem.Options{})
		b.Cleanup(func() { _ = d.Close() })
		return d
	case "sqlite":
		d, err := sqlite.Open(filepath.Join(b.TempDir(), "memory.db"), sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = d.Close() })
		return d
	}
	b.Fatalf("no driver %q", name)
	return nil
}

// reportQuantiles reports the median and 99th percentile of ds.
func reportQuantiles(b *testing.B, ds []time.Duration) {
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2]), "median-ns/op")
	b.ReportMetric(float64(ds[len(ds)*99/100]), "p99-ns/op")
}

// BenchmarkAppend measures appending one turn of about twenty words to
// one of 100 sessions in turn, with the default options and no
// background work in the process (folds are queued, not run), and
// reports the median and the 99th percentile.
func BenchmarkAppend(b *testing.B) {
	for _, name := range []string{"inmem", "sqlite"} {
		b.Run(name, func(b *testing.B) {
			st := backend.NewStore(benchDriver(b, name), backend.StoreOptions{})
			m, err := tiered.New(st, tiered.Options{NoWorkers: true})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			ctx := context.Background()
			texts := backendtest.BenchTextQueries(256)
			ds := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				id := alice
				id.Session = fmt.Sprintf("bench-%03d", i%100)
				text := texts[i%len(texts)] + " " + texts[(i+1)%len(texts)] + " " + texts[(i+2)%len(texts)]
				t0 := time.Now()
				if _, err := m.Append(ctx, id, tiered.Turn{Role: memory.RoleUser, Content: text}); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(t0))
			}
			b.StopTimer()
			reportQuantiles(b, ds)
		})
	}
}

// BenchmarkRecall100kFacts measures a recall of the window, the digest
// and the 10 facts most relevant to a question, at the agent level, over
// 100,000 facts of the user and agent (BenchTextRecords' texts), with a
// session of 40 turns folded once, and reports the median and the 99th
// percentile. Lexical: no embedding call.
func BenchmarkRecall100kFacts(b *testing.B) {
	for _, name := range []string{"inmem", "sqlite"} {
		b.Run(name, func(b *testing.B) {
			d := benchDriver(b, name)
			ctx := context.Background()
			batch := make([]memory.Record, 0, memory.MaxBatch)
			for i := range 100_000 {
				id := alice
				id.Session = fmt.Sprintf("old-%04d", i/100)
				r := backendtest.BenchTextRecord(0, i)
				batch = append(batch, memory.NewFact(id, r.Content, r.Created))
				if len(batch) == cap(batch) {
					if err := d.Put(ctx, batch); err != nil {
						b.Fatal(err)
					}
					batch = batch[:0]
				}
			}
			st := backend.NewStore(d, backend.StoreOptions{})
			m, err := tiered.New(st, tiered.Options{Budget: 2000, Trigger: 400, Target: 200, Settle: time.Millisecond, IdleFlush: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			texts := backendtest.BenchTextQueries(128)
			for i := range 40 {
				if _, err := m.Append(ctx, alice, tiered.Turn{Role: memory.RoleUser, Content: texts[i] + " " + texts[i+40]}); err != nil {
					b.Fatal(err)
				}
			}
			deadline := time.Now().Add(time.Minute)
			for {
				if _, ok, err := m.Digest(ctx, alice); err != nil || ok {
					break
				}
				if time.Now().After(deadline) {
					b.Fatal("no fold within a minute")
				}
				time.Sleep(10 * time.Millisecond)
			}
			questions := backendtest.BenchTextQueries(64)
			// Warm: the first recall loads the text index.
			if _, err := m.RecallWith(ctx, alice, questions[0], tiered.RecallOptions{Level: memory.LevelAgent}); err != nil {
				b.Fatal(err)
			}
			ds := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				t0 := time.Now()
				rec, err := m.RecallWith(ctx, alice, questions[i%len(questions)], tiered.RecallOptions{Level: memory.LevelAgent})
				ds = append(ds, time.Since(t0))
				if err != nil || rec.Degraded || len(rec.Facts) == 0 || rec.Digest == nil || len(rec.Window) == 0 {
					b.Fatalf("recall: %v, degraded %+v, %d facts, digest %v, %d turns", err, rec.Errors, len(rec.Facts), rec.Digest != nil, len(rec.Window))
				}
			}
			b.StopTimer()
			reportQuantiles(b, ds)
		})
	}
}

// BenchmarkFold measures folding with the deterministic extract.Rules:
// b.N sessions of 60 turns each are appended with no background work,
// then one Memory with the default workers folds them all, and the
// benchmark reports folds and folded turns per second of that.
func BenchmarkFold(b *testing.B) {
	for _, name := range []string{"inmem", "sqlite"} {
		b.Run(name, func(b *testing.B) {
			d := benchDriver(b, name)
			ctx := context.Background()
			opt := tiered.Options{Budget: 400, Trigger: 400, Target: 200, Settle: time.Millisecond, IdleFlush: -1, NoWorkers: true}
			st := backend.NewStore(d, backend.StoreOptions{})
			writer, err := tiered.New(st, opt)
			if err != nil {
				b.Fatal(err)
			}
			texts := backendtest.BenchTextQueries(512)
			for s := range b.N {
				id := alice
				id.Session = fmt.Sprintf("fold-%05d", s)
				turns := make([]tiered.Turn, 60)
				for i := range turns {
					turns[i] = tiered.Turn{Role: memory.RoleUser, Content: "I noted " + texts[(s+i)%len(texts)] + "."}
				}
				if _, err := writer.Append(ctx, id, turns...); err != nil {
					b.Fatal(err)
				}
			}
			_ = writer.Close()
			time.Sleep(5 * time.Millisecond) // every turn settled
			b.ResetTimer()
			t0 := time.Now()
			opt.NoWorkers = false
			m, err := tiered.New(st, opt)
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			for m.Stats().Folds < int64(b.N) {
				if time.Since(t0) > 5*time.Minute {
					b.Fatalf("%d of %d sessions folded in 5 minutes", m.Stats().Folds, b.N)
				}
				time.Sleep(time.Millisecond)
			}
			elapsed := time.Since(t0)
			b.StopTimer()
			s := m.Stats()
			b.ReportMetric(float64(s.Folds)/elapsed.Seconds(), "folds/s")
			b.ReportMetric(float64(s.FoldedTurns)/elapsed.Seconds(), "turns/s")
		})
	}
}
