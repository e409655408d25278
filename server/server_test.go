package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/contract"
	"github.com/agentmem/memory/server"
	"github.com/agentmem/memory/tiers/tiered"
)

// TestEndToEnd writes turns and memories, lists them, recalls them and
// forgets them over HTTP, on the in-memory driver and on SQLite.
func TestEndToEnd(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			mem := newMemory(t, d.open(t), memory.Posture{})
			_, hs := serve(t, mem, server.Options{})
			tok := token(t, aliceClaims)
			w := decodeAs[contract.WriteResponse](t, do(t, hs.URL, call{path: contract.PathWrite, token: tok, headers: session("s1"),
				body: contract.WriteRequest{
					Turns: []contract.Turn{
						{Role: memory.RoleUser, Content: "I moved to Lisbon last spring.", Speaker: "Alice"},
						{Role: memory.RoleAssistant, Content: "Lisbon is lovely."},
					},
					Memories: []string{"Alice lives in Lisbon."},
				}}), http.StatusOK)
			if w.Turns != 2 || w.Folding || len(w.Memories) != 1 || w.Memories[0].Kind != memory.KindFact {
				t.Fatalf("write: %+v", w)
			}
			m := w.Memories[0]
			want := contract.Identity{Tenant: "acme", User: "alice", Agent: "kaos://agent/ns/helper", Session: "s1"}
			if m.Identity != want || m.Content != "Alice lives in Lisbon." || m.Version != 1 || m.Tokens == 0 || m.Created.IsZero() {
				t.Errorf("saved memory on the wire: %+v", m)
			}

			l := decodeAs[contract.ListResponse](t, do(t, hs.URL, call{path: contract.PathList, token: tok, headers: session("s1"),
				body: contract.ListRequest{Scope: memory.LevelUser}}), http.StatusOK)
			if len(l.Turns) != 2 || l.Turns[0].Label != "user" || l.Turns[0].Metadata[memory.SpeakerKey] != "Alice" || l.Digest != nil || len(l.Facts) != 1 {
				t.Errorf("list: %+v", l)
			}

			r := decodeAs[contract.RecallResponse](t, do(t, hs.URL, call{path: contract.PathRecall, token: tok, headers: session("s1"),
				body: contract.RecallRequest{Text: "Where does Alice live?", Scope: memory.LevelAgent}}), http.StatusOK)
			if len(r.Turns) != 2 || len(r.Facts) != 1 || r.Facts[0].Score <= 0 || r.Degraded ||
				!strings.Contains(r.Text, "- Alice lives in Lisbon.") || !strings.Contains(r.Text, "user: I moved to Lisbon") || r.Tokens == 0 {
				t.Errorf("recall: %+v", r)
			}
			// Only the long-term tier: the text is rendered again.
			r = decodeAs[contract.RecallResponse](t, do(t, hs.URL, call{path: contract.PathRecall, token: tok, headers: session("s1"),
				body: contract.RecallRequest{Text: "Where does Alice live?", Include: []contract.Tier{contract.TierLong}}}), http.StatusOK)
			if len(r.Turns) != 0 || len(r.Facts) != 1 || strings.Contains(r.Text, "Recent turns") || r.Tokens == 0 {
				t.Errorf("recall of the long-term tier: %+v", r)
			}
			full := r.Tokens
			r = decodeAs[contract.RecallResponse](t, do(t, hs.URL, call{path: contract.PathRecall, token: tok, headers: session("s1"),
				body: contract.RecallRequest{Text: "Where does Alice live?", Include: []contract.Tier{contract.TierShort}}}), http.StatusOK)
			if len(r.Turns) != 2 || len(r.Facts) != 0 || strings.Contains(r.Text, "Known facts") || r.Tokens == full {
				t.Errorf("recall of the short-term tier: %+v", r)
			}

			f := decodeAs[contract.ForgetResponse](t, do(t, hs.URL, call{path: contract.PathForget, token: tok, headers: session("s1"),
				body: contract.ForgetRequest{Scope: memory.LevelUser}}), http.StatusOK)
			if f.Turns != 2 || f.Facts != 1 {
				t.Errorf("forget: %+v", f)
			}
			l = decodeAs[contract.ListResponse](t, do(t, hs.URL, call{path: contract.PathList, token: tok, headers: session("s1"),
				body: contract.ListRequest{Scope: memory.LevelUser}}), http.StatusOK)
			if len(l.Turns)+len(l.Facts) != 0 {
				t.Errorf("list after forget: %+v", l)
			}
		})
	}
}

