package client_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/client"
	"github.com/agentmem/memory/contract"
	"github.com/agentmem/memory/server"
	"github.com/agentmem/memory/tiers/tiered"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

// TestErrorTable checks every status of the error table the service
// answers, end to end: the client's error matches the sentinel and has
// the class.
func TestErrorTable(t *testing.T) {
	ctx := context.Background()
	st := newFaulty()
	_, hs := serve(t, newMemory(t, st, memory.Posture{}, tiered.Options{}), server.Options{MaxBodyBytes: 4 << 10, HandlerTimeout: 100 * time.Millisecond})
	c := newClient(t, hs.URL, client.Options{})
	tokens, err := server.NewBearerTokens(server.BearerOptions{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	_, bearerHS := serve(t, newMemory(t, newFaulty(), memory.Posture{}, tiered.Options{}), server.Options{Authenticator: tokens})
	tok, _ := server.SignToken(secret, server.Claims{Tenant: "acme", Subject: "alice"})
	withToken := newClient(t, bearerHS.URL, client.Options{Token: tok})
	noSession := alice
	noSession.Session = ""
	list := func(id memory.Identity, level memory.Level) error {
		_, err := c.List(ctx, id, tiered.ListOptions{Level: level})
		return err
	}
	faulted := func(fault error) error {
		st.fail(fault)
		defer st.fail(nil)
		return list(alice, memory.LevelSession)
	}
	for _, k := range []struct {
		name     string
		err      error
		class    contract.Class
		sentinel error
	}{
		{"invalid argument", func() error { _, err := c.Remember(ctx, alice, "\x00"); return err }(), "invalid_argument", memory.ErrInvalidArgument},
		{"incomplete scope", list(noSession, memory.LevelSession), "incomplete_scope", memory.ErrIncompleteScope},
		{"unauthenticated", func() error { _, err := newClient(t, bearerHS.URL, client.Options{}).Window(ctx, alice, 0); return err }(),
			"unauthenticated", contract.ErrUnauthenticated},
		{"a header contradicting the token", func() error { _, err := withToken.Window(ctx, alice, 0); return err }(), "permission_denied", memory.ErrPermissionDenied},
		{"store scope as an agent", list(alice, memory.LevelStore), "permission_denied", memory.ErrPermissionDenied},
		{"not found", faulted(memory.Errorf(memory.ErrNotFound, "x")), "not_found", memory.ErrNotFound},
		{"conflict", faulted(memory.Errorf(memory.ErrConflict, "x")), "conflict", memory.ErrConflict},
		{"too large", func() error {
			_, err := c.Append(ctx, alice, tiered.Turn{Role: memory.RoleUser, Content: strings.Repeat("x", 8<<10)})
			return err
		}(), "too_large", memory.ErrTooLarge},
		{"unimplemented", faulted(memory.Errorf(memory.ErrUnimplemented, "x")), "unimplemented", memory.ErrUnimplemented},
		{"unavailable", faulted(memory.Errorf(memory.ErrUnavailable, "x")), "unavailable", memory.ErrUnavailable},
		{"closed", faulted(memory.Errorf(memory.ErrClosed, "x")), "closed", memory.ErrClosed},
		{"internal", faulted(errors.New("x")), "internal", memory.ErrUnavailable},
		{"deadline", func() error {
			gate := make(chan struct{})
			st.gate.Store(&gate)
			defer func() { st.gate.Store(nil); close(gate) }()
			return list(alice, memory.LevelSession)
		}(), "deadline_exceeded", context.DeadlineExceeded},
	} {
		var ce *contract.Error
		if !errors.Is(k.err, k.sentinel) || !errors.As(k.err, &ce) || ce.Class != k.class {
			t.Errorf("%s: %v (%T), want class %s matching %v", k.name, k.err, k.err, k.class, k.sentinel)
		}
		for _, other := range []error{memory.ErrNotFound, memory.ErrInvalidArgument, memory.ErrIncompleteScope, memory.ErrPermissionDenied,
			memory.ErrConflict, memory.ErrTooLarge, memory.ErrUnimplemented, memory.ErrClosed, memory.ErrUnavailable, contract.ErrUnauthenticated} {
			if other != k.sentinel && errors.Is(k.err, other) {
				t.Errorf("%s: %v matches %v too", k.name, k.err, other)
			}
		}
	}
}

// flaky fronts h: it answers the first fail requests itself, with a bare
// 503 or by dropping the connection, and counts the requests and the
// idempotency keys it saw.
type flaky struct {
	h     http.Handler
	fail  atomic.Int64
	drop  atomic.Bool // drop the connection instead of a 503
	after atomic.Bool // answer with h first (its response is lost)
	seen  atomic.Int64
	mu    sync.Mutex
	keys  []string
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.seen.Add(1)
	f.mu.Lock()
	f.keys = append(f.keys, r.Header.Get(contract.HeaderIdempotencyKey))
	f.mu.Unlock()
	if f.fail.Add(-1) < 0 {
		f.h.ServeHTTP(w, r)
		return
	}
	if f.after.Load() {
		f.h.ServeHTTP(httptest.NewRecorder(), r)
	}
	if !f.drop.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

// TestRetries checks idempotent calls are retried after 503s and dropped
// connections, up to MaxAttempts, and a write whose response was lost is
// retried under its key and stored once.
func TestRetries(t *testing.T) {
	ctx := context.Background()
	s, err := server.New(newMemory(t, newFaulty(), memory.Posture{}, tiered.Options{}), server.Options{Authenticator: server.TrustedHeaders{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(ctx)
	f := &flaky{h: s}
	hs := httptest.NewServer(f)
	defer hs.Close()
	c := newClient(t, hs.URL, client.Options{MaxAttempts: 3})
	for _, drop := range []bool{false, true} {
		f.drop.Store(drop)
		f.fail.Store(2)
		f.seen.Store(0)
		if _, err := c.Window(ctx, alice, 0); err != nil || f.seen.Load() != 3 {
			t.Errorf("drop %v: a window after two failures: %v, %d requests", drop, err, f.seen.Load())
		}
		f.fail.Store(3)
		f.seen.Store(0)
		if _, err := c.Window(ctx, alice, 0); !errors.Is(err, memory.ErrUnavailable) || f.seen.Load() != 3 {
			t.Errorf("drop %v: a window after three failures: %v, %d requests", drop, err, f.seen.Load())
		}
	}
	// The first write is done but its response lost.
	f.drop.Store(true)
	f.after.Store(true)
	f.fail.Store(1)
	f.mu.Lock()
	f.keys = nil
	f.mu.Unlock()
	a, err := c.Append(ctx, alice, tiered.Turn{Role: memory.RoleUser, Content: "exactly once"})
	if err != nil || a.Turns != 1 {
		t.Fatalf("a write whose first response was lost: %+v, %v", a, err)
	}
	f.mu.Lock()
	if len(f.keys) != 2 || f.keys[0] == "" || f.keys[0] != f.keys[1] {
		t.Errorf("the write's attempts carried keys %q", f.keys)
	}
	f.mu.Unlock()
	f.after.Store(false)
	if w, err := c.Window(ctx, alice, 0); err != nil || len(w) != 1 {
		t.Errorf("the retried write stored %d turns: %v", len(w), err)
	}
	// The caller's mistakes are not retried.
	f.seen.Store(0)
	noSession := alice
	noSession.Session = ""
	if _, err := c.Window(ctx, noSession, 0); !errors.Is(err, memory.ErrIncompleteScope) || f.seen.Load() != 1 {
		t.Errorf("a 400: %v after %d requests", err, f.seen.Load())
	}
}

// TestConcurrency writes from many goroutines into many sessions and
// checks by listing that no write was lost, on each driver.
func TestConcurrency(t *testing.T) {
	const sessions, writers, writes = 8, 4, 10
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			ctx := context.Background()
			_, hs := serve(t, newMemory(t, d.open(t), memory.Posture{}, tiered.Options{IdleFlush: -1, Budget: 1 << 14, Trigger: 1 << 14, Target: 1 << 13}), server.Options{})
			c := newClient(t, hs.URL, client.Options{})
			var wg sync.WaitGroup
			errs := make(chan error, sessions*writers)
			for s := range sessions {
				for w := range writers {
					wg.Go(func() {
						id := alice
						id.Session = fmt.Sprintf("s%d", s)
						for i := range writes {
							said := fmt.Sprintf("session %d writer %d says %d", s, w, i)
							if _, err := c.Append(ctx, id, tiered.Turn{Role: memory.RoleUser, Content: said}); err != nil {
								errs <- err
								return
							}
							if _, err := c.Remember(ctx, id, "Remember that "+said); err != nil {
								errs <- err
								return
							}
						}
					})
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			for s := range sessions {
				id := alice
				id.Session = fmt.Sprintf("s%d", s)
				w, err := c.Window(ctx, id, 0)
				if err != nil || len(w) != writers*writes {
					t.Errorf("session %d: %d turns, want %d: %v", s, len(w), writers*writes, err)
				}
			}
			l, err := c.List(ctx, alice, tiered.ListOptions{Level: memory.LevelUser, NoWindow: true, NoDigest: true})
			if err != nil || len(l.Facts) != sessions*writers*writes {
				t.Errorf("%d facts at the user level, want %d: %v", len(l.Facts), sessions*writers*writes, err)
			}
		})
	}
}

// TestRecallSoft checks a recall the service cannot answer is an empty,
// degraded recollection without an error — a closed listener, a server
// too slow, a server shut down — while writes fail and the caller's
// mistakes and context are errors.
func TestRecallSoft(t *testing.T) {
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()
	degraded := func(name string, c *client.Client, within time.Duration) {
		t.Helper()
		start := time.Now()
		r, err := c.RecallWith(ctx, alice, "Where does Alice live?", tiered.RecallOptions{})
		if err != nil || !r.Degraded || r.Text != "" || len(r.Window)+len(r.Facts) != 0 || r.Digest != nil ||
			!errors.Is(r.Errors.Facts, memory.ErrUnavailable) || !errors.Is(r.Errors.Window, memory.ErrUnavailable) {
			t.Errorf("%s: RecallWith %+v, %v", name, r, err)
		}
		if took := time.Since(start); took > within {
			t.Errorf("%s: the recall took %v", name, took)
		}
		rc, err := c.Recall(ctx, alice, "x")
		if err != nil || !errors.Is(rc.Degraded, memory.ErrUnavailable) || rc.Text != "" || strings.Count(rc.Degraded.Error(), "could not answer") != 1 {
			t.Errorf("%s: Recall %+v, %v", name, rc, err)
		}
	}
	c := newClient(t, down, client.Options{})
	degraded("closed listener", c, time.Second)
	if _, err := c.Append(ctx, alice, tiered.Turn{Role: memory.RoleUser, Content: "hi"}); !errors.Is(err, memory.ErrUnavailable) {
		t.Errorf("a write to a closed listener: %v", err)
	}
	noSession := alice
	noSession.Session = ""
	if _, err := c.RecallWith(ctx, memory.Identity{User: "bad\x00"}, "x", tiered.RecallOptions{}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("a recall as a malformed identity: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.RecallWith(cancelled, alice, "x", tiered.RecallOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("a recall with its context ended: %v", err)
	}

	st := newFaulty()
	s, hs := serve(t, newMemory(t, st, memory.Posture{}, tiered.Options{}), server.Options{})
	c = newClient(t, hs.URL, client.Options{RecallTimeout: 100 * time.Millisecond})
	if _, err := c.RecallWith(ctx, noSession, "x", tiered.RecallOptions{}); !errors.Is(err, memory.ErrIncompleteScope) {
		t.Errorf("a recall without a session: %v", err)
	}
	gate := make(chan struct{})
	st.gate.Store(&gate)
	degraded("a server too slow", c, time.Second)
	st.gate.Store(nil)
	close(gate)
	st.fail(memory.Errorf(memory.ErrUnavailable, "disk gone"))
	if r, err := c.RecallWith(ctx, alice, "x", tiered.RecallOptions{}); err != nil || !r.Degraded || r.Errors.Window == nil {
		t.Errorf("a recall with the store failing: %+v, %v", r, err)
	}
	st.fail(nil)
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	degraded("a server shut down", c, time.Second)
}

// TestNew checks what New refuses.
func TestNew(t *testing.T) {
	for _, u := range []string{"", "localhost:8080", "ftp://host", "http://", "http://host/?q=1", "://x"} {
		if _, err := client.New(u, client.Options{}); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("New(%q): %v", u, err)
		}
	}
	if _, err := client.New("http://host", client.Options{MaxAttempts: -1}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("negative attempts: %v", err)
	}
	if _, err := client.New("http://host", client.Options{Token: "a\r\nb"}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("a token with a line break: %v", err)
	}
}
