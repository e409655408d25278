package qdrantserver

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
)

// Version is the Qdrant version the server reports in its health check.
const Version = "1.17.1"

// Server is an in-process Qdrant: its gRPC Qdrant, Collections and Points
// services over collections held in memory. It is safe for concurrent use.
type Server struct {
	grpc *grpc.Server
	db   *store
}

// New returns a Server with no collections, not yet serving.
func New() *Server {
	db := &store{collections: map[string]*collection{}}
	g := grpc.NewServer()
	qdrant.RegisterQdrantServer(g, &qdrantService{})
	qdrant.RegisterCollectionsServer(g, &collectionsService{db: db})
	qdrant.RegisterPointsServer(g, &pointsService{db: db})
	return &Server{grpc: g, db: db}
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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("qdrantserver: listen: %v", err)
	}
	s := New()
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
	return h, port
}

// qdrantService answers the health check.
type qdrantService struct {
	qdrant.UnimplementedQdrantServer
}

// HealthCheck reports the server's title and version, as Qdrant does.
func (*qdrantService) HealthCheck(context.Context, *qdrant.HealthCheckRequest) (*qdrant.HealthCheckReply, error) {
	return &qdrant.HealthCheckReply{Title: "qdrant - vector search engine", Version: Version}, nil
}
