package telemetry_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/telemetry"
	"github.com/agentmem/memory/tiers/tiered"
)

// A tiered memory whose calls, folds and model use are recorded, and its
// metrics served at GET /metrics in the Prometheus text format.
func Example() {
	ctx := context.Background()
	mp, metrics := telemetry.NewPrometheus()
	defer mp.Shutdown(ctx)
	tel, err := telemetry.New(telemetry.Options{MeterProvider: mp})
	if err != nil {
		panic(err)
	}

	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer st.Close()
	m, err := tiered.New(st, tiered.Options{
		// Wrap the models the folds call; OnFold adds what the folds did.
		Summarizer: telemetry.WrapSummarizer(extract.Rules{}, tel),
		Extractor:  telemetry.WrapExtractor(extract.Rules{}, tel),
		OnFold:     tel.OnFold,
	})
	if err != nil {
		panic(err)
	}
	defer m.Close()
	mem := telemetry.Wrap(m, tel)

	alice := memory.Identity{Tenant: "acme", User: "alice", Agent: "concierge", Session: "trip-1"}
	mem.Append(ctx, alice, tiered.Turn{Role: memory.RoleUser, Content: "I live in Lisbon."})
	mem.RecallWith(ctx, alice, "Where do I live?", tiered.RecallOptions{})
	_, err = mem.Window(ctx, memory.Identity{Tenant: "acme"}, 0)
	fmt.Println(telemetry.ErrorClass(err))

	// The service routes GET /metrics to the handler.
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	rec := httptest.NewRecorder()
	telemetry.Handler(mux, tel).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	lines := bufio.NewScanner(rec.Body)
	for lines.Scan() {
		if line := lines.Text(); strings.HasPrefix(line, "agentmem_operation_") && !strings.Contains(line, "_bucket") && !strings.Contains(line, "_sum") {
			fmt.Println(strings.Replace(line, `,otel_scope_name="github.com/agentmem/memory/telemetry"`, "", 1))
		}
	}
	// Output:
	// incomplete_scope
	// agentmem_operation_duration_seconds_count{agentmem_operation="append"} 1
	// agentmem_operation_duration_seconds_count{agentmem_operation="recall_with"} 1
	// agentmem_operation_duration_seconds_count{agentmem_operation="window",error_type="incomplete_scope"} 1
	// agentmem_operation_errors_total{agentmem_operation="window",error_type="incomplete_scope"} 1
}
