package telemetry

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Handler returns next recording each request as a server span and a
// sample of agentmem.http.request.duration, with its method
// (http.request.method: one of the methods HTTP defines, or "_OTHER"),
// its route (http.route) and its status class ("2xx", …; the span has the
// status code). The route is the path of the http.ServeMux pattern that
// matched the request (Request.Pattern, without its method and host: a
// pattern "POST /v1/recall" is the route "/v1/recall"), so next is, or
// routes through, a ServeMux that is given the request Handler passes it
// (not a copy); a request no pattern matched has no route. The request's
// path, query and headers are never recorded. The span is named after the
// method and route ("POST /v1/recall"), is the request context's span for
// next, and continues the caller's trace when Options.Propagator is set;
// a status of 500 or more sets its status to Error. A handler that panics
// is recorded with status 500 and the panic goes on.
//
// The ResponseWriter next receives has the Flush of the one Handler was
// given, and Unwrap returns that one, for http.ResponseController.
// When t is nil or has no provider, Handler returns next itself.
func Handler(next http.Handler, t *Telemetry) http.Handler {
	if t == nil || !t.enabled {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx := r.Context()
		if t.propagator != nil {
			ctx = t.propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
		}
		method := httpMethod(r.Method)
		ctx, span := t.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String(keyMethod, method)))
		sw := &statusWriter{ResponseWriter: w}
		r = r.WithContext(ctx)
		defer func() {
			p := recover()
			status := sw.status
			if p != nil {
				status = http.StatusInternalServerError
			} else if status == 0 {
				status = http.StatusOK
			}
			route := httpRoute(r.Pattern)
			class := statusClass(status)
			t.httpDuration.Record(ctx, seconds(start), t.measure(attrKey{kind: kindHTTP, a: method, b: route, c: class}))
			if span.IsRecording() {
				if route != "" {
					span.SetName(method + " " + route)
					span.SetAttributes(attribute.String(keyRoute, route))
				}
				span.SetAttributes(attribute.Int(keyStatusCode, status))
				if status >= 500 {
					span.SetAttributes(attribute.String(keyErrorType, strconv.Itoa(status)))
					span.SetStatus(codes.Error, "")
				}
			}
			span.End()
			if p != nil {
				panic(p)
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

// httpMethod is the http.request.method of a request's method: the method
// when HTTP defines it, "_OTHER" otherwise (a client chooses the string).
func httpMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return other
}

// httpRoute is the path of a ServeMux pattern ("[METHOD ][HOST]/[PATH]"),
// or "" for none.
func httpRoute(pattern string) string {
	if i := strings.IndexAny(pattern, " \t"); i >= 0 {
		pattern = pattern[i+1:]
	}
	if i := strings.IndexByte(pattern, '/'); i >= 0 {
		return pattern[i:]
	}
	return ""
}

// statusClass is "1xx" to "5xx", or "_OTHER" for a status outside them.
func statusClass(status int) string {
	if status < 100 || status > 599 {
		return other
	}
	return strconv.Itoa(status/100) + "xx"
}

// statusWriter remembers the status of the response written through it.
type statusWriter struct {
	http.ResponseWriter
	status int // 0 until the header is written
}

func (w *statusWriter) WriteHeader(code int) {
	// An informational status (103 Early Hints) precedes the response's
	// own; 101 Switching Protocols is the last.
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush flushes the underlying writer when it can, which sends a status
// of 200 when none was written.
func (w *statusWriter) Flush() {
	if err := http.NewResponseController(w.ResponseWriter).Flush(); err == nil && w.status == 0 {
		w.status = http.StatusOK
	}
}

// Unwrap returns the ResponseWriter Handler was given.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
