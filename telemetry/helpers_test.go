package telemetry_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentmem/memory/telemetry"
)

// rig is a Telemetry recording into the SDK's in-memory reader and span
// recorder.
type rig struct {
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
	t      *telemetry.Telemetry
}

func newRig(tb testing.TB, opt telemetry.Options) *rig {
	tb.Helper()
	r := &rig{reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder()}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	tb.Cleanup(func() {
		mp.Shutdown(context.Background())
		tp.Shutdown(context.Background())
	})
	opt.MeterProvider, opt.TracerProvider = mp, tp
	t, err := telemetry.New(opt)
	if err != nil {
		tb.Fatal(err)
	}
	r.t = t
	return r
}

// metrics collects the metrics recorded so far, by name.
func (r *rig) metrics(tb testing.TB) map[string]metricdata.Metrics {
	tb.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		tb.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != telemetry.ScopeName {
			tb.Errorf("scope %q, want %q", sm.Scope.Name, telemetry.ScopeName)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// attrs is an attribute set as a map of emitted values.
type attrs = map[string]string

func attrMap(s attribute.Set) attrs {
	m := attrs{}
	for _, kv := range s.ToSlice() {
		m[string(kv.Key)] = kv.Value.Emit()
	}
	return m
}

// point is one data point: its attributes and its value (a sum's value, a
// histogram's count).
type point struct {
	attrs attrs
	value int64
}

func (p point) String() string { return fmt.Sprintf("%v=%d", p.attrs, p.value) }

// points returns m's data points, checking its unit and temporality.
func points(tb testing.TB, m metricdata.Metrics, unit string) []point {
	tb.Helper()
	if m.Unit != unit {
		tb.Errorf("%s: unit %q, want %q", m.Name, m.Unit, unit)
	}
	var ps []point
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		if !d.IsMonotonic || d.Temporality != metricdata.CumulativeTemporality {
			tb.Errorf("%s: not a cumulative monotonic sum", m.Name)
		}
		for _, dp := range d.DataPoints {
			ps = append(ps, point{attrMap(dp.Attributes), dp.Value})
		}
	case metricdata.Histogram[float64]:
		for _, dp := range d.DataPoints {
			ps = append(ps, point{attrMap(dp.Attributes), int64(dp.Count)})
			if dp.Count > 0 && dp.Sum < 0 {
				tb.Errorf("%s: negative sum", m.Name)
			}
		}
	default:
		tb.Fatalf("%s: data of type %T", m.Name, m.Data)
	}
	return ps
}

// checkPoints checks that m has exactly the points want, in any order.
func checkPoints(tb testing.TB, all map[string]metricdata.Metrics, name, unit string, want ...point) {
	tb.Helper()
	m, ok := all[name]
	if !ok {
		tb.Errorf("no metric %s", name)
		return
	}
	got := points(tb, m, unit)
	key := func(p point) string {
		keys := slices.Sorted(maps.Keys(p.attrs))
		var b strings.Builder
		for _, k := range keys {
			b.WriteString(k + "=" + p.attrs[k] + ",")
		}
		return fmt.Sprintf("%s%d", b.String(), p.value)
	}
	g := make([]string, len(got))
	for i, p := range got {
		g[i] = key(p)
	}
	w := make([]string, len(want))
	for i, p := range want {
		w[i] = key(p)
	}
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		tb.Errorf("%s points:\n got %v\nwant %v", name, g, w)
	}
}

// spanStrings lists every text a span holds: its name, its attributes'
// keys and values, its events' names and attributes, its status.
func spanStrings(s sdktrace.ReadOnlySpan) []string {
	out := []string{s.Name(), s.Status().Description}
	for _, kv := range s.Attributes() {
		out = append(out, string(kv.Key), kv.Value.Emit())
	}
	for _, e := range s.Events() {
		out = append(out, e.Name)
		for _, kv := range e.Attributes {
			out = append(out, string(kv.Key), kv.Value.Emit())
		}
	}
	return out
}

// spanAttrs is a span's attributes as a map.
func spanAttrs(s sdktrace.ReadOnlySpan) attrs {
	return attrMap(attribute.NewSet(s.Attributes()...))
}
