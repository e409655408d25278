package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/propagation"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/postgres"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/contract"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/server"
	"github.com/agentmem/memory/telemetry"
	"github.com/agentmem/memory/telemetry/otlp"
	"github.com/agentmem/memory/tiers/tiered"
)

// shutdownGrace bounds a graceful shutdown: requests in flight and the
// folds running.
const shutdownGrace = 60 * time.Second

// listeningPrefix starts the line the service prints once it listens;
// the address follows.
const listeningPrefix = "agentmem-server listening on http://"

// runServer runs the service until ctx ends, then shuts it down
// gracefully.
func runServer(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := parseConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	var auth server.Authenticator
	if c.trustedHeaders {
		auth = server.TrustedHeaders{}
		log.Warn("identity is taken from the identity headers: expose this server to the sidecar that sets them only")
	} else {
		secret, err := loadSecret(c, true)
		if err != nil {
			return err
		}
		if auth, err = server.NewBearerTokens(server.BearerOptions{Secret: secret}); err != nil {
			return err
		}
	}
	d, where, err := openDriver(c)
	if err != nil {
		return err
	}
	st := backend.NewStore(d, backend.StoreOptions{Posture: c.posture, Logger: log})
	defer st.Close()
	tel, metrics, stopTelemetry, err := newTelemetry(ctx, c)
	if err != nil {
		return err
	}
	// For a start that fails; the graceful shutdown below stops the
	// telemetry within its grace, and this then does nothing.
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = stopTelemetry(sctx)
	}()
	opt := c.tiers
	opt.Logger = log
	opt.Summarizer = telemetry.WrapSummarizer(extract.Rules{}, tel)
	opt.Extractor = telemetry.WrapExtractor(extract.Rules{}, tel)
	opt.OnFold = tel.OnFold
	mem, err := tiered.New(st, opt)
	if errors.Is(err, memory.ErrInvalidArgument) {
		return usageError{err.Error()}
	}
	if err != nil {
		return err
	}
	defer func() {
		_ = mem.Close()
		s := mem.Stats()
		log.Info("stopped", "folds", s.Folds, "folded_turns", s.FoldedTurns, "facts", s.Facts, "given_up", s.GivenUp)
	}()
	srv, err := server.New(mem, server.Options{Authenticator: auth, Logger: log,
		Wrap: func(m tiered.Interface) tiered.Interface { return telemetry.Wrap(m, tel) }})
	if err != nil {
		return err
	}
	handler := routes(srv, metrics, tel)
	l, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	fmt.Fprintf(stdout, "%s%s (%s)\n", listeningPrefix, l.Addr(), where)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(l) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing the requests and folds in flight")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	// The service first: it refuses new requests (503) and waits for
	// those in flight, then drains the memory's folds; then the HTTP
	// server closes its connections; then the spans of all that are
	// exported. A collector that does not take them holds the exit up to
	// the end of the grace and is logged, not a failure of the service.
	err = srv.Shutdown(sctx)
	err = errors.Join(err, hs.Shutdown(sctx))
	if e := <-served; !errors.Is(e, http.ErrServerClosed) {
		err = errors.Join(err, e)
	}
	if e := stopTelemetry(sctx); e != nil {
		log.Warn("exporting the last spans failed", "error", e)
	}
	return err
}

// openDriver opens the storage c names and says what it is.
func openDriver(c config) (driver.Driver, string, error) {
	if c.postgres != "" {
		d, err := postgres.Open(c.postgres, postgres.Options{})
		return d, "PostgreSQL", err
	}
	d, err := sqlite.Open(c.db, sqlite.Options{})
	return d, "SQLite " + c.db, err
}

// routes serves the service's paths through srv and, when metrics is not
// nil, GET /metrics through it, each path a pattern of its own so that
// the HTTP metrics are per route.
func routes(srv *server.Server, metrics http.Handler, tel *telemetry.Telemetry) http.Handler {
	mux := http.NewServeMux()
	for _, p := range []string{contract.PathRecall, contract.PathList, contract.PathWrite, contract.PathForget, contract.PathHealth, contract.PathReady, "/"} {
		mux.Handle(p, srv)
	}
	if metrics != nil {
		mux.Handle("GET /metrics", metrics)
	}
	return telemetry.Handler(mux, tel)
}

// serviceName is the service.name of the resource of the spans the
// service exports.
const serviceName = "agentmem-server"

// newTelemetry returns the service's telemetry, the handler of GET
// /metrics (nil without -metrics) and the function that stops the
// telemetry, exporting the spans not sent yet, once; later calls do
// nothing. With -metrics the metrics are recorded in a meter provider
// served at GET /metrics; with -otlp-endpoint the spans go to that
// collector, and a request's traceparent header (W3C Trace Context)
// makes its spans part of the caller's trace. With neither there is no
// provider (no-op).
func newTelemetry(ctx context.Context, c config) (*telemetry.Telemetry, http.Handler, func(context.Context) error, error) {
	var opt telemetry.Options
	var h http.Handler
	var stops []func(context.Context) error
	if c.metrics {
		mp, ph := telemetry.NewPrometheus()
		opt.MeterProvider, h = mp, ph
		stops = append(stops, mp.Shutdown)
	}
	if c.otlpEndpoint != "" {
		tp, err := otlp.NewTraces(ctx, c.otlpEndpoint, serviceName)
		if err != nil {
			return nil, nil, nil, errors.Join(err, stopAll(ctx, stops))
		}
		opt.TracerProvider, opt.Propagator = tp, propagation.TraceContext{}
		stops = append(stops, tp.Shutdown)
	}
	var once sync.Once
	stop := func(ctx context.Context) (err error) {
		once.Do(func() { err = stopAll(ctx, stops) })
		return err
	}
	t, err := telemetry.New(opt)
	if err != nil {
		return nil, nil, nil, errors.Join(err, stop(ctx))
	}
	return t, h, stop, nil
}

// stopAll calls every stop function with ctx and joins their errors.
func stopAll(ctx context.Context, stops []func(context.Context) error) error {
	var err error
	for _, s := range stops {
		err = errors.Join(err, s(ctx))
	}
	return err
}
