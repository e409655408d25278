package telemetry

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// PrometheusContentType is the Content-Type of what NewPrometheus's
// handler serves: the Prometheus text exposition format, version 0.0.4.
const PrometheusContentType = "text/plain; version=0.0.4; charset=utf-8"

// NewPrometheus returns an SDK MeterProvider, made with opts (a resource,
// views) and a reader of its own, and an http.Handler that serves the
// provider's metrics to GET and HEAD requests in the Prometheus text
// exposition format (PrometheusContentType), collected at each request
// (other methods are 405). Give the provider to New as
// Options.MeterProvider, serve the handler at GET /metrics, and shut the
// provider down when the program ends; the handler then answers 503.
//
// Metrics are cumulative and translated as OpenTelemetry's Prometheus
// compatibility specifies: a name's characters other than letters,
// digits, '_' and ':' become '_', the unit is appended ("s" as
// "_seconds", "By" as "_bytes", a "{…}" annotation not at all), and
// a monotonic sum is a counter named with "_total"; a non-monotonic sum
// and a gauge are gauges; a histogram has its _bucket series (cumulative,
// le="+Inf" last), _sum and _count. An attribute's key has its dots made
// '_' and the label otel_scope_name names the instrumentation scope.
// Exponential histograms and summaries are left out, as are a resource's
// attributes and, of metrics of one name but different types, all but
// the first in order of scope name. Families are sorted by name and
// series by labels; a family's help is its first metric's description.
func NewPrometheus(opts ...sdkmetric.Option) (*sdkmetric.MeterProvider, http.Handler) {
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(append(slices.Clip(opts), sdkmetric.WithReader(r))...)
	return mp, &promHandler{r: r}
}

type promHandler struct{ r *sdkmetric.ManualReader }

func (h *promHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	var rm metricdata.ResourceMetrics
	if err := h.r.Collect(req.Context(), &rm); err != nil {
		http.Error(w, "metrics are not available", http.StatusServiceUnavailable)
		return
	}
	var b bytes.Buffer
	writePrometheus(&b, &rm)
	w.Header().Set("Content-Type", PrometheusContentType)
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	if req.Method == http.MethodGet {
		w.Write(b.Bytes())
	}
}

// promFamily is one metric family of the exposition: the series of one
// name.
type promFamily struct {
	name, help, typ string
	series          []promSeries
}

// promSeries is one data point's lines, sorted by its labels.
type promSeries struct {
	labels string
	lines  []string
}

// writePrometheus writes rm in the Prometheus text exposition format.
func writePrometheus(w io.Writer, rm *metricdata.ResourceMetrics) {
	families := map[string]*promFamily{}
	// Scopes in order of name, so that of two metrics of one name the
	// same one is kept at every scrape.
	scopes := slices.Clone(rm.ScopeMetrics)
	slices.SortStableFunc(scopes, func(a, b metricdata.ScopeMetrics) int {
		return strings.Compare(a.Scope.Name+" "+a.Scope.Version, b.Scope.Name+" "+b.Scope.Version)
	})
	for _, sm := range scopes {
		for _, m := range sm.Metrics {
			addMetric(families, sm.Scope.Name, m)
		}
	}
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, name := range names {
		f := families[name]
		slices.SortStableFunc(f.series, func(a, b promSeries) int { return strings.Compare(a.labels, b.labels) })
		if f.help != "" {
			b.WriteString("# HELP " + name + " " + escapeHelp(f.help) + "\n")
		}
		b.WriteString("# TYPE " + name + " " + f.typ + "\n")
		for _, s := range f.series {
			for _, l := range s.lines {
				b.WriteString(l)
				b.WriteByte('\n')
			}
		}
	}
	io.WriteString(w, b.String())
}

// addMetric adds m's data points to the family of its name.
func addMetric(families map[string]*promFamily, scope string, m metricdata.Metrics) {
	name := promName(m.Name, m.Unit)
	var typ string
	var series []promSeries
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		typ, name, series = sumSeries(name, scope, d.IsMonotonic, d.DataPoints)
	case metricdata.Sum[float64]:
		typ, name, series = sumSeries(name, scope, d.IsMonotonic, d.DataPoints)
	case metricdata.Gauge[int64]:
		typ, series = "gauge", valueSeries(name, scope, d.DataPoints)
	case metricdata.Gauge[float64]:
		typ, series = "gauge", valueSeries(name, scope, d.DataPoints)
	case metricdata.Histogram[int64]:
		typ, series = "histogram", histogramSeries(name, scope, d.DataPoints)
	case metricdata.Histogram[float64]:
		typ, series = "histogram", histogramSeries(name, scope, d.DataPoints)
	default:
		return
	}
	f := families[name]
	if f == nil {
		f = &promFamily{name: name, help: m.Description, typ: typ}
		families[name] = f
	} else if f.typ != typ {
		return
	}
	f.series = append(f.series, series...)
}