// TestFolding checks a write that queues a fold is 202.
func TestFolding(t *testing.T) {
	st := newFaulty()
	mem := newMemory(t, st, memory.Posture{})
	_, hs := serve(t, mem, server.Options{})
	long := strings.Repeat("The ferry leaves Cais do Sodré every twenty minutes. ", 600) // over the 4096-token trigger
	res := do(t, hs.URL, call{path: contract.PathWrite, token: token(t, aliceClaims), headers: session("s1"),
		body: contract.WriteRequest{Turns: []contract.Turn{{Role: memory.RoleUser, Content: long}, {Role: memory.RoleUser, Content: "ok"}}}})
	if w := decodeAs[contract.WriteResponse](t, res, http.StatusAccepted); !w.Folding || w.Turns != 2 {
		t.Errorf("write over the trigger: %+v", w)
	}
}

// TestErrorStatuses checks each class the server answers, with its
// status and error body.
func TestErrorStatuses(t *testing.T) {
	st := newFaulty()
	mem := newMemory(t, st, memory.Posture{})
	_, hs := serve(t, mem, server.Options{MaxBodyBytes: 1 << 10})
	tok := token(t, aliceClaims)
	list := call{path: contract.PathList, token: tok, headers: session("s1"), body: contract.ListRequest{}}
	for _, c := range []struct {
		name   string
		c      call
		fault  error
		status int
		class  contract.Class
	}{
		{"malformed JSON", call{path: contract.PathList, token: tok, headers: session("s1"), body: `{"scope":`}, nil, 400, "invalid_argument"},
		{"no session", call{path: contract.PathList, token: tok, body: contract.ListRequest{}}, nil, 400, "incomplete_scope"},
		{"no token", call{path: contract.PathList, headers: session("s1"), body: contract.ListRequest{}}, nil, 401, "unauthenticated"},
		{"store scope as an agent", call{path: contract.PathList, token: tok, headers: session("s1"), body: contract.ListRequest{Scope: "store"}}, nil, 403, "permission_denied"},
		{"unknown path", call{path: "/v1/everything", token: tok, body: "{}"}, nil, 404, "not_found"},
		{"GET", call{path: contract.PathRecall, token: tok, method: http.MethodGet}, nil, 405, "method_not_allowed"},
		{"body too large", call{path: contract.PathWrite, token: tok, headers: session("s1"), body: strings.Repeat(" ", 2<<10)}, nil, 413, "too_large"},
		{"not found", list, memory.Errorf(memory.ErrNotFound, "gone"), 404, "not_found"},
		{"conflict", list, memory.Errorf(memory.ErrConflict, "raced"), 409, "conflict"},
		{"too large", list, memory.Errorf(memory.ErrTooLarge, "big"), 413, "too_large"},
		{"unimplemented", list, memory.Errorf(memory.ErrUnimplemented, "no"), 501, "unimplemented"},
		{"unavailable", list, memory.Errorf(memory.ErrUnavailable, "down"), 503, "unavailable"},
		{"closed", list, memory.Errorf(memory.ErrClosed, "closed"), 503, "closed"},
		{"deadline", list, fmt.Errorf("slow: %w", context.DeadlineExceeded), 504, "deadline_exceeded"},
		{"unclassified", list, errors.New("secret detail"), 500, "internal"},
	} {
		fail(&st.failList, c.fault)
		res := do(t, hs.URL, c.c)
		if res.status != c.status || res.class() != c.class {
			t.Errorf("%s: %d %s, want %d %s", c.name, res.status, res.body, c.status, c.class)
		}
		if ct := res.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q", c.name, ct)
		}
		if c.status == 401 && res.header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: 401 without a challenge", c.name)
		}
		if c.class == "internal" && strings.Contains(string(res.body), "secret detail") {
			t.Errorf("an internal error's detail was sent: %s", res.body)
		}
	}
	fail(&st.failList, nil)
}

