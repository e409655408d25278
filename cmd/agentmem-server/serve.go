package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/postgres"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/contract"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/server"
	"github.com/agentmem/memory/telemetry"
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
	tel, metrics, stopMetrics, err := newTelemetry(c)
	if err != nil {
		return err
	}
	defer stopMetrics()
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
	// server closes its connections.
	err = srv.Shutdown(sctx)
	err = errors.Join(err, hs.Shutdown(sctx))
	if e := <-served; !errors.Is(e, http.ErrServerClosed) {
		err = errors.Join(err, e)
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

// newTelemetry returns the service's telemetry and the function that
// stops it: with -metrics, recorded in a meter provider served at GET
// /metrics; otherwise none (no-op).
func newTelemetry(c config) (*telemetry.Telemetry, http.Handler, func(), error) {
	if !c.metrics {
		t, err := telemetry.New(telemetry.Options{})
		return t, nil, func() {}, err
	}
	mp, h := telemetry.NewPrometheus()
	t, err := telemetry.New(telemetry.Options{MeterProvider: mp})
	return t, h, func() { _ = mp.Shutdown(context.Background()) }, err
}
