package main

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/agentmem/memory/telemetry"
)

// receiver is an OTLP/HTTP trace receiver: it keeps the requests POSTed
// to /v1/traces, decoded, and their bodies as they were sent.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	reqs   []*coltracepb.ExportTraceServiceRequest
	bad    []string // what was wrong with requests it refused
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	refuse := func(why string) {
		r.mu.Lock()
		r.bad = append(r.bad, why)
		r.mu.Unlock()
		http.Error(w, why, http.StatusBadRequest)
	}
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		refuse(req.Method + " " + req.URL.Path)
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		refuse("Content-Type " + ct)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			refuse(err.Error())
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		refuse(err.Error())
		return
	}
	var m coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &m); err != nil {
		refuse(err.Error())
		return
	}
	r.mu.Lock()
	r.bodies = append(r.bodies, b)
	r.reqs = append(r.reqs, &m)
	r.mu.Unlock()
	resp, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(resp)
}

// exported is a span the receiver got, with its resource's service.name.
type exported struct {
	*tracepb.Span
	service string
}

// spans returns every span received, and fails t on a refused request.
func (r *receiver) spans(t *testing.T) []exported {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.bad) > 0 {
		t.Errorf("the receiver refused requests: %q", r.bad)
	}
	var out []exported
	for _, req := range r.reqs {
		for _, rs := range req.ResourceSpans {
			service := ""
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.Key == "service.name" {
					service = kv.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					out = append(out, exported{s, service})
				}
			}
		}
	}
	return out
}

