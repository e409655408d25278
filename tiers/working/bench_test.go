package working_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/tiers/working"
)

// The working-memory benchmarks run on the embedded default, a SQLite
// file, holding benchSquads squads' rows of a realistic size (a 1 KiB
// payload), benchKeys keys each at SQUAD_AGENT, plus platform defaults and
// tenant overrides of benchKeys AGENT keys. Their targets and measured
// medians are in BENCHMARKS.md.
const (
	benchSquads = 200
	benchKeys   = 50
)

// benchPayload is a 1 KiB JSON object.
var benchPayload = func() json.RawMessage {
	vendors := make([]map[string]any, 8)
	for i := range vendors {
		vendors[i] = map[string]any{"id": fmt.Sprintf("vendor-%d", i), "label": fmt.Sprintf("Vendor %d", i), "signals": []string{"<script src=\"https://cdn.example/widget.js\">", "data-chat-id"}}
	}
	b, _ := json.Marshal(vendors)
	return b
}()

func benchSquadID(i int) memory.Identity {
	return memory.Identity{
		Tenant:   fmt.Sprintf("tenant-%02d", i%20),
		Agent:    "kaos://agent/sales/opportunity-analyst",
		Instance: fmt.Sprintf("ta-%03d", i),
		Squad:    fmt.Sprintf("squad-%03d", i),
		Session:  "run-1",
	}
}

// benchWorking returns a Memory over a filled SQLite file.
func benchWorking(b *testing.B) *working.Memory {
	b.Helper()
	d, err := sqlite.Open(filepath.Join(b.TempDir(), "memory.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	st := backend.NewStore(d, backend.StoreOptions{})
	b.Cleanup(func() { _ = st.Close() })
	w, err := working.New(st, working.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := range benchSquads {
		id := benchSquadID(i)
		recs := make([]memory.Record, 0, benchKeys)
		for k := range benchKeys {
			scope := id.Only(memory.LevelSquadAgent.Keyed())
			recs = append(recs, memory.NewDocument(scope, fmt.Sprintf("key-%02d", k), "working", string(benchPayload), time.Now()))
		}
		if err := st.Add(ctx, id, recs...); err != nil {
			b.Fatal(err)
		}
	}
	w.RegisterMerge("vendors", working.MergeListByID("id"))
	admin, err := working.New(backend.NewStore(st.Driver(), backend.StoreOptions{Posture: memory.Posture{AllowPlatform: true}}), working.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, tenant := range []string{backend.DefaultSystemTenant, "tenant-00"} {
		id := memory.Identity{Tenant: tenant, Agent: benchSquadID(0).Agent}
		for k := range benchKeys {
			key := fmt.Sprintf("key-%02d", k)
			if k == 0 {
				key = "vendors"
			}
			payload := benchPayload
			doc := working.Document{Level: memory.LevelParentAgent, Key: key, JSON: payload}
			var err error
			if tenant == backend.DefaultSystemTenant {
				_, err = admin.PutDefault(ctx, id.Agent, doc)
			} else {
				doc.JSON = json.RawMessage(`[{"id":"vendor-3","label":"Tenant's own"},{"id":"acmechat","label":"Acme Chat"}]`)
				_, err = w.Put(ctx, id, doc)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	return w
}

// BenchmarkWorkingGet measures Get of one SQUAD_AGENT row by key, visiting
// squads and keys in turn, and reports the median.
func BenchmarkWorkingGet(b *testing.B) {
	w := benchWorking(b)
	ctx := context.Background()
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := benchSquadID((i * 7) % benchSquads)
		key := fmt.Sprintf("key-%02d", i%benchKeys)
		t0 := time.Now()
		doc, err := w.Get(ctx, id, memory.LevelSquadAgent, key)
		ds = append(ds, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		if len(doc.JSON) != len(benchPayload) {
			b.Fatalf("got %d bytes", len(doc.JSON))
		}
	}
	b.StopTimer()
	b.ReportMetric(workingMedian(ds), "median-ns/op")
}

// BenchmarkWorkingLoadMerged measures LoadMerged of the platform's vendor
// list and one tenant's override, merged by id, and reports the median.
func BenchmarkWorkingLoadMerged(b *testing.B) {
	w := benchWorking(b)
	ctx := context.Background()
	id := benchSquadID(0)
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		m, err := w.LoadMerged(ctx, id, "vendors")
		ds = append(ds, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		if m.Defaults == nil || m.Override == nil {
			b.Fatal("merged read lacks a source")
		}
	}
	b.StopTimer()
	b.ReportMetric(workingMedian(ds), "median-ns/op")
}

// workingMedian returns the median of ds in nanoseconds.
func workingMedian(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2].Nanoseconds())
}

// BenchmarkMergeListByID measures merging the benchmark's 1 KiB vendor
// list with a two-item override, the merge LoadMerged runs, alone.
func BenchmarkMergeListByID(b *testing.B) {
	rule := working.MergeListByID("id")
	override := json.RawMessage(`[{"id":"vendor-3","label":"Tenant's own"},{"id":"acmechat","label":"Acme Chat"}]`)
	ds := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := rule(benchPayload, override); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	b.ReportMetric(workingMedian(ds), "median-ns/op")
}
