package qdrantserver

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
)

// Version is the Qdrant version the server reports in its health check.
const Version = "1.17.1"

// Server is an in-process Qdrant: its gRPC Qdrant, Collections and Points
// services over collections held in memory. It is safe for concurrent use.
type Server struct {
	grpc *grpc.Server
	db   *store

	// busy accounts the time the server spends in its handlers.
	mu       sync.Mutex
	inFlight int
	since    time.Time     // when inFlight last went from 0 to 1
	busy     time.Duration // the time with inFlight > 0, before since
}

// New returns a Server with no collections, not yet serving.
func New() *Server {
	db := &store{collections: map[string]*collection{}}
	s := &Server{db: db}
	s.grpc = grpc.NewServer(grpc.StatsHandler(busyHandler{s}))
	qdrant.RegisterQdrantServer(s.grpc, &qdrantService{})
	qdrant.RegisterCollectionsServer(s.grpc, &collectionsService{db: db})
	qdrant.RegisterPointsServer(s.grpc, &pointsService{db: db})
	return s
}

// busyHandler accounts the time from the start of each call the server
// receives to the end of its response toward Busy.
type busyHandler struct{ s *Server }

func (busyHandler) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (busyHandler) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}

func (busyHandler) HandleConn(context.Context, stats.ConnStats) {}

func (h busyHandler) HandleRPC(_ context.Context, st stats.RPCStats) {
	s := h.s
	switch st.(type) {
	case *stats.Begin:
		s.mu.Lock()
		if s.inFlight == 0 {
			s.since = time.Now()
		}
		s.inFlight++
		s.mu.Unlock()
	case *stats.End:
		s.mu.Lock()
		s.inFlight--
		if s.inFlight == 0 {
			s.busy += time.Since(s.since)
		}
		s.mu.Unlock()
	}
}

// Busy returns the wall-clock time during which the server was answering
// at least one call, from New to now: from the start of a call it
// received (gRPC's stats.Begin) to the end of its response (stats.End),
// decoding the request, the handler and encoding and sending the
// response, with calls answered at once counted once. Benchmarks subtract it
// from their time to measure a client's own.
func (s *Server) Busy() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inFlight > 0 {
		return s.busy + time.Since(s.since)
	}
	return s.busy
}

// Serve serves gRPC on l until Stop.
func (s *Server) Serve(l net.Listener) error {
	return s.grpc.Serve(l)
}

// Stop stops serving, closing the listeners and every open connection.
func (s *Server) Stop() {
	s.grpc.Stop()
}

// Start starts a Server on 127.0.0.1:0 for a test, stopped at tb.Cleanup, and returns its host and port.
func Start(tb testing.TB) (host string, port int) {
	tb.Helper()
	_, host, port = StartServer(tb)
	return host, port
}

// StartServer is Start, returning the Server too.
func StartServer(tb testing.TB) (s *Server, host string, port int) {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("qdrantserver: listen: %v", err)
	}
	s = New()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = s.Serve(l)
	}()
	tb.Cleanup(func() {
		s.Stop()
		wg.Wait()
	})
	h, p, err := net.SplitHostPort(l.Addr().String())
	if err != nil {
		tb.Fatalf("qdrantserver: address: %v", err)
	}
	port, err = strconv.Atoi(p)
	if err != nil {
		tb.Fatalf("qdrantserver: port: %v", err)
	}
	return s, h, port
}

// qdrantService answers the health check.
type qdrantService struct {
	qdrant.UnimplementedQdrantServer
}

// HealthCheck reports the server's title and version, as Qdrant does.
func (*qdrantService) HealthCheck(context.Context, *qdrant.HealthCheckRequest) (*qdrant.HealthCheckReply, error) {
	return &qdrant.HealthCheckReply{Title: "qdrant - vector search engine", Version: Version}, nil
}