// TestTracesExported runs the service in trusted headers mode with
// -metrics, the traces endpoint taken from OTEL_EXPORTER_OTLP_ENDPOINT and
// a budget small enough that the write queues a fold, makes a write and a
// recall (the recall with a caller's traceparent), waits for the fold
// (GET /metrics, also requests with spans), shuts the service down, and
// checks what the receiver got: each request's server span named after
// its route, with the operation's span as its child in its trace; the
// recall in the caller's trace; the fold's model spans, exported at
// shutdown after the fold drained; the resource's service.name; and, in
// no byte of any export, the turn's content, the query, the memory or the
// identity values.
func TestTracesExported(t *testing.T) {
	recv := newReceiver(t)
	s := start(t, map[string]string{"AGENTMEM_TRUSTED_HEADERS": "1", "OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL},
		"-budget", "40", "-metrics")
	markers := []string{"tenant-mk-5b1", "user-mk-5b1", "agent-mk-5b1", "session-mk-5b1", "content-mk-5b1", "memory-mk-5b1", "query-mk-5b1"}
	h := map[string]string{"Agentmem-Tenant": markers[0], "Agentmem-User": markers[1], "Agentmem-Agent": markers[2], "Agentmem-Session": markers[3]}
	turn := `{"role":"user","content":"content-mk-5b1 keeps the bees of the valley in Lyon, and content-mk-5b1 sells their honey."}`
	code, body := post(t, s.base+"/v1/write", h, `{"turns":[`+turn+`,`+turn+`,`+turn+`,`+turn+`],"memories":["memory-mk-5b1 keeps bees"]}`)
	if code != http.StatusAccepted { // the turns are over the budget: a fold is queued
		t.Fatalf("write: %d %v, want 202", code, body)
	}
	const callerTrace, callerSpan = "4bf92f3577b34d0736ce3df4c2d2b0e1", "00f067aa0ba902b7"
	h["traceparent"] = "00-" + callerTrace + "-" + callerSpan + "-01"
	if code, body := post(t, s.base+"/v1/recall", h, `{"text":"query-mk-5b1 where","scope":"agent"}`); code != http.StatusOK {
		t.Fatalf("recall: %d %v", code, body)
	}
	// A fold still queued at shutdown stays queued: wait until it is done.
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(getMetrics(t, s.base), `agentmem_fold_outcome="stored"`); {
		if time.Now().After(deadline) {
			t.Fatalf("the fold was not stored:\n%s", getMetrics(t, s.base))
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.shutdown(t)

	spans := recv.spans(t)
	byName := map[string][]exported{}
	for _, sp := range spans {
		byName[sp.Name] = append(byName[sp.Name], sp)
		if sp.service != serviceName {
			t.Errorf("span %q has service.name %q, want %q", sp.Name, sp.service, serviceName)
		}
	}
	one := func(name string) exported {
		t.Helper()
		if len(byName[name]) != 1 {
			t.Fatalf("%d spans named %q, want 1; got %v", len(byName[name]), name, names(spans))
		}
		return byName[name][0]
	}
	write, appendOp := one("POST /v1/write"), one("agentmem.append")
	recall, recallOp := one("POST /v1/recall"), one("agentmem.recall_with")
	for _, c := range []struct{ server, op exported }{{write, appendOp}, {recall, recallOp}} {
		if c.server.Kind != tracepb.Span_SPAN_KIND_SERVER {
			t.Errorf("%q is a %v span, want a server span", c.server.Name, c.server.Kind)
		}
		if !bytes.Equal(c.op.TraceId, c.server.TraceId) || !bytes.Equal(c.op.ParentSpanId, c.server.SpanId) {
			t.Errorf("%q (trace %x, parent %x) is not a child of %q (trace %x, span %x)",
				c.op.Name, c.op.TraceId, c.op.ParentSpanId, c.server.Name, c.server.TraceId, c.server.SpanId)
		}
	}
	if hex.EncodeToString(recall.TraceId) != callerTrace || hex.EncodeToString(recall.ParentSpanId) != callerSpan {
		t.Errorf("the recall's span is in trace %x under %x, want the caller's %s under %s", recall.TraceId, recall.ParentSpanId, callerTrace, callerSpan)
	}
	if bytes.Equal(write.TraceId, recall.TraceId) {
		t.Errorf("the write and the recall share trace %x", write.TraceId)
	}
	one("agentmem.remember")
	one("agentmem.summarize")
	one("agentmem.extract")

	recv.mu.Lock()
	defer recv.mu.Unlock()
	for _, b := range recv.bodies {
		for _, m := range markers {
			if bytes.Contains(b, []byte(m)) {
				t.Errorf("an export holds %q:\n%v", m, recv.reqs)
			}
		}
	}
}

// getMetrics returns what GET /metrics serves.
func getMetrics(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	return string(b)
}

// names lists the spans' names.
func names(spans []exported) []string {
	var n []string
	for _, s := range spans {
		n = append(n, s.Name)
	}
	return n
}

// TestOTLPEndpointConfig checks where -otlp-endpoint comes from: the flag,
// else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else
// OTEL_EXPORTER_OTLP_ENDPOINT with the traces' path appended, else
// nowhere; and that an endpoint that is not an http URL is a usage error.
func TestOTLPEndpointConfig(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, nil, ""},
		{nil, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, "http://c:4318/v1/traces"},
		{nil, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://gw/otlp/"}, "http://gw/otlp/v1/traces"},
		{nil, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://t:4318/traces"}, "https://t:4318/traces"},
		{[]string{"-otlp-endpoint", "http://f:4318"}, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:4318/v1/traces"}, "http://f:4318"},
		{[]string{"-otlp-endpoint="}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, ""},
	} {
		env := map[string]string{"AGENTMEM_DB": dir + "/x.db", "AGENTMEM_SECRET_FILE": dir + "/x.secret"}
		for k, v := range c.env {
			env[k] = v
		}
		cfg, err := parseConfig(c.args, getenvOf(env), io.Discard)
		if err != nil || cfg.otlpEndpoint != c.want {
			t.Errorf("%q %v: endpoint %q, %v; want %q", c.args, c.env, cfg.otlpEndpoint, err, c.want)
		}
	}
	for _, bad := range []string{"collector:4318", "ftp://c/x", "http://user:pw@c:4318", "http://c:4318?x=1", "http://"} {
		_, err := parseConfig([]string{"-otlp-endpoint", bad}, getenvOf(map[string]string{"AGENTMEM_DB": dir + "/x.db"}), io.Discard)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "-otlp-endpoint") || strings.Contains(err.Error(), "pw") {
			t.Errorf("-otlp-endpoint %q: %v, want a usage error that does not quote it", bad, err)
		}
	}
}

// TestNoTelemetryByDefault checks that with neither -metrics nor an OTLP
// endpoint the service's telemetry has no provider: Handler and Wrap
// return what they are given, so nothing is recorded or exported.
func TestNoTelemetryByDefault(t *testing.T) {
	c, err := parseConfig(nil, getenvOf(map[string]string{"AGENTMEM_DB": t.TempDir() + "/x.db", "AGENTMEM_TRUSTED_HEADERS": "1"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	tel, metrics, stop, err := newTelemetry(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer stop(t.Context())
	next := &http.ServeMux{}
	if metrics != nil || telemetry.Handler(next, tel) != http.Handler(next) {
		t.Errorf("the default telemetry records: metrics handler %v, Handler wraps", metrics)
	}
}
