package recall_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/postgres"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/embedding"
	"github.com/agentmem/memory/embedding/embeddingtest"
	"github.com/agentmem/memory/internal/pgtest"
	"github.com/agentmem/memory/internal/proctest"
	"github.com/agentmem/memory/recall"
)

// pg is the PostgreSQL cluster the benchmarks share, started by the first
// that asks for it; TestMain stops it.
var pg pgtest.Shared

// benchStores are the filled stores of the recall benchmarks by driver,
// built once per process: filling 100,000 facts takes seconds.
var benchStores = struct {
	sync.Mutex
	m map[string]*backend.Store
	// where each store lives: a SQLite file's path, a PostgreSQL DSN.
	at map[string]string
}{m: map[string]*backend.Store{}, at: map[string]string{}}

// benchStore returns a store over the named driver holding
// backendtest.FillTexts(scopes, perScope).
func benchStore(b *testing.B, name string, scopes, perScope int) *backend.Store {
	return filledStore(b, name, "", scopes, perScope, func(d driver.Driver) error {
		return backendtest.FillTexts(context.Background(), d, scopes, perScope)
	})
}

// benchDims is the dimension of the hybrid benchmarks' vectors.
const benchDims = 64

// hybridStore returns a store over the named driver holding the records
// of backendtest.FillTexts(1, n), each with its embeddingtest vector of
// benchDims dimensions, and that embedder's model recorded.
func hybridStore(b *testing.B, name string, n int, e *embeddingtest.Embedder) *backend.Store {
	st := filledStore(b, name, "hybrid", 1, n, func(d driver.Driver) error {
		ctx := context.Background()
		batch := make([]memory.Record, 0, memory.MaxBatch)
		for i := range n {
			rec := backendtest.BenchTextRecord(0, i)
			rec.Vector = embeddingtest.Vector(rec.Content, benchDims)
			if batch = append(batch, rec); len(batch) == cap(batch) || i == n-1 {
				if err := d.Put(ctx, batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
		return nil
	})
	// An Indexer records the model on a store whose vectors it made, and
	// the first query vector its dimension. That is a write (a swap of
	// the model's record), made here rather than inside a benchmark's
	// first recall, where it would race the recall's own load of the
	// text cache.
	ctx := context.Background()
	if _, err := embedding.NewIndexer(ctx, st, e, embedding.Options{NoWorkers: true}); err != nil {
		b.Fatal(err)
	}
	q, err := embedding.NewQuerier(st, e)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := q.EmbedQuery(ctx, "the dimension"); err != nil {
		b.Fatal(err)
	}
	return st
}

// filledStore returns the store over the named driver that fill filled,
// built once per process under the name, variant and sizes.
func filledStore(b *testing.B, name, variant string, scopes, perScope int, fill func(driver.Driver) error) *backend.Store {
	benchStores.Lock()
	defer benchStores.Unlock()
	key := fmt.Sprintf("%s%s-%dx%d", name, variant, scopes, perScope)
	if st := benchStores.m[key]; st != nil {
		return st
	}
	var d driver.Driver
	switch name {
	case "inmem":
		d = inmem.New(inmem.Options{})
	case "sqlite":
		// Not b.TempDir: the store outlives this run of the benchmark, for
		// the next; TestMain removes the directory.
		dir, err := benchDir()
		if err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(dir, key+".db")
		sd, err := sqlite.Open(path, sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		d, benchStores.at[key] = sd, path
	case "postgres", "postgres-inprocess":
		dsn := pg.CreateDB(b, false)
		pd, err := postgres.Open(dsn, postgres.Options{InProcessVectors: name == "postgres-inprocess"})
		if err != nil {
			b.Fatal(err)
		}
		d, benchStores.at[key] = pd, dsn
	}
	if err := fill(d); err != nil {
		b.Fatal(err)
	}
	if pd, ok := d.(*postgres.Driver); ok {
		// The statistics autovacuum would gather a minute after the
		// fill, without which the planner reads no index for a search.
		if _, err := pd.DB().Exec("VACUUM ANALYZE"); err != nil {
			b.Fatal(err)
		}
	}
	st := backend.NewStore(d, backend.StoreOptions{})
	benchStores.m[key] = st
	return st
}

// BenchmarkRecall100k measures a warm lexical recall of the 10 best of
// 100,000 facts in one scope, with the default options (300 candidates),
// on the in-memory, SQLite and PostgreSQL drivers, and reports the median
// and the 99th percentile.
func BenchmarkRecall100k(b *testing.B) {
	benchmarkRecall(b, 1, 100_000)
}

// BenchmarkRecallOneScopeOf1000 measures a warm lexical recall of the 10
// best facts of one scope of 1,000 among 1,000 such scopes (1,000,000
// facts), visiting the scopes in turn, and reports the median and the
// 99th percentile.
func BenchmarkRecallOneScopeOf1000(b *testing.B) {
	benchmarkRecall(b, 1000, 1000)
}

// BenchmarkRecallHybrid100k measures a warm hybrid recall of the 10 best
// of 100,000 facts in one scope, each with a vector of 64 dimensions:
// the lexical recall of BenchmarkRecall100k fused with an exact vector
// search for as many candidates, with the default options. The embedder
// is embeddingtest's, which costs microseconds: the time is the recall's.
// postgres-inprocess is PostgreSQL with Options.InProcessVectors.
func BenchmarkRecallHybrid100k(b *testing.B) {
	for _, name := range []string{"inmem", "sqlite", "postgres", "postgres-inprocess"} {
		b.Run(name, func(b *testing.B) {
			e := &embeddingtest.Embedder{Dims: benchDims}
			st := hybridStore(b, name, 100_000, e)
			timeRecalls(b, st, recall.Options{Embedder: e}, 1)
		})
	}
}

// BenchmarkRecallHybrid100kAfterWrite is BenchmarkRecallHybrid100k on
// PostgreSQL with Options.InProcessVectors, each recall timed after a
// write (untimed) that replaces one fact, text and vector: made through
// the recalling store itself (own), or through another handle on the
// database (other), as another process would. Its in-process copies
// must catch up before every recall: after its own write a driver
// catches up first, and after another's it learns of the change only
// from its catch-up, which it reads while it searches, and searches again.
func BenchmarkRecallHybrid100kAfterWrite(b *testing.B) {
	const name = "postgres-inprocess"
	for _, by := range []string{"own", "other"} {
		b.Run(by, func(b *testing.B) {
			e := &embeddingtest.Embedder{Dims: benchDims}
			st := hybridStore(b, name, 100_000, e)
			writer := st
			if by == "other" {
				d, err := postgres.Open(benchStores.at[name+"hybrid-1x100000"], postgres.Options{InProcessVectors: true})
				if err != nil {
					b.Fatal(err)
				}
				defer d.Close()
				writer = backend.NewStore(d, backend.StoreOptions{})
			}
			r, err := recall.New(st, recall.Options{Embedder: e})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			q := memory.Query{Level: memory.LevelSession}
			queries := backendtest.BenchTextQueries(64)
			who := backendtest.BenchTextIdentity(0)
			write := func(i int) {
				rec := backendtest.BenchTextRecord(0, i%1000)
				rec.ID = "after-write"
				rec.Vector = embeddingtest.Vector(rec.Content, benchDims)
				if err := writer.Driver().Put(ctx, []memory.Record{rec}); err != nil {
					b.Fatal(err)
				}
			}
			write(0)
			if _, err := r.Recall(ctx, who, q, queries[0], 10); err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			ds := make([]float64, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				write(i + 1)
				b.StartTimer()
				t0 := time.Now()
				res, err := r.Recall(ctx, who, q, queries[i%len(queries)], 10)
				ds = append(ds, float64(time.Since(t0)))
				if err == nil && res.Degraded != nil {
					err = res.Degraded
				}
				if err != nil || len(res.Hits) == 0 {
					b.Fatal(err, len(res.Hits))
				}
			}
			b.StopTimer()
			slices.Sort(ds)
			b.ReportMetric(ds[len(ds)/2], "median-ns/op")
			b.ReportMetric(ds[len(ds)*99/100], "p99-ns/op")
		})
	}
}

// BenchmarkFirstRecallHybrid100k measures the first hybrid recall of a
// new handle on the store of BenchmarkRecallHybrid100k, once the
// snapshots of its text cache (and, on SQLite, of its vector copy) are
// stored: what a restarted agent's first recall costs. On PostgreSQL the
// vector half is pgvector's search in the server (the driver's
// default). The handle is opened in the benchmark's process, whose
// memory is mapped already, or with -new-process in a child process of
// its own; with -sqlite-snapshots=false a SQLite handle reads every
// vector instead of the vector snapshot, for comparison.
func BenchmarkFirstRecallHybrid100k(b *testing.B) {
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) { firstRecalls(b, name) })
	}
}

// firstRecalls is BenchmarkFirstRecallHybrid100k on the named driver.
func firstRecalls(b *testing.B, name string) {
	e := &embeddingtest.Embedder{Dims: benchDims}
	st := hybridStore(b, name, 100_000, e)
	at := benchStores.at[name+"hybrid-1x100000"]
	ctx := context.Background()
	q := memory.Query{Level: memory.LevelSession}
	queries := backendtest.BenchTextQueries(64)
	who := backendtest.BenchTextIdentity(0)
	// The warm store's first recall loads both from the records and
	// stores their snapshots in the background.
	warm, err := recall.New(st, recall.Options{Embedder: e})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := warm.Recall(ctx, who, q, queries[0], 10); err != nil {
		b.Fatal(err)
	}
	waitForSnapshots(b, name, at)
	if *newProcess {
		firstRecallsInChildren(b, name, at)
		return
	}
	ds := make([]float64, 0, b.N)
	for i := range b.N {
		_, took, err := firstRecall(ctx, name, at, i)
		if err != nil {
			b.Fatal(err)
		}
		ds = append(ds, float64(took))
	}
	reportSpread(b, ds)
}

// firstRecall opens a new handle of the named driver on the store at
// (a SQLite file, a PostgreSQL DSN) and makes its first hybrid recall,
// the i-th of the benchmark's queries; took is how long the recall
// took, opening the handle left out.
func firstRecall(ctx context.Context, name, at string, i int) (n int, took time.Duration, err error) {
	e := &embeddingtest.Embedder{Dims: benchDims}
	var d driver.Driver
	switch name {
	case "sqlite":
		d, err = sqlite.Open(at, sqlite.Options{NoVectorSnapshots: !*sqliteSnapshots})
	case "postgres":
		d, err = postgres.Open(at, postgres.Options{})
	default:
		err = fmt.Errorf("no first recall on driver %q", name)
	}
	if err != nil {
		return 0, 0, err
	}
	defer d.Close()
	r, err := recall.New(backend.NewStore(d, backend.StoreOptions{}), recall.Options{Embedder: e})
	if err != nil {
		return 0, 0, err
	}
	queries := backendtest.BenchTextQueries(64)
	t0 := time.Now()
	res, err := r.Recall(ctx, backendtest.BenchTextIdentity(0), memory.Query{Level: memory.LevelSession}, queries[i%len(queries)], 10)
	if err == nil && res.Degraded != nil {
		err = res.Degraded
	}
	took = time.Since(t0)
	if err == nil && len(res.Hits) == 0 {
		err = fmt.Errorf("the first recall found nothing")
	}
	return len(res.Hits), took, err
}

// The child process of BenchmarkFirstRecallHybrid100k -new-process: the
// driver's name and where its store is, and the line it reports on.
const (
	firstRecallDriverEnv = "AGENTMEM_RECALL_FIRST_DRIVER"
	firstRecallEnv       = "AGENTMEM_RECALL_FIRST_RECALL"
	firstRecallLine      = "recall: the first recall took ns "
)

var newProcess = flag.Bool("new-process", false, "BenchmarkFirstRecallHybrid100k: each first recall in a new process")

// TestFirstRecallChild is the child of BenchmarkFirstRecallHybrid100k
// -new-process; run directly, it skips.
func TestFirstRecallChild(t *testing.T) {
	proctest.Child(t)
	_, took, err := firstRecall(context.Background(), os.Getenv(firstRecallDriverEnv), os.Getenv(firstRecallEnv), 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("%s%d\n", firstRecallLine, took.Nanoseconds())
}

// firstRecallsInChildren times b.N first recalls, each in a child process
// of its own, and reports the median, fastest and slowest.
func firstRecallsInChildren(b *testing.B, name, at string) {
	ds := make([]float64, 0, b.N)
	b.ResetTimer()
	for range b.N {
		env := []string{firstRecallDriverEnv + "=" + name, firstRecallEnv + "=" + at}
		if !*sqliteSnapshots {
			env = append(env, "AGENTMEM_RECALL_NO_VECTOR_SNAPSHOTS=1")
		}
		p := proctest.Start(b, "TestFirstRecallChild", proctest.Options{Env: env})
		took := 0.0
		for line := range p.Lines() {
			if ns, ok := strings.CutPrefix(line, firstRecallLine); ok {
				took, _ = strconv.ParseFloat(ns, 64)
			}
		}
		if out, err := p.Wait(); err != nil || took == 0 {
			b.Fatalf("the child failed (%v) or reported no time:\n%s", err, out)
		}
		ds = append(ds, took)
	}
	b.StopTimer()
	reportSpread(b, ds)
}

// reportSpread reports the median, fastest and slowest of ds, in
// nanoseconds.
func reportSpread(b *testing.B, ds []float64) {
	slices.Sort(ds)
	b.ReportMetric(ds[len(ds)/2], "median-ns/op")
	b.ReportMetric(ds[0], "min-ns/op")
	b.ReportMetric(ds[len(ds)-1], "max-ns/op")
}

var sqliteSnapshots = flag.Bool("sqlite-snapshots", os.Getenv("AGENTMEM_RECALL_NO_VECTOR_SNAPSHOTS") == "", "BenchmarkFirstRecallHybrid100k: new handles read the vector snapshot")

// waitForSnapshots waits until the store of the named driver at (a
// SQLite file, a PostgreSQL DSN) describes the snapshots a new handle
// starts from, for at most a minute: on SQLite a text and a vector
// snapshot current at the stored epochs, since a benchmark of a new
// handle's first recall that found a stale snapshot would measure a load
// from the records instead; on PostgreSQL a text snapshot, which a new
// handle catches up from the change log.
func waitForSnapshots(b *testing.B, name, at string) {
	driverName := sqlite.DriverName
	if name == "postgres" {
		driverName = "postgres"
	}
	db, err := sql.Open(driverName, at)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		settings := map[string]string{}
		rows, err := db.Query(`SELECT name, value FROM memory_settings`)
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				b.Fatal(err)
			}
			settings[k] = v
		}
		if err := rows.Close(); err != nil {
			b.Fatal(err)
		}
		// current reports whether the snapshot described in setting has
		// a tag whose epoch, before any ":" (a SQLite text snapshot's
		// tag is "epoch:largest rowid", a vector snapshot's the vector
		// epoch), is the stored epoch.
		current := func(setting, epoch string) bool {
			var desc struct{ Tag string }
			if json.Unmarshal([]byte(settings[setting]), &desc) != nil {
				return false
			}
			e, _, _ := strings.Cut(desc.Tag, ":")
			return e == settings[epoch]
		}
		done := settings["text_snapshot"] != ""
		if name == "sqlite" {
			done = current("text_snapshot", "text_epoch") && current("vector_snapshot", "vector_epoch")
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			b.Fatal("the snapshots a new handle starts from were not stored within a minute")
		}
	}
}