func sumSeries[N int64 | float64](name, scope string, monotonic bool, dps []metricdata.DataPoint[N]) (string, string, []promSeries) {
	if !monotonic {
		return "gauge", name, valueSeries(name, scope, dps)
	}
	if !strings.HasSuffix(name, "_total") {
		name += "_total"
	}
	return "counter", name, valueSeries(name, scope, dps)
}

func valueSeries[N int64 | float64](name, scope string, dps []metricdata.DataPoint[N]) []promSeries {
	series := make([]promSeries, 0, len(dps))
	for _, dp := range dps {
		labels := promLabels(scope, dp.Attributes, "")
		series = append(series, promSeries{labels: labels, lines: []string{name + labels + " " + promNumber(dp.Value)}})
	}
	return series
}

func histogramSeries[N int64 | float64](name, scope string, dps []metricdata.HistogramDataPoint[N]) []promSeries {
	series := make([]promSeries, 0, len(dps))
	for _, dp := range dps {
		labels := promLabels(scope, dp.Attributes, "")
		lines := make([]string, 0, len(dp.Bounds)+3)
		var cum uint64
		for i, bound := range dp.Bounds {
			if i < len(dp.BucketCounts) {
				cum += dp.BucketCounts[i]
			}
			lines = append(lines, name+"_bucket"+promLabels(scope, dp.Attributes, promFloat(bound))+" "+strconv.FormatUint(cum, 10))
		}
		lines = append(lines,
			name+"_bucket"+promLabels(scope, dp.Attributes, "+Inf")+" "+strconv.FormatUint(dp.Count, 10),
			name+"_sum"+labels+" "+promNumber(dp.Sum),
			name+"_count"+labels+" "+strconv.FormatUint(dp.Count, 10))
		series = append(series, promSeries{labels: labels, lines: lines})
	}
	return series
}

// promUnits are the suffixes of the units OpenTelemetry's Prometheus
// compatibility names; another unit is appended as it is spelled, made a
// valid name.
var promUnits = map[string]string{
	"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds",
	"min": "minutes", "h": "hours", "d": "days",
	"By": "bytes", "KiBy": "kibibytes", "MiBy": "mebibytes", "GiBy": "gibibytes",
	"1": "", "%": "percent",
}

// promName is the Prometheus name of an instrument and its unit, without
// a counter's "_total".
func promName(name, unit string) string {
	n := sanitize(name, true)
	u, ok := promUnits[unit]
	if !ok && !strings.HasPrefix(unit, "{") {
		u = sanitize(unit, false)
	}
	u = strings.Trim(u, "_")
	if u != "" && !strings.HasSuffix(n, "_"+u) {
		n += "_" + u
	}
	return n
}

// sanitize makes s a valid metric name (colons allowed) or label name:
// other characters become '_', runs of '_' one, and a leading digit gets
// a '_' before it.
func sanitize(s string, colons bool) string {
	var b strings.Builder
	for i, r := range s {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || colons && r == ':'
		if !ok {
			r = '_'
		}
		if i == 0 && r >= '0' && r <= '9' {
			b.WriteByte('_')
		}
		if r == '_' && strings.HasSuffix(b.String(), "_") {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// promLabels renders a data point's labels, with le when not empty: keys
// made label names (keys that become one have their values joined with
// ';'), sorted, then otel_scope_name.
func promLabels(scope string, set attribute.Set, le string) string {
	type label struct{ k, v string }
	var labels []label
	for _, kv := range set.ToSlice() {
		k := sanitize(string(kv.Key), false)
		if k == "" || strings.HasPrefix(k, "__") {
			k = "key" + k
		}
		if i := slices.IndexFunc(labels, func(l label) bool { return l.k == k }); i >= 0 {
			labels[i].v += ";" + kv.Value.Emit()
			continue
		}
		labels = append(labels, label{k, kv.Value.Emit()})
	}
	slices.SortFunc(labels, func(a, b label) int { return strings.Compare(a.k, b.k) })
	if le != "" {
		labels = append(labels, label{"le", le})
	}
	if scope != "" {
		labels = append(labels, label{"otel_scope_name", scope})
	}
	if len(labels) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, l := range labels {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.k + `="` + escapeLabel(l.v) + `"`)
	}
	b.WriteByte('}')
	return b.String()
}

var (
	labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }
func escapeHelp(s string) string  { return helpEscaper.Replace(s) }

func promNumber[N int64 | float64](v N) string {
	switch v := any(v).(type) {
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return promFloat(v)
	}
	return ""
}

func promFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case math.IsNaN(f):
		return "NaN"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