// TestRecallSoft checks a tier that fails degrades a recall, which is
// still 200, with the tier's error.
func TestRecallSoft(t *testing.T) {
	st := newFaulty()
	mem := newMemory(t, st, memory.Posture{})
	_, hs := serve(t, mem, server.Options{})
	tok := token(t, aliceClaims)
	do(t, hs.URL, call{path: contract.PathWrite, token: tok, headers: session("s1"),
		body: contract.WriteRequest{Turns: []contract.Turn{{Role: memory.RoleUser, Content: "hello"}}, Memories: []string{"Alice likes tea."}}})
	fail(&st.failSearch, memory.Errorf(memory.ErrUnavailable, "index down"))
	r := decodeAs[contract.RecallResponse](t, do(t, hs.URL, call{path: contract.PathRecall, token: tok, headers: session("s1"),
		body: contract.RecallRequest{Text: "tea"}}), http.StatusOK)
	if !r.Degraded || r.Errors.Long == nil || r.Errors.Long.Class != contract.ClassUnavailable || r.Errors.Short != nil || len(r.Turns) != 1 {
		t.Errorf("recall with the fact search down: %+v", r)
	}
	// Left out, the failed tier is neither searched nor reported.
	r = decodeAs[contract.RecallResponse](t, do(t, hs.URL, call{path: contract.PathRecall, token: tok, headers: session("s1"),
		body: contract.RecallRequest{Text: "tea", Include: []contract.Tier{"short", "medium"}}}), http.StatusOK)
	if r.Degraded || len(r.Turns) != 1 {
		t.Errorf("recall without the long-term tier: %+v", r)
	}
}

// TestStrictDecoding checks what the decoder refuses.
func TestStrictDecoding(t *testing.T) {
	mem := newMemory(t, newFaulty(), memory.Posture{})
	_, hs := serve(t, mem, server.Options{})
	tok := token(t, aliceClaims)
	for _, body := range []string{
		`{"text":"hi","extra":1}`,
		`{"text":"hi"} {"text":"again"}`,
		`{"text":"hi"} x`,
		"{\"text\":\"\xff\"}",
		`["text"]`,
		`null`,
		``,
		`{"text":1}`,
		`{"scope":"SQUAD"}`,
		`{"include":["deep"]}`,
		`{"k":-1}`,
	} {
		res := do(t, hs.URL, call{path: contract.PathRecall, token: tok, headers: session("s1"), body: body})
		if res.status != 400 || res.class() != contract.ClassInvalidArgument {
			t.Errorf("body %q: %d %s", body, res.status, res.body)
		}
	}
	res := do(t, hs.URL, call{path: contract.PathRecall, token: tok, headers: session("s1"), body: " {\"text\":\"hi\"}\n"})
	if res.status != 200 {
		t.Errorf("a body with white space around it: %d %s", res.status, res.body)
	}
}

// countingBody is a request body that counts the bytes read from it.
type countingBody struct {
	n, read int
}

func (b *countingBody) Read(p []byte) (int, error) {
	if b.read >= b.n {
		return 0, errors.New("EOF")
	}
	k := min(len(p), b.n-b.read)
	for i := range k {
		p[i] = ' '
	}
	b.read += k
	return k, nil
}

func (b *countingBody) Close() error { return nil }

