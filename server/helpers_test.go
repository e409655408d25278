package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/contract"
	"github.com/agentmem/memory/internal/servicetest"
	"github.com/agentmem/memory/server"
	"github.com/agentmem/memory/tiers/tiered"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

// faulty is the in-memory driver with failures and a gate injected: its
// reads and writes fail with the error set, and its reads wait while a
// gate is set, so tests reach every error class and hold a request in
// flight.
type faulty struct {
	*inmem.Driver
	failList, failPut, failSearch atomic.Pointer[error]
	gate                          atomic.Pointer[chan struct{}]
	entered                       chan struct{} // told of each gated read
}

func newFaulty() *faulty {
	return &faulty{Driver: inmem.New(inmem.Options{}), entered: make(chan struct{}, 100)}
}

func fail(p *atomic.Pointer[error], err error) {
	if err == nil {
		p.Store(nil)
		return
	}
	p.Store(&err)
}

func injected(p *atomic.Pointer[error]) error {
	if e := p.Load(); e != nil {
		return *e
	}
	return nil
}

func (f *faulty) List(ctx context.Context, q driver.Query) ([]memory.Record, error) {
	if g := f.gate.Load(); g != nil {
		f.entered <- struct{}{}
		<-*g
	}
	if err := injected(&f.failList); err != nil {
		return nil, err
	}
	return f.Driver.List(ctx, q)
}

func (f *faulty) Put(ctx context.Context, recs []memory.Record) error {
	if err := injected(&f.failPut); err != nil {
		return err
	}
	return f.Driver.Put(ctx, recs)
}

func (f *faulty) RankText(ctx context.Context, q driver.Query, text string, k int) ([]driver.RefMatch, error) {
	if err := injected(&f.failSearch); err != nil {
		return nil, err
	}
	return f.Driver.RankText(ctx, q, text, k)
}

func (f *faulty) SearchText(ctx context.Context, q driver.Query, text string, k int) ([]driver.Match, error) {
	if err := injected(&f.failSearch); err != nil {
		return nil, err
	}
	return f.Driver.SearchText(ctx, q, text, k)
}

// newMemory returns a tiered Memory over d, closed when t ends.
func newMemory(t testing.TB, d driver.Driver, posture memory.Posture) *tiered.Memory {
	t.Helper()
	st := backend.NewStore(d, backend.StoreOptions{Posture: posture})
	m, err := tiered.New(st, tiered.Options{IdleFlush: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(); _ = st.Close() })
	return m
}

// drivers open fresh storage: in memory and a SQLite file.
var drivers = []struct {
	name string
	open func(t testing.TB) driver.Driver
}{
	{"inmem", func(testing.TB) driver.Driver { return inmem.New(inmem.Options{}) }},
	{"sqlite", func(t testing.TB) driver.Driver {
		d, err := sqlite.Open(filepath.Join(t.TempDir(), "memory.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}},
}

// bearer returns a verifier of tokens signed with secret.
func bearer(t testing.TB, opt server.BearerOptions) *server.BearerTokens {
	t.Helper()
	if opt.Secret == nil {
		opt.Secret = secret
	}
	b, err := server.NewBearerTokens(opt)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// serve starts an HTTP server of mem, shut down when t ends.
func serve(t testing.TB, mem *tiered.Memory, opt server.Options) (*server.Server, *httptest.Server) {
	t.Helper()
	if opt.Authenticator == nil {
		opt.Authenticator = bearer(t, server.BearerOptions{})
	}
	return servicetest.Serve(t, mem, opt)
}

// token signs claims with secret.
func token(t testing.TB, c server.Claims) string {
	t.Helper()
	tok, err := server.SignToken(secret, c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// call is one request: its path, body and headers.
type call struct {
	path    string
	body    any // marshalled unless a string or []byte
	token   string
	headers map[string]string
	method  string
}

// result is a response: its status, headers and body.
type result struct {
	status int
	header http.Header
	body   []byte
}

// class returns the error class of an error response, "" otherwise.
func (r result) class() contract.Class {
	var e contract.ErrorBody
	if json.Unmarshal(r.body, &e) != nil {
		return ""
	}
	return e.Error.Class
}

// do sends c to base.
func do(t testing.TB, base string, c call) result {
	t.Helper()
	var body []byte
	switch b := c.body.(type) {
	case string:
		body = []byte(b)
	case []byte:
		body = b
	case nil:
	default:
		var err error
		if body, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	method := c.method
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequest(method, base+c.path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return result{status: resp.StatusCode, header: resp.Header, body: b}
}

// decodeAs reads a success body into a T, failing t on another status.
func decodeAs[T any](t testing.TB, r result, status int) T {
	t.Helper()
	var v T
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("%s: %v", r.body, err)
	}
	return v
}

// alice's token and headers: a user talking to an agent in a session.
var aliceClaims = server.Claims{Tenant: "acme", Subject: "alice", Agent: "kaos://agent/ns/helper"}

func session(s string) map[string]string { return map[string]string{contract.HeaderSession: s} }
