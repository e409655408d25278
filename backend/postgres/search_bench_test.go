package postgres_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/postgres"
)

const (
	hnswBenchN    = 100000
	hnswBenchDims = 384
	hnswBenchK    = 10
	// hnswBenchQueries is how many query vectors the benchmark cycles
	// through; the first hnswBenchRecallQueries also measure recall.
	hnswBenchQueries       = 200
	hnswBenchRecallQueries = 50
	// hnswBenchRank and hnswBenchNoise shape the embedding-like data set;
	// see lowRankVectors.
	hnswBenchRank  = 24
	hnswBenchNoise = 0.1
)

// hnswBenchIdentity owns every record of a data set: one session.
var hnswBenchIdentity = memory.Identity{Tenant: "bench", User: "u", Session: "s"}

// hnswData is one data set of BenchmarkSearchHNSW100k, built once per
// process in its own database of the shared cluster, with its queries,
// the exact answers to the first of them, and what building it measured.
type hnswData struct {
	once        sync.Once
	dsn         string
	queries     [][]float32
	truth       [][]string // ids of the exact k nearest, for the first queries
	load, build time.Duration
	err         error
}

// hnswDataSets are the benchmark's data sets, by name, each with the
// function that draws its vectors (data and queries alike).
var hnswDataSets = []struct {
	name string
	draw func() func(*rand.Rand) []float32
	data hnswData
}{
	{name: "embeddings", draw: func() func(*rand.Rand) []float32 { return lowRankVectors(hnswBenchDims, hnswBenchRank, hnswBenchNoise) }},
	{name: "random", draw: func() func(*rand.Rand) []float32 {
		return func(rnd *rand.Rand) []float32 { return unitVector(rnd, hnswBenchDims) }
	}},
}

// lowRankVectors returns a source of vectors shaped like text embeddings
// rather than like noise: each is a random point of a fixed random
// rank-dimensional subspace of R^dims plus isotropic noise (noise times
// the subspace's scale per coordinate), scaled to unit length. Sentence
// embeddings of a few hundred dimensions have a local intrinsic dimension
// in the tens, which is what lets HNSW find neighbours; uniformly random
// vectors of 384 dimensions have none (every pair is nearly orthogonal),
// and no index finds their nearest neighbours cheaply.
func lowRankVectors(dims, rank int, noise float64) func(*rand.Rand) []float32 {
	basis := rand.New(rand.NewPCG(uint64(dims), uint64(rank)))
	a := make([][]float64, dims)
	for i := range a {
		a[i] = make([]float64, rank)
		for j := range a[i] {
			a[i][j] = basis.NormFloat64()
		}
	}
	sigma := noise * math.Sqrt(float64(rank))
	return func(rnd *rand.Rand) []float32 {
		z := make([]float64, rank)
		for j := range z {
			z[j] = rnd.NormFloat64()
		}
		x := make([]float64, dims)
		var n float64
		for i := range x {
			var s float64
			for j, zj := range z {
				s += a[i][j] * zj
			}
			s += sigma * rnd.NormFloat64()
			x[i] = s
			n += s * s
		}
		n = math.Sqrt(n)
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(x[i] / n)
		}
		return v
	}
}

// fill loads 100,000 vectors drawn by draw into one session, in batches
// of 2,000, and then builds the HNSW index with the first search
// (building over loaded rows is faster than inserting into an index). It
// computes the exact answers to the first queries by brute force.
func (h *hnswData) fill(b *testing.B, draw func(*rand.Rand) []float32) {
	h.dsn = createDB(b, false) // outlives this b: later runs reuse it
	d, err := postgres.Open(h.dsn, postgres.Options{})
	if err != nil {
		h.err = err
		return
	}
	defer d.Close()
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(100000, 384))
	vectors := make([][]float32, hnswBenchN)
	recs := make([]memory.Record, 0, 2000)
	start := time.Now()
	for i := range hnswBenchN {
		vectors[i] = draw(rnd)
		recs = append(recs, memory.Record{
			ID: fmt.Sprintf("r%06d", i), Kind: memory.KindFact, Identity: hnswBenchIdentity,
			Content: "bench", Created: searchT0.Add(time.Duration(i) * time.Millisecond), Vector: vectors[i],
		})
		if len(recs) == cap(recs) || i == hnswBenchN-1 {
			if h.err = d.Put(ctx, recs); h.err != nil {
				return
			}
			recs = recs[:0]
		}
	}
	if _, h.err = d.DB().Exec(`VACUUM ANALYZE memory_records`); h.err != nil {
		return
	}
	h.load = time.Since(start)

	for range hnswBenchQueries {
		h.queries = append(h.queries, draw(rnd))
	}
	// The first search builds the index over the loaded rows.
	start = time.Now()
	if _, h.err = d.Search(ctx, hnswBenchQuery, h.queries[0], hnswBenchK); h.err != nil {
		return
	}
	h.build = time.Since(start)
	if !d.SearchUsesIndex() {
		h.err = fmt.Errorf("the first search did not build the index")
		return
	}
	if _, h.err = d.DB().Exec(`ANALYZE memory_records`); h.err != nil {
		return
	}
	for i := range hnswBenchRecallQueries {
		h.truth = append(h.truth, bruteForceVectors(vectors, h.queries[i], hnswBenchK))
	}
}