// TestBodyLimit checks a body over the limit is 413 before it is decoded:
// a declared length over it before a byte is read, an undeclared one
// when reading passes it.
func TestBodyLimit(t *testing.T) {
	mem := newMemory(t, newFaulty(), memory.Posture{})
	s, err := server.New(mem, server.Options{Authenticator: bearer(t, server.BearerOptions{}), MaxBodyBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	tok := token(t, aliceClaims)
	for _, declared := range []bool{true, false} {
		body := &countingBody{n: 1 << 20}
		req := httptest.NewRequest(http.MethodPost, contract.PathWrite, body)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.ContentLength = -1
		if declared {
			req.ContentLength = int64(body.n)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != 413 || !strings.Contains(rec.Body.String(), `"too_large"`) {
			t.Errorf("declared %v: %d %s", declared, rec.Code, rec.Body)
		}
		if declared && body.read != 0 || !declared && body.read > 4096 {
			t.Errorf("declared %v: %d bytes read of a body over the limit", declared, body.read)
		}
	}
}

// TestIdempotency checks a write repeated under its key is answered
// with the first response and stored once; another body under the key
// is 409; another identity's key is its own; a failed write is not
// remembered.
func TestIdempotency(t *testing.T) {
	st := newFaulty()
	mem := newMemory(t, st, memory.Posture{})
	_, hs := serve(t, mem, server.Options{})
	tok := token(t, aliceClaims)
	h := map[string]string{contract.HeaderSession: "s1", contract.HeaderIdempotencyKey: "k1"}
	write := contract.WriteRequest{Turns: []contract.Turn{{Role: memory.RoleUser, Content: "once"}}}
	first := do(t, hs.URL, call{path: contract.PathWrite, token: tok, headers: h, body: write})
	again := do(t, hs.URL, call{path: contract.PathWrite, token: tok, headers: h, body: write})
	if first.status != 200 || again.status != 200 || string(first.body) != string(again.body) ||
		again.header.Get(contract.HeaderReplayed) != "true" || first.header.Get(contract.HeaderReplayed) != "" {
		t.Errorf("repeated write: %d %s, then %d %s %v", first.status, first.body, again.status, again.body, again.header)
	}
	other := write
	other.Turns = []contract.Turn{{Role: memory.RoleUser, Content: "another"}}
	if res := do(t, hs.URL, call{path: contract.PathWrite, token: tok, headers: h, body: other}); res.status != 409 {
		t.Errorf("another body under the key: %d %s", res.status, res.body)
	}
	bob := token(t, server.Claims{Tenant: "acme", Subject: "bob"})
	if res := do(t, hs.URL, call{path: contract.PathWrite, token: bob, headers: h, body: write}); res.status != 200 || res.header.Get(contract.HeaderReplayed) != "" {
		t.Errorf("another identity's key: %d %s", res.status, res.body)
	}
	fail(&st.failPut, memory.Errorf(memory.ErrUnavailable, "down"))
	h[contract.HeaderIdempotencyKey] = "k2"
	if res := do(t, hs.URL, call{path: contract.PathWrite, token: tok, headers: h, body: write}); res.status != 503 {
		t.Errorf("failed write: %d %s", res.status, res.body)
	}
	fail(&st.failPut, nil)
	if res := do(t, hs.URL, call{path: contract.PathWrite, token: tok, headers: h, body: write}); res.status != 200 || res.header.Get(contract.HeaderReplayed) != "" {
		t.Errorf("retry of a failed write: %d %s", res.status, res.body)
	}
	l := decodeAs[contract.ListResponse](t, do(t, hs.URL, call{path: contract.PathList, token: tok, headers: session("s1"), body: contract.ListRequest{}}), 200)
	if len(l.Turns) != 2 {
		t.Errorf("%d turns stored by two keys, each repeated", len(l.Turns))
	}
	h[contract.HeaderIdempotencyKey] = "bad key"
	if res := do(t, hs.URL, call{path: contract.PathWrite, token: tok, headers: h, body: write}); res.status != 400 {
		t.Errorf("a key with a space: %d %s", res.status, res.body)
	}
}

// TestIdempotencyExpiry checks keys are kept IdempotencyTTL and at most
// IdempotencyKeys of them.
func TestIdempotencyExpiry(t *testing.T) {
	mem := newMemory(t, newFaulty(), memory.Posture{})
	now := time.Unix(1000, 0)
	_, hs := serve(t, mem, server.Options{IdempotencyTTL: time.Minute, IdempotencyKeys: 2, Clock: func() time.Time { return now }})
	tok := token(t, aliceClaims)
	forget := func(key string) result {
		return do(t, hs.URL, call{path: contract.PathForget, token: tok, body: contract.ForgetRequest{Scope: "user"},
			headers: map[string]string{contract.HeaderIdempotencyKey: key}})
	}
	replayed := func(r result) bool { return r.header.Get(contract.HeaderReplayed) == "true" }
	forget("a")
	if !replayed(forget("a")) {
		t.Error("a key within its time was not replayed")
	}
	now = now.Add(time.Minute)
	if replayed(forget("a")) {
		t.Error("a key past its time was replayed")
	}
	forget("b")
	forget("c")
	if replayed(forget("a")) {
		t.Error("the oldest of three keys, over a bound of two, was replayed")
	}
}

// TestShutdown checks Shutdown lets a request in flight finish, refuses
// new ones and readiness meanwhile, and closes the Memory.
func TestShutdown(t *testing.T) {
	st := newFaulty()
	mem := newMemory(t, st, memory.Posture{})
	s, hs := serve(t, mem, server.Options{})
	tok := token(t, aliceClaims)
	if res := do(t, hs.URL, call{path: contract.PathReady, method: http.MethodGet}); res.status != 200 {
		t.Fatalf("readyz: %d %s", res.status, res.body)
	}
	gate := make(chan struct{})
	open := sync.OnceFunc(func() { close(gate) })
	t.Cleanup(open) // before the server's cleanup, should the test fail
	st.gate.Store(&gate)
	inflight := make(chan result)
	go func() {
		inflight <- do(t, hs.URL, call{path: contract.PathList, token: tok, headers: session("s1"), body: contract.ListRequest{}})
	}()
	<-st.entered
	st.gate.Store(nil)
	shut := make(chan error)
	go func() { shut <- s.Shutdown(context.Background()) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := do(t, hs.URL, call{path: contract.PathList, token: tok, headers: session("s1"), body: contract.ListRequest{}})
		if res.status == 503 && res.class() == contract.ClassClosed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still served during Shutdown: %d %s", res.status, res.body)
		}
		time.Sleep(time.Millisecond)
	}
	if res := do(t, hs.URL, call{path: contract.PathReady, method: http.MethodGet}); res.status != 503 {
		t.Errorf("readyz during Shutdown: %d %s", res.status, res.body)
	}
	if res := do(t, hs.URL, call{path: contract.PathHealth, method: http.MethodGet}); res.status != 200 {
		t.Errorf("healthz during Shutdown: %d %s", res.status, res.body)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a request in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	open()
	if res := <-inflight; res.status != 200 {
		t.Errorf("the request in flight: %d %s", res.status, res.body)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if _, err := mem.Window(context.Background(), memory.Identity{Session: "s"}, 0); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("the Memory after Shutdown: %v", err)
	}
}

// TestShutdownDeadline checks Shutdown gives up at its context's end
// while a request is in flight.
func TestShutdownDeadline(t *testing.T) {
	st := newFaulty()
	mem := newMemory(t, st, memory.Posture{})
	s, hs := serve(t, mem, server.Options{})
	gate := make(chan struct{})
	st.gate.Store(&gate)
	done := make(chan result)
	go func() {
		done <- do(t, hs.URL, call{path: contract.PathList, token: token(t, aliceClaims), headers: session("s1"), body: contract.ListRequest{}})
	}()
	<-st.entered
	st.gate.Store(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown with a request in flight past its deadline: %v", err)
	}
	close(gate)
	<-done
}

// TestHandlerTimeout checks work past HandlerTimeout is 504.
func TestHandlerTimeout(t *testing.T) {
	st := newFaulty()
	mem := newMemory(t, st, memory.Posture{})
	_, hs := serve(t, mem, server.Options{HandlerTimeout: 20 * time.Millisecond})
	gate := make(chan struct{})
	st.gate.Store(&gate)
	go func() {
		<-st.entered
		time.Sleep(100 * time.Millisecond)
		st.gate.Store(nil)
		close(gate)
	}()
	res := do(t, hs.URL, call{path: contract.PathList, token: token(t, aliceClaims), headers: session("s1"), body: contract.ListRequest{}})
	if res.status != 504 || res.class() != contract.ClassDeadlineExceeded {
		t.Errorf("a list past the handler timeout: %d %s", res.status, res.body)
	}
}

// TestReady checks /readyz reads the store.
func TestReady(t *testing.T) {
	st := newFaulty()
	mem := newMemory(t, st, memory.Posture{RequirePrincipal: true, RequireAgentIdentity: true})
	_, hs := serve(t, mem, server.Options{})
	if res := do(t, hs.URL, call{path: contract.PathReady, method: http.MethodGet}); res.status != 200 {
		t.Errorf("readyz under a strict posture: %d %s", res.status, res.body)
	}
	fail(&st.failList, memory.Errorf(memory.ErrUnavailable, "disk gone"))
	if res := do(t, hs.URL, call{path: contract.PathReady, method: http.MethodGet}); res.status != 503 {
		t.Errorf("readyz with the store failing: %d %s", res.status, res.body)
	}
	if res := do(t, hs.URL, call{path: contract.PathHealth, method: http.MethodGet}); res.status != 200 {
		t.Errorf("healthz: %d %s", res.status, res.body)
	}
}

// TestNew checks what New refuses.
func TestNew(t *testing.T) {
	mem := newMemory(t, newFaulty(), memory.Posture{})
	for _, c := range []struct {
		mem *tiered.Memory
		opt server.Options
	}{
		{nil, server.Options{Authenticator: server.TrustedHeaders{}}},
		{mem, server.Options{}},
		{mem, server.Options{Authenticator: server.TrustedHeaders{}, MaxBodyBytes: -1}},
	} {
		if _, err := server.New(c.mem, c.opt); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("New(%v, %+v): %v", c.mem, c.opt, err)
		}
	}
	if _, err := server.NewBearerTokens(server.BearerOptions{Secret: []byte("short")}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("a short secret: %v", err)
	}
	if _, err := server.SignToken([]byte("short"), server.Claims{}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("signing with a short secret: %v", err)
	}
}