func benchmarkRecall(b *testing.B, scopes, perScope int) {
	for _, name := range []string{"inmem", "sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			timeRecalls(b, benchStore(b, name, scopes, perScope), recall.Options{}, scopes)
		})
	}
}

// timeRecalls times recalls of the 10 best with opt on st, over the
// scopes of the benchmark data in turn, and reports the median and the
// 99th percentile.
func timeRecalls(b *testing.B, st *backend.Store, opt recall.Options, scopes int) {
	r, err := recall.New(st, opt)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	q := memory.Query{Level: memory.LevelSession}
	queries := backendtest.BenchTextQueries(64)
	scope := func(i int) memory.Identity { return backendtest.BenchTextIdentity((i * 7919) % scopes) }
	// Warm: the first recall builds what the driver keeps for searching.
	if _, err := r.Recall(ctx, scope(0), q, queries[0], 10); err != nil {
		b.Fatal(err)
	}
	// Steady: the garbage of filling and warming collected, so that the
	// recalls timed do not share the machine with its collection.
	runtime.GC()
	backendtest.TimeEach(b, func(i int) (int, error) {
		res, err := r.Recall(ctx, scope(i), q, queries[i%len(queries)], 10)
		if err == nil && res.Degraded != nil {
			err = res.Degraded
		}
		return len(res.Hits), err
	})
}

var benchTemp struct {
	once sync.Once
	dir  string
	err  error
}

// benchDir returns a temporary directory for the process's benchmark
// stores, made once; TestMain removes it.
func benchDir() (string, error) {
	benchTemp.once.Do(func() { benchTemp.dir, benchTemp.err = os.MkdirTemp("", "recall-bench-") })
	return benchTemp.dir, benchTemp.err
}

func TestMain(m *testing.M) {
	code := m.Run()
	pg.Stop()
	if benchTemp.dir != "" {
		os.RemoveAll(benchTemp.dir)
	}
	os.Exit(code)
}
