package telemetry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentmem/memory/telemetry"
)

func scrape(t *testing.T, h http.Handler, method string) (int, http.Header, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, "/metrics", nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, rec.Result().Header, string(body)
}

func TestPrometheusExposition(t *testing.T) {
	mp, h := telemetry.NewPrometheus()
	ctx := context.Background()
	m := mp.Meter("scope/a")
	calls, _ := m.Int64Counter("agentmem.model.calls", metric.WithUnit("{call}"), metric.WithDescription("Requests made.\nTo models."))
	calls.Add(ctx, 3, metric.WithAttributes(attribute.String("agentmem.model.operation", "extract")))
	calls.Add(ctx, 2, metric.WithAttributes(attribute.String("agentmem.model.operation", `a"b\c`+"\nd")))
	dur, _ := m.Float64Histogram("op.duration", metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(0.5, 1))
	dur.Record(ctx, 0.25, metric.WithAttributes(attribute.String("op", "x")))
	dur.Record(ctx, 0.75, metric.WithAttributes(attribute.String("op", "x")))
	dur.Record(ctx, 5, metric.WithAttributes(attribute.String("op", "x")))
	queue, _ := m.Int64UpDownCounter("queue.depth", metric.WithUnit("{item}"))
	queue.Add(ctx, -2)
	size, _ := m.Float64Gauge("cache-size", metric.WithUnit("By"))
	size.Record(ctx, 1.5, metric.WithAttributes(attribute.Bool("warm", true), attribute.Int("shard", 2)))
	// A second scope's series join the family of their name; a metric
	// whose name a family of another type holds is left out.
	other, _ := mp.Meter("scope/b").Int64Counter("agentmem.model.calls", metric.WithUnit("{call}"))
	other.Add(ctx, 1)
	clash, _ := mp.Meter("scope/b").Float64Gauge("op.duration", metric.WithUnit("s"))
	clash.Record(ctx, 1)

	code, header, body := scrape(t, h, "GET")
	if code != 200 || header.Get("Content-Type") != telemetry.PrometheusContentType {
		t.Fatalf("status %d, Content-Type %q", code, header.Get("Content-Type"))
	}
	want := `# HELP agentmem_model_calls_total Requests made.\nTo models.
# TYPE agentmem_model_calls_total counter
agentmem_model_calls_total{agentmem_model_operation="a\"b\\c\nd",otel_scope_name="scope/a"} 2
agentmem_model_calls_total{agentmem_model_operation="extract",otel_scope_name="scope/a"} 3
agentmem_model_calls_total{otel_scope_name="scope/b"} 1
# TYPE cache_size_bytes gauge
cache_size_bytes{shard="2",warm="true",otel_scope_name="scope/a"} 1.5
# TYPE op_duration_seconds histogram
op_duration_seconds_bucket{op="x",le="0.5",otel_scope_name="scope/a"} 1
op_duration_seconds_bucket{op="x",le="1",otel_scope_name="scope/a"} 2
op_duration_seconds_bucket{op="x",le="+Inf",otel_scope_name="scope/a"} 3
op_duration_seconds_sum{op="x",otel_scope_name="scope/a"} 6
op_duration_seconds_count{op="x",otel_scope_name="scope/a"} 3
# TYPE queue_depth gauge
queue_depth{otel_scope_name="scope/a"} -2
`
	if body != want {
		t.Errorf("exposition:\n%s\nwant:\n%s", body, want)
	}

	if code, _, body := scrape(t, h, "HEAD"); code != 200 || body != "" {
		t.Errorf("HEAD: %d, %q", code, body)
	}
	if code, header, _ := scrape(t, h, "POST"); code != http.StatusMethodNotAllowed || header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d, Allow %q", code, header.Get("Allow"))
	}
	if err := mp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := scrape(t, h, "GET"); code != http.StatusServiceUnavailable {
		t.Errorf("after Shutdown: %d", code)
	}
}

// The Telemetry's own metrics, served: the names a Prometheus scrape sees.
func TestPrometheusServesTelemetry(t *testing.T) {
	mp, h := telemetry.NewPrometheus()
	defer mp.Shutdown(context.Background())
	tel, err := telemetry.New(telemetry.Options{MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeMemory{}
	m := telemetry.Wrap(f, tel)
	m.Window(context.Background(), alice, 0)
	telemetry.WrapSummarizer(paidModel{}, tel).Summarize(context.Background(), "", turnsOf("I live in Lisbon."))
	_, _, body := scrape(t, h, "GET")
	for _, line := range []string{
		`# TYPE agentmem_operation_duration_seconds histogram`,
		`agentmem_operation_duration_seconds_count{agentmem_operation="window",otel_scope_name="github.com/agentmem/memory/telemetry"} 1`,
		`agentmem_operation_duration_seconds_bucket{agentmem_operation="window",le="0.0001",otel_scope_name="github.com/agentmem/memory/telemetry"} `,
		`# TYPE agentmem_model_tokens_total counter`,
		`agentmem_model_tokens_total{agentmem_model_operation="summarize",agentmem_token_type="input",otel_scope_name="github.com/agentmem/memory/telemetry"} 100`,
		`agentmem_model_calls_total{agentmem_model_operation="summarize",otel_scope_name="github.com/agentmem/memory/telemetry"} 1`,
	} {
		if !strings.Contains(body, line) {
			t.Errorf("no %q in\n%s", line, body)
		}
	}
}
