package tiers

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/tokens"
)

var benchWho = memory.Identity{Tenant: "acme", Agent: "kaos://agent/ai/retriever", Session: "run-1"}

// benchBase is when seeded entries start, one second apart.
var benchBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// benchWords is the vocabulary seeded entries are drawn from.
var benchWords = strings.Fields(`payments checkout login latency spike anomaly baseline pod restart
	crashloop memory leak cpu throttling disk pressure network timeout dns failure certificate expiry
	openssl cve upgrade patch rollback deploy canary error rate p99 p50 queue backlog kafka lag
	postgres replica vacuum index bloat redis eviction cache miss warm cold scan vulnerability secret
	token rotation audit log retention quota limit burst autoscaler node drain cordon taint`)

// seedVector writes n entries of who straight into dir, with the index,
// skipping the fsyncs a Save makes: a fast way to fill a directory the way
// n Saves would. Entries are benchBase + i seconds old.
func seedVector(tb testing.TB, dir string, n int, who memory.Identity, counter memory.TokenCounter) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Join(dir, vectorTempDir), 0o750); err != nil {
		tb.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, vectorIndexFile))
	if err != nil {
		tb.Fatal(err)
	}
	idx := bufio.NewWriter(f)
	idx.WriteString(newHeader())
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		words := make([]string, 12)
		for j := range words {
			words[j] = benchWords[rng.IntN(len(benchWords))]
		}
		step := Step{Workflow: "research", Name: "collect", Input: fmt.Sprintf("task %d: %s", i, strings.Join(words[:4], " ")), Output: strings.Join(words[4:], " ")}
		text := step.Summary()
		name, err := newEntryName(benchBase.Add(time.Duration(i) * time.Second))
		if err != nil {
			tb.Fatal(err)
		}
		created, _ := parseEntryName(name)
		n, err := counter.CountTokens(context.Background(), text)
		if err != nil {
			tb.Fatal(err)
		}
		e := vectorEntry{name: name, created: created, who: who, key: step.key(), tokens: n, text: text}
		if err := os.WriteFile(filepath.Join(dir, name), encodeEntry(e), 0o640); err != nil {
			tb.Fatal(err)
		}
		idx.WriteString(addLine(e))
	}
	if err := idx.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// benchVector opens vector memory over a directory seeded with n entries,
// with a clock just after the newest and pruning limits above n.
func benchVector(b *testing.B, n int) *Vector {
	dir := b.TempDir()
	seedVector(b, dir, n, benchWho, tokens.Counter{})
	now := benchBase.Add(time.Duration(n)*time.Second + time.Hour)
	v, err := NewVector(context.Background(), testStore(b, func() time.Time { return now }, nil), VectorOptions{Dir: dir, MaxEntries: 2 * n})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = v.Close() })
	return v
}

func reportMedian(b *testing.B, took []time.Duration) {
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "median-ns/op")
}

// BenchmarkVectorLoad100k measures the start of a step with 100,000
// entries on disk: one Recall under the document's 8,000-token budget, in
// a fresh Vector each time, as a new pod would. Target: median at most
// 50 ms.
func BenchmarkVectorLoad100k(b *testing.B) {
	v := benchVector(b, 100_000)
	ctx := context.Background()
	opt := VectorOptions{Dir: v.dir, MaxContextTokens: 8000, MaxEntries: v.maxEntries}
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		fresh, err := NewVector(ctx, v.store, opt)
		if err != nil {
			b.Fatal(err)
		}
		rec, err := fresh.Recall(ctx, benchWho, "")
		if err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
		if len(rec.Records) < 50 {
			b.Fatalf("recalled only %d entries", len(rec.Records))
		}
	}
	reportMedian(b, took)
}

// BenchmarkVectorSearch10k measures one vector-search over 10,000 entries
// once the in-memory index is built (the first Search starts the build;
// the benchmark waits for it). Target: median at most 20 ms.
func BenchmarkVectorSearch10k(b *testing.B) {
	v := benchVector(b, 10_000)
	ctx := context.Background()
	if _, err := v.Search(ctx, benchWho, "warm up", 5); err != nil {
		b.Fatal(err)
	}
	v.waitBuild()
	v.mu.Lock()
	built := v.search.built()
	v.mu.Unlock()
	if !built {
		b.Fatal("the search index was not built")
	}
	queries := []string{"payments latency spike", "openssl cve upgrade patch", "postgres replica lag", "dns failure timeout network"}
	var took []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		ms, err := v.Search(ctx, benchWho, queries[i%len(queries)], 10)
		took = append(took, time.Since(start))
		if err != nil || len(ms) != 10 {
			b.Fatalf("search: %d matches, %v", len(ms), err)
		}
		i++
	}
	reportMedian(b, took)
}

// BenchmarkVectorSearchCold10k measures the first vector-search of a new
// process over 10,000 entries: a fresh NewVector over a directory written
// beforehand (the page cache is warm, the process state cold), then one
// Search, which reads the index file and scans the entries' texts.
// Closing the Vector, untimed, stops the background build of the search
// index the Search started, as the end of a one-search process would.
// Target: median at most 20 ms.
func BenchmarkVectorSearchCold10k(b *testing.B) {
	v := benchVector(b, 10_000)
	ctx := context.Background()
	opt := VectorOptions{Dir: v.dir, MaxEntries: v.maxEntries}
	queries := []string{"payments latency spike", "openssl cve upgrade patch", "postgres replica lag", "dns failure timeout network"}
	var took []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		fresh, err := NewVector(ctx, v.store, opt)
		if err != nil {
			b.Fatal(err)
		}
		ms, err := fresh.Search(ctx, benchWho, queries[i%len(queries)], 10)
		took = append(took, time.Since(start))
		if err != nil || len(ms) != 10 {
			b.Fatalf("search: %d matches, %v", len(ms), err)
		}
		b.StopTimer()
		if err := fresh.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		i++
	}
	reportMedian(b, took)
}
