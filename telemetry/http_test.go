package telemetry_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentmem/memory/telemetry"
)

func TestHandlerRecordsRoutesAndStatusClasses(t *testing.T) {
	r := newRig(t, telemetry.Options{})
	mux := http.NewServeMux()
	var sawSpan bool
	mux.HandleFunc("POST /v1/recall", func(w http.ResponseWriter, req *http.Request) {
		sawSpan = trace.SpanFromContext(req.Context()).SpanContext().IsValid()
		fmt.Fprint(w, "ok")
	})
	mux.HandleFunc("GET /v1/items/{id}", func(w http.ResponseWriter, req *http.Request) {
		http.Error(w, "no item "+req.PathValue("id"), http.StatusNotFound)
	})
	mux.HandleFunc("/v1/boom", func(w http.ResponseWriter, req *http.Request) {
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	mux.HandleFunc("GET /v1/silent", func(w http.ResponseWriter, req *http.Request) {})
	mux.HandleFunc("POST /v1/twice", func(w http.ResponseWriter, req *http.Request) {
		w.WriteHeader(http.StatusCreated)
		w.WriteHeader(http.StatusInternalServerError) // superfluous: not sent
	})
	mux.HandleFunc("GET /v1/panic", func(w http.ResponseWriter, req *http.Request) { panic("handler bug") })
	h := telemetry.Handler(mux, r.t)

	serve := func(method, target string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, target, strings.NewReader("{}")))
		return rec.Code
	}
	for _, c := range []struct {
		method, target string
		status         int
	}{
		{"POST", "/v1/recall", 200},
		{"POST", "/v1/recall?user=SECRET", 200},
		{"GET", "/v1/items/SECRET-1", 404},
		{"GET", "/v1/items/SECRET-2", 404},
		{"PUT", "/v1/boom", 0}, // the recorder keeps the 103 it was sent first
		{"GET", "/v1/silent", 200},
		{"POST", "/v1/twice", 201},
		{"GET", "/SECRET/unrouted", 404},
		{"BREW", "/v1/recall", 405},
	} {
		if got := serve(c.method, c.target); c.status != 0 && got != c.status {
			t.Errorf("%s %s: status %d, want %d", c.method, c.target, got, c.status)
		}
	}
	if !sawSpan {
		t.Error("the handler's request context carries no span")
	}
	func() {
		defer func() {
			if p := recover(); p != "handler bug" {
				t.Errorf("recovered %v, want the handler's panic", p)
			}
		}()
		serve("GET", "/v1/panic")
		t.Error("the handler's panic did not go on")
	}()

	all := r.metrics(t)
	checkPoints(t, all, "agentmem.http.request.duration", "s",
		point{attrs{"http.request.method": "POST", "http.route": "/v1/recall", "agentmem.http.status_class": "2xx"}, 2},
		point{attrs{"http.request.method": "GET", "http.route": "/v1/items/{id}", "agentmem.http.status_class": "4xx"}, 2},
		point{attrs{"http.request.method": "PUT", "http.route": "/v1/boom", "agentmem.http.status_class": "5xx"}, 1},
		point{attrs{"http.request.method": "GET", "http.route": "/v1/silent", "agentmem.http.status_class": "2xx"}, 1},
		point{attrs{"http.request.method": "POST", "http.route": "/v1/twice", "agentmem.http.status_class": "2xx"}, 1},
		point{attrs{"http.request.method": "GET", "agentmem.http.status_class": "4xx"}, 1},
		point{attrs{"http.request.method": "_OTHER", "agentmem.http.status_class": "4xx"}, 1},
		point{attrs{"http.request.method": "GET", "http.route": "/v1/panic", "agentmem.http.status_class": "5xx"}, 1},
	)
	checkNoMarkerInMetrics(t, r, "SECRET")

	spans := r.spans.Ended()
	want := []struct {
		name   string
		attrs  attrs
		failed bool
	}{
		{"POST /v1/recall", attrs{"http.request.method": "POST", "http.route": "/v1/recall", "http.response.status_code": "200"}, false},
		{"POST /v1/recall", attrs{"http.request.method": "POST", "http.route": "/v1/recall", "http.response.status_code": "200"}, false},
		{"GET /v1/items/{id}", attrs{"http.request.method": "GET", "http.route": "/v1/items/{id}", "http.response.status_code": "404"}, false},
		{"GET /v1/items/{id}", attrs{"http.request.method": "GET", "http.route": "/v1/items/{id}", "http.response.status_code": "404"}, false},
		{"PUT /v1/boom", attrs{"http.request.method": "PUT", "http.route": "/v1/boom", "http.response.status_code": "503", "error.type": "503"}, true},
		{"GET /v1/silent", attrs{"http.request.method": "GET", "http.route": "/v1/silent", "http.response.status_code": "200"}, false},
		{"POST /v1/twice", attrs{"http.request.method": "POST", "http.route": "/v1/twice", "http.response.status_code": "201"}, false},
		{"GET", attrs{"http.request.method": "GET", "http.response.status_code": "404"}, false},
		{"_OTHER", attrs{"http.request.method": "_OTHER", "http.response.status_code": "405"}, false},
		{"GET /v1/panic", attrs{"http.request.method": "GET", "http.route": "/v1/panic", "http.response.status_code": "500", "error.type": "500"}, true},
	}
	if len(spans) != len(want) {
		t.Fatalf("%d spans, want %d", len(spans), len(want))
	}
	for i, s := range spans {
		if s.Name() != want[i].name {
			t.Errorf("span %d is %q, want %q", i, s.Name(), want[i].name)
		}
		if s.SpanKind() != trace.SpanKindServer {
			t.Errorf("span %d: kind %v", i, s.SpanKind())
		}
		checkAttrs(t, s.Name(), spanAttrs(s), want[i].attrs)
		if failed := s.Status().Code == codes.Error; failed != want[i].failed {
			t.Errorf("span %d %s: status %+v", i, s.Name(), s.Status())
		}
		for _, text := range spanStrings(s) {
			if strings.Contains(text, "SECRET") {
				t.Errorf("span %s holds user data: %q", s.Name(), text)
			}
		}
	}
}

