package backendtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/latency"
	"github.com/agentmem/memory/internal/proctest"
)

// The text benchmark data sets: scopes of perScope facts each, every fact
// 8 to 24 words drawn from a vocabulary of benchTextWords words with
// Zipf-distributed frequencies, as words are in English text.
const (
	benchTextWords = 20_000
	// BenchTextK is how many records each benchmark text search asks for.
	BenchTextK = 10
)

// BenchTextIdentity is the writer of scope s of the text data sets.
func BenchTextIdentity(s int) memory.Identity {
	return memory.Identity{Tenant: "tenant-text", User: fmt.Sprintf("user-%04d", s), Session: fmt.Sprintf("scope-%04d", s)}
}

// benchWord is word i of the benchmark vocabulary: distinct, pronounceable
// letters, so that the analyzer keeps each as one term.
func benchWord(i int) string {
	const cons, vows = "bcdfghjklmnprstvz", "aeiou"
	var b strings.Builder
	for i++; i > 0; i /= len(cons) * len(vows) {
		b.WriteByte(cons[i%len(cons)])
		b.WriteByte(vows[(i/len(cons))%len(vows)])
	}
	return b.String()
}

// benchText returns n words drawn by Zipf's law from the vocabulary.
func benchText(z *rand.Zipf, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(benchWord(int(z.Uint64())))
	}
	return b.String()
}

// BenchTextRecord returns fact i of scope s: deterministic, created in
// scope order.
func BenchTextRecord(s, i int) memory.Record {
	rnd := rand.New(rand.NewPCG(uint64(s)<<32|uint64(i), 0x51ed2701))
	z := rand.NewZipf(rnd, 1.07, 2, benchTextWords-1)
	return memory.Record{
		ID: fmt.Sprintf("text-%04d-%07d", s, i), Kind: memory.KindFact, Identity: BenchTextIdentity(s),
		Content: benchText(z, 8+rnd.IntN(17)),
		Created: t0.Add(time.Duration(s)*time.Hour + time.Duration(i)*time.Millisecond),
	}
}

// FillTexts stores scopes × perScope BenchTextRecords in d.
func FillTexts(ctx context.Context, d driver.Driver, scopes, perScope int) error {
	return fillScopes(ctx, d, scopes, perScope, BenchTextRecord)
}

// TextBenchConfig describes the driver a text benchmark measures.
type TextBenchConfig struct {
	// Filled returns a driver that implements driver.TextSearcher and
	// holds FillTexts(scopes, perScope); it may reuse a data set built
	// earlier in the process. The benchmark does not close it.
	Filled func(b *testing.B, scopes, perScope int) driver.Driver
	// Reopen, when not nil, returns a new handle on the storage of a
	// driver Filled returned, as a new process would open it, with no
	// search cache; the benchmark closes it. Nil means the driver keeps
	// its data in the process, and BenchmarkFirstSearchText does not
	// apply.
	Reopen func(b *testing.B, d driver.Driver) driver.Driver
	// NewProcess, when not nil, returns the name of the driver's test
	// that calls FirstSearchTextChild, run in a child process (see
	// internal/proctest), and where the storage of a driver Filled
	// returned is, as that test's open takes it (a path, a DSN). Nil
	// means BenchmarkFirstSearchTextNewProcess does not apply.
	NewProcess func(b *testing.B, d driver.Driver) (child, where string)
}

// BenchTextQueries returns n query texts of 6 words, drawn like the facts
// of FillTexts: the queries the text benchmarks ask, in order.
func BenchTextQueries(n int) []string {
	z := rand.NewZipf(rand.New(rand.NewPCG(7, 11)), 1.07, 2, benchTextWords-1)
	out := make([]string, n)
	for i := range out {
		out[i] = benchText(z, 6)
	}
	return out
}

// BenchmarkSearchText100k measures a warm text search (k = BenchTextK)
// over 100,000 facts in one scope, and reports the median and the 99th
// percentile.
func BenchmarkSearchText100k(b *testing.B, c TextBenchConfig) {
	benchmarkSearchText(b, c, 1, 100_000)
}

// BenchmarkSearchTextOneScopeOf1000 measures a text search restricted to
// one scope of 1,000 facts among 1,000 such scopes, visiting the scopes in
// turn, and reports the median and the 99th percentile.
func BenchmarkSearchTextOneScopeOf1000(b *testing.B, c TextBenchConfig) {
	benchmarkSearchText(b, c, 1000, 1000)
}

func benchmarkSearchText(b *testing.B, c TextBenchConfig, scopes, perScope int) {
	d := c.Filled(b, scopes, perScope)
	ts, ok := d.(driver.TextSearcher)
	if !ok {
		b.Fatalf("%T does not implement driver.TextSearcher", d)
	}
	ctx := context.Background()
	queries := BenchTextQueries(64)
	scope := func(i int) driver.Query {
		id := BenchTextIdentity((i * 7919) % scopes)
		match := memory.FieldTenant | memory.FieldUser | memory.FieldSession
		return driver.Query{Filter: memory.Filter{Match: match, Identity: id.Only(match)}}
	}
	// Warm: the first search builds what the driver keeps for searching.
	if _, err := ts.SearchText(ctx, scope(0), queries[0], BenchTextK); err != nil {
		b.Fatal(err)
	}
	TimeEach(b, func(i int) (int, error) {
		ms, err := ts.SearchText(ctx, scope(i), queries[i%len(queries)], BenchTextK)
		return len(ms), err
	})
}

