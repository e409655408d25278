package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/contract"
	"github.com/agentmem/memory/server"
	"github.com/agentmem/memory/tiers/tiered"
)

// The service over a tiered memory, verifying HS256 bearer tokens; a
// caller writes a turn and a saved memory, then lists its facts.
func Example() {
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer st.Close()
	mem, err := tiered.New(st, tiered.Options{})
	if err != nil {
		panic(err)
	}
	secret := []byte("a shared secret of at least 32 bytes")
	tokens, err := server.NewBearerTokens(server.BearerOptions{Secret: secret})
	if err != nil {
		panic(err)
	}
	srv, err := server.New(mem, server.Options{Authenticator: tokens})
	if err != nil {
		panic(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Shutdown(context.Background()) // refuses new requests, waits, closes mem

	token, err := server.SignToken(secret, server.Claims{Tenant: "acme", Subject: "alice", Agent: "kaos://agent/ns/concierge"})
	if err != nil {
		panic(err)
	}
	post := func(path, body string) []byte {
		req, _ := http.NewRequest(http.MethodPost, hs.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set(contract.HeaderSession, "trip-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		fmt.Println(path, resp.StatusCode)
		return b
	}
	post(contract.PathWrite, `{"turns":[{"role":"user","content":"Book me a hotel in Porto."}],"memories":["Alice prefers quiet hotels."]}`)
	var listed contract.ListResponse
	if err := json.Unmarshal(post(contract.PathList, `{"scope":"agent","include":["long"]}`), &listed); err != nil {
		panic(err)
	}
	for _, f := range listed.Facts {
		fmt.Println("-", f.Content, "by", f.Identity.User)
	}
	fmt.Println(string(post(contract.PathList, `{"scope":"store"}`))) // an agent actor: refused
	// Output:
	// /v1/write 200
	// /v1/list 200
	// - Alice prefers quiet hotels. by alice
	// /v1/list 403
	// {"error":{"class":"permission_denied","message":"memory: permission denied: server: the store scope is administrative; a request with an agent actor cannot use it"}}
}