var hnswBenchQuery = driver.Query{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldUser | memory.FieldSession, Identity: hnswBenchIdentity}}

// bruteForceVectors returns the ids of the k vectors of all nearest q.
func bruteForceVectors(all [][]float32, q []float32, k int) []string {
	type scored struct {
		i int
		s float64
	}
	best := make([]scored, 0, len(all))
	for i, v := range all {
		best = append(best, scored{i, refCosine(v, q)})
	}
	slices.SortFunc(best, func(a, b scored) int {
		switch {
		case a.s > b.s:
			return -1
		case a.s < b.s:
			return 1
		}
		return b.i - a.i // newer (higher index) first, as created rises with i
	})
	ids := make([]string, k)
	for j := range ids {
		ids[j] = fmt.Sprintf("r%06d", best[j].i)
	}
	return ids
}

// BenchmarkSearchHNSW100k searches 100,000 vectors of 384 dimensions in
// one session for their 10 nearest, through the HNSW index, at several
// values of Options.EfSearch, and reports the median latency of one Search
// (median-ns/op) beside the mean and the 99th percentile, and the
// recall@10 against exact search over the first 50 queries. Two data
// sets: "embeddings", shaped like text embeddings (lowRankVectors), and
// "random", uniformly random unit vectors, the case no index serves well.
// Building each data set takes a few minutes, once per process; its times
// are logged.
//
// For its duration the shared cluster runs with shared_buffers = 1GB, as
// a server holding this index is configured (pgvector advises keeping
// the index in shared buffers), and maintenance_work_mem = 1GB, so that
// the graph is built in memory. Whether the kernel has huge pages for the
// shared buffers is logged: with them the graph walk was about 0.7 ms
// faster here.
func BenchmarkSearchHNSW100k(b *testing.B) {
	c := sharedCluster(b)
	restart := func(settings ...string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Restart(ctx, settings...); err != nil {
			b.Fatalf("restart the cluster with %v: %v", settings, err)
		}
	}
	restart("shared_buffers=1GB", "maintenance_work_mem=1GB")
	b.Cleanup(func() { restart() })
	// The server's default huge_pages = try maps shared memory in huge
	// pages when the kernel has them reserved (vm.nr_hugepages); the
	// graph walk's time depends on it (BENCHMARKS.md).
	b.Logf("huge pages after the restart: %s", hugePages())
	for i := range hnswDataSets {
		set := &hnswDataSets[i]
		b.Run(set.name, func(b *testing.B) {
			h := &set.data
			h.once.Do(func() { h.fill(b, set.draw()) })
			if h.err != nil {
				b.Fatal(h.err)
			}
			b.Logf("%s: %d x %d loaded in %v; index built by the first search in %v",
				set.name, hnswBenchN, hnswBenchDims, h.load.Round(time.Millisecond), h.build.Round(time.Millisecond))
			for _, ef := range []int{40, 60, 80} { // DefaultEfSearch is 60
				b.Run("ef="+strconv.Itoa(ef), func(b *testing.B) { benchHNSW(b, h, ef) })
			}
		})
	}
}

// hugePages returns the kernel's huge page counts from /proc/meminfo.
func hugePages() string {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return err.Error()
	}
	var counts []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "HugePages_") {
			counts = append(counts, strings.Join(strings.Fields(strings.TrimPrefix(line, "HugePages_")), " "))
		}
	}
	return strings.Join(counts, ", ")
}

// benchHNSW measures searches of h's data set with Options.EfSearch ef.
func benchHNSW(b *testing.B, h *hnswData, ef int) {
	d := openBenchOptions(b, h.dsn, postgres.Options{EfSearch: ef})
	ctx := context.Background()
	hits := 0
	for i, v := range h.queries { // warm the pool, the plan and the cache; measure recall
		got, err := d.Search(ctx, hnswBenchQuery, v, hnswBenchK)
		if err != nil {
			b.Fatal(err)
		}
		if i < len(h.truth) {
			for _, m := range got {
				if slices.Contains(h.truth[i], m.Record.ID) {
					hits++
				}
			}
		}
	}
	recall := float64(hits) / float64(len(h.truth)*hnswBenchK)
	var took []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		got, err := d.Search(ctx, hnswBenchQuery, h.queries[i%len(h.queries)], hnswBenchK)
		took = append(took, time.Since(start))
		if err != nil || len(got) != hnswBenchK {
			b.Fatalf("Search: %d results, %v", len(got), err)
		}
		i++
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "median-ns/op")
	b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns/op")
	b.ReportMetric(recall, "recall@10")
}

// openBenchOptions opens a driver on dsn with opt, closed when b ends.
func openBenchOptions(b *testing.B, dsn string, opt postgres.Options) *postgres.Driver {
	d, err := postgres.Open(dsn, opt)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = d.Close() })
	return d
}