// TimeEach runs op(i) for i below b.N, timing each call alone, and reports
// the median and the 99th percentile (median-ns/op, p99-ns/op). op returns
// how many results it found; an error fails the benchmark, and so do b.N
// calls that found nothing.
func TimeEach(b *testing.B, op func(i int) (int, error)) {
	ds := timeEach(b, op)
	b.ReportMetric(medianNs(ds), "median-ns/op")
	b.ReportMetric(float64(latency.Percentile(ds, 99)), "p99-ns/op")
}

// firstSearch is the search BenchmarkFirstSearchText times: its query and
// scope over the store of 100,000 facts in one scope.
func firstSearch() (string, driver.Query) {
	match := memory.FieldTenant | memory.FieldUser | memory.FieldSession
	return BenchTextQueries(1)[0], driver.Query{Filter: memory.Filter{Match: match, Identity: BenchTextIdentity(0).Only(match)}}
}

// BenchmarkFirstSearchText measures the first text search of a new handle
// on a store of 100,000 facts in one scope, as a new process makes it:
// what it costs to load what the driver keeps for searching. The handle
// is opened in the benchmark's own process, whose memory is already
// mapped; BenchmarkFirstSearchTextNewProcess measures a new process.
func BenchmarkFirstSearchText(b *testing.B, c TextBenchConfig) {
	if c.Reopen == nil {
		b.Skip("the driver keeps its data in the process: there is no first search of a new process")
	}
	d := c.Filled(b, 1, 100_000)
	ctx := context.Background()
	q, scope := firstSearch()
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		rd := c.Reopen(b, d)
		ts := rd.(driver.TextSearcher)
		b.StartTimer()
		t0 := time.Now()
		ms, err := ts.SearchText(ctx, scope, q, BenchTextK)
		ds = append(ds, time.Since(t0))
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if len(ms) == 0 {
			b.Fatal("the first search found nothing")
		}
		_ = rd.Close()
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(medianNs(ds), "median-ns/op")
	b.ReportMetric(100_000/(medianNs(ds)/1e9), "facts/s")
}

// firstSearchLine starts the line FirstSearchTextChild writes: the time
// the search took, in nanoseconds.
const firstSearchLine = "backendtest: the first search took ns "

// firstSearchEnv tells FirstSearchTextChild where the storage is.
const firstSearchEnv = "AGENTMEM_BACKENDTEST_FIRST_SEARCH"

// FirstSearchTextChild is the whole of a driver's child test for
// BenchmarkFirstSearchTextNewProcess: run by go test, it skips; in the
// child process, it opens with open the storage of 100,000 facts in one
// scope that the benchmark names, makes the first text search on it and
// writes how long that took for the parent to read.
func FirstSearchTextChild(t *testing.T, open func(where string) (driver.Driver, error)) {
	t.Helper()
	proctest.Child(t)
	d, err := open(os.Getenv(firstSearchEnv))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	q, scope := firstSearch()
	t0 := time.Now()
	ms, err := d.(driver.TextSearcher).SearchText(context.Background(), scope, q, BenchTextK)
	took := time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("the first search found nothing")
	}
	fmt.Printf("%s%d\n", firstSearchLine, took.Nanoseconds())
}

// BenchmarkFirstSearchTextNewProcess measures the first text search of a
// new process on a store of 100,000 facts in one scope, each in a child
// process of its own (FirstSearchTextChild) whose memory, unlike the
// benchmark's, is yet to be mapped: only the search is timed, not the
// process's start or the driver's opening.
func BenchmarkFirstSearchTextNewProcess(b *testing.B, c TextBenchConfig) {
	if c.NewProcess == nil {
		b.Skip("the driver keeps its data in the process, or has no child test: there is no first search of a new process")
	}
	d := c.Filled(b, 1, 100_000)
	child, where := c.NewProcess(b, d)
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := proctest.Start(b, child, proctest.Options{Env: []string{firstSearchEnv + "=" + where}})
		var took time.Duration
		for line := range p.Lines() {
			if ns, ok := strings.CutPrefix(line, firstSearchLine); ok {
				n, err := strconv.ParseInt(ns, 10, 64)
				if err != nil {
					b.Fatalf("the child wrote %q", line)
				}
				took = time.Duration(n)
			}
		}
		out, err := p.Wait()
		if err != nil || took == 0 {
			b.Fatalf("the child failed (%v) or reported no time:\n%s", err, out)
		}
		ds = append(ds, took)
	}
	b.StopTimer()
	b.ReportMetric(medianNs(ds), "median-ns/op")
	b.ReportMetric(float64(latency.Percentile(ds, 0)), "min-ns/op")
	b.ReportMetric(float64(latency.Percentile(ds, 100)), "max-ns/op")
}