// With a propagator, a request's span continues the caller's trace;
// without one, it starts a trace of its own.
func TestHandlerPropagation(t *testing.T) {
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	for _, prop := range []propagation.TextMapPropagator{nil, propagation.TraceContext{}} {
		r := newRig(t, telemetry.Options{Propagator: prop})
		h := telemetry.Handler(http.NotFoundHandler(), r.t)
		req := httptest.NewRequest("GET", "/", nil)
		req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
		h.ServeHTTP(httptest.NewRecorder(), req)
		s := r.spans.Ended()[0]
		if got := s.SpanContext().TraceID().String() == traceID; got != (prop != nil) {
			t.Errorf("propagator %v: trace %s, parent %v", prop, s.SpanContext().TraceID(), s.Parent())
		}
	}
}

// The writer a handler gets flushes, and unwraps to the server's for
// http.ResponseController.
func TestHandlerWriterFlushesAndUnwraps(t *testing.T) {
	r := newRig(t, telemetry.Options{})
	deadlineErr := make(chan error, 1)
	h := telemetry.Handler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.(http.Flusher).Flush()
		deadlineErr <- http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Minute))
	}), r.t)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if !rec.Flushed {
		t.Error("Flush did not reach the recorder")
	}
	<-deadlineErr // a recorder has no deadlines
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := <-deadlineErr; err != nil {
		t.Errorf("ResponseController through the handler's writer: %v", err)
	}
	checkPoints(t, r.metrics(t), "agentmem.http.request.duration", "s",
		point{attrs{"http.request.method": "GET", "agentmem.http.status_class": "2xx"}, 2})
}
