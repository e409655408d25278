package otlp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/agentmem/memory/telemetry/otlp"
)

func TestTracesURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://collector:4318", "http://collector:4318/v1/traces"},
		{"http://collector:4318/", "http://collector:4318/v1/traces"},
		{"https://collector:4318/v1/traces", "https://collector:4318/v1/traces"},
		{"https://gw.example/otlp/v1/traces", "https://gw.example/otlp/v1/traces"},
		{"http://[::1]:4318", "http://[::1]:4318/v1/traces"},
	} {
		if got, err := otlp.TracesURL(c.in); err != nil || got != c.want {
			t.Errorf("TracesURL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "collector:4318", "localhost", "/v1/traces", "grpc://c:4317", "http://", "http://u:secret@c:4318",
		"http://c:4318?x=1", "http://c:4318/?", "http://c:4318#f", "http://c:4318/%zz"} {
		if got, err := otlp.TracesURL(in); err == nil {
			t.Errorf("TracesURL(%q) = %q, want an error", in, got)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("TracesURL(%q): the error quotes the endpoint: %v", in, err)
		}
	}
	if _, err := otlp.NewTraces(context.Background(), "collector:4318", "svc"); err == nil {
		t.Error("NewTraces takes an endpoint that is not a URL")
	}
}

// collector keeps the paths and decoded bodies of the requests it gets.
type collector struct {
	mu    sync.Mutex
	paths []string
	reqs  []*coltracepb.ExportTraceServiceRequest
}

func newCollector(t *testing.T) (*collector, string) {
	c := &collector{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		var m coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(b, &m)
		}
		if err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("%s %s %s: %v", r.Method, r.URL.Path, r.Header.Get("Content-Type"), err)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.paths = append(c.paths, r.URL.Path)
		c.reqs = append(c.reqs, &m)
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		resp, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Write(resp)
	}))
	t.Cleanup(srv.Close)
	return c, srv.URL
}

// TestNewTraces exports a span to a collector's base URL and to a URL
// with a path, and checks that Shutdown sent it there with its name and
// the resource's service.name, which OTEL_SERVICE_NAME overrides.
func TestNewTraces(t *testing.T) {
	for _, c := range []struct{ path, env, wantPath, wantService string }{
		{"", "", "/v1/traces", "svc-a"},
		{"/gw/traces", "", "/gw/traces", "svc-a"},
		{"", "from-env", "/v1/traces", "from-env"},
	} {
		t.Run(c.wantPath+" "+c.wantService, func(t *testing.T) {
			if c.env != "" {
				t.Setenv("OTEL_SERVICE_NAME", c.env)
			}
			col, base := newCollector(t)
			tp, err := otlp.NewTraces(context.Background(), base+c.path, "svc-a")
			if err != nil {
				t.Fatal(err)
			}
			_, span := tp.Tracer("test").Start(context.Background(), "op-1")
			span.End()
			if err := tp.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			col.mu.Lock()
			defer col.mu.Unlock()
			if len(col.reqs) != 1 || col.paths[0] != c.wantPath {
				t.Fatalf("%d requests at %q, want one at %s", len(col.reqs), col.paths, c.wantPath)
			}
			rs := col.reqs[0].ResourceSpans
			if len(rs) != 1 || len(rs[0].ScopeSpans) != 1 || len(rs[0].ScopeSpans[0].Spans) != 1 || rs[0].ScopeSpans[0].Spans[0].Name != "op-1" {
				t.Fatalf("exported %v, want the span op-1", col.reqs[0])
			}
			service := ""
			for _, kv := range rs[0].Resource.GetAttributes() {
				if kv.Key == "service.name" {
					service = kv.Value.GetStringValue()
				}
			}
			if service != c.wantService {
				t.Errorf("service.name %q, want %q", service, c.wantService)
			}
		})
	}
}

// TestDependencies checks the package documentation's promise: a program
// that imports package telemetry without this one links neither the
// exporter nor gRPC.
func TestDependencies(t *testing.T) {
	deps := func(pkg string) string {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return string(out)
	}
	for _, p := range strings.Fields(deps("..")) {
		if strings.HasPrefix(p, "go.opentelemetry.io/otel/exporters/") || strings.HasPrefix(p, "google.golang.org/grpc") ||
			strings.HasPrefix(p, "google.golang.org/protobuf") {
			t.Errorf("package telemetry imports %s", p)
		}
	}
	if !strings.Contains(deps("."), "\ngoogle.golang.org/grpc\n") {
		t.Error("go list -deps does not show gRPC, which the exporter imports: the check cannot see dependencies")
	}
}
