// Package servicetest serves a tiered memory over HTTP for tests of the
// memory service and of what runs on its client: the server of package
// server on an httptest server, both shut down when the test ends.
package servicetest

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentmem/memory/server"
	"github.com/agentmem/memory/tiers/tiered"
)

// Serve starts the service of mem with opt (its Authenticator set) on an
// httptest server, shut down gracefully, then closed, when t ends.
func Serve(t testing.TB, mem *tiered.Memory, opt server.Options) (*server.Server, *httptest.Server) {
	t.Helper()
	s, err := server.New(mem, opt)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		hs.Close()
	})
	return s, hs
}
