package server_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/contract"
	"github.com/agentmem/memory/server"
)

// forge returns a token of header and claims signed with key (unsigned
// when key is nil).
func forge(t *testing.T, header map[string]any, claims any, key []byte) string {
	t.Helper()
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	signing := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	if key == nil {
		return signing + "."
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signing))
	return signing + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// TestBearerTokens checks what the verifier accepts and refuses, and
// the identity it derives.
func TestBearerTokens(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	mem := newMemory(t, newFaulty(), memory.Posture{AllowStore: true})
	_, hs := serve(t, mem, server.Options{Authenticator: bearer(t, server.BearerOptions{
		Issuer: "https://issuer.example", Audience: "agentmem", Leeway: time.Second, Clock: func() time.Time { return now },
	})})
	good := server.Claims{Issuer: "https://issuer.example", Audience: server.Audience{"other", "agentmem"}, Subject: "alice", Tenant: "acme",
		Agent: "kaos://agent/ns/helper", Expires: float64(now.Add(time.Minute).Unix()), NotBefore: float64(now.Add(-time.Minute).Unix())}
	with := func(f func(*server.Claims)) server.Claims { c := good; f(&c); return c }
	wrongSecret := []byte("another secret of thirty-two bytes!")
	hsHeader := map[string]any{"alg": "HS256", "typ": "JWT"}
	for _, c := range []struct {
		name    string
		auth    string // the Authorization header
		headers map[string]string
		status  int
	}{
		{"good", "Bearer " + token(t, good), session("s1"), 200},
		{"good, scheme in lower case", "bearer " + token(t, good), session("s1"), 200},
		{"good, matching identity headers", "Bearer " + token(t, good), map[string]string{contract.HeaderSession: "s1",
			contract.HeaderTenant: "acme", contract.HeaderUser: "alice", contract.HeaderAgent: "kaos://agent/ns/helper"}, 200},
		{"aud as one string", "Bearer " + forge(t, hsHeader, map[string]any{"iss": good.Issuer, "aud": "agentmem", "sub": "alice", "agent": "a"}, secret), session("s1"), 200},
		{"within leeway of exp", "Bearer " + token(t, with(func(c *server.Claims) { c.Expires = float64(now.Unix()) })), session("s1"), 200},
		{"missing", "", session("s1"), 401},
		{"not bearer", "Basic YWxpY2U6cHc=", session("s1"), 401},
		{"garbage", "Bearer not.a.token", session("s1"), 401},
		{"two dots only", "Bearer ..", session("s1"), 401},
		{"wrong secret", "Bearer " + forge(t, hsHeader, good, wrongSecret), session("s1"), 401},
		{"alg none", "Bearer " + forge(t, map[string]any{"alg": "none"}, good, nil), session("s1"), 401},
		{"alg none, signed anyway", "Bearer " + forge(t, map[string]any{"alg": "none"}, good, secret), session("s1"), 401},
		{"alg HS512", "Bearer " + forge(t, map[string]any{"alg": "HS512"}, good, secret), session("s1"), 401},
		{"alg RS256", "Bearer " + forge(t, map[string]any{"alg": "RS256"}, good, secret), session("s1"), 401},
		{"critical extension", "Bearer " + forge(t, map[string]any{"alg": "HS256", "crit": []string{"exp"}}, good, secret), session("s1"), 401},
		{"expired", "Bearer " + token(t, with(func(c *server.Claims) { c.Expires = float64(now.Add(-2 * time.Second).Unix()) })), session("s1"), 401},
		{"not yet valid", "Bearer " + token(t, with(func(c *server.Claims) { c.NotBefore = float64(now.Add(time.Minute).Unix()) })), session("s1"), 401},
		{"wrong issuer", "Bearer " + token(t, with(func(c *server.Claims) { c.Issuer = "https://evil.example" })), session("s1"), 401},
		{"wrong audience", "Bearer " + token(t, with(func(c *server.Claims) { c.Audience = server.Audience{"other"} })), session("s1"), 401},
		{"claims of the wrong type", "Bearer " + forge(t, hsHeader, map[string]any{"sub": 7}, secret), session("s1"), 401},
		{"tampered claims", "Bearer " + tamper(token(t, good)), session("s1"), 401},
		{"over the size limit", "Bearer " + strings.Repeat("a", server.MaxTokenBytes+1), session("s1"), 401},
		{"contradicting user header", "Bearer " + token(t, good), map[string]string{contract.HeaderSession: "s1", contract.HeaderUser: "bob"}, 403},
		{"contradicting tenant header", "Bearer " + token(t, good), map[string]string{contract.HeaderSession: "s1", contract.HeaderTenant: "globex"}, 403},
		{"agent header beside a token without one", "Bearer " + token(t, with(func(c *server.Claims) { c.Agent = "" })),
			map[string]string{contract.HeaderSession: "s1", contract.HeaderAgent: "kaos://agent/ns/other"}, 403},
		{"malformed session header", "Bearer " + token(t, good), map[string]string{contract.HeaderSession: strings.Repeat("s", memory.MaxIdentityFieldBytes+1)}, 400},
	} {
		h := map[string]string{}
		for k, v := range c.headers {
			h[k] = v
		}
		if c.auth != "" {
			h["Authorization"] = c.auth
		}
		res := do(t, hs.URL, call{path: contract.PathList, headers: h, body: contract.ListRequest{Scope: memory.LevelAgent}})
		if res.status != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, res.status, res.body, c.status)
		}
	}

	// An agent actor cannot use the store scope; an actor-free caller can.
	admin := token(t, with(func(c *server.Claims) { c.Agent = "" }))
	for _, path := range []string{contract.PathList, contract.PathRecall, contract.PathForget} {
		body := `{"scope":"store"}`
		if res := do(t, hs.URL, call{path: path, token: token(t, good), headers: session("s1"), body: body}); res.status != 403 || res.class() != contract.ClassPermissionDenied {
			t.Errorf("%s at the store scope as an agent: %d %s", path, res.status, res.body)
		}
		if res := do(t, hs.URL, call{path: path, token: admin, headers: session("s1"), body: body}); res.status != 200 {
			t.Errorf("%s at the store scope without an agent: %d %s", path, res.status, res.body)
		}
	}
}

// TestBearerIdentity checks the identity a token and its headers make is
// the one a write records.
func TestBearerIdentity(t *testing.T) {
	mem := newMemory(t, newFaulty(), memory.Posture{})
	_, hs := serve(t, mem, server.Options{})
	res := do(t, hs.URL, call{path: contract.PathWrite, token: token(t, aliceClaims), body: contract.WriteRequest{Memories: []string{"Alice likes tea."}},
		headers: map[string]string{contract.HeaderSession: "s1", contract.HeaderInstance: "i1", contract.HeaderSquad: "q1"}})
	w := decodeAs[contract.WriteResponse](t, res, http.StatusOK)
	want := contract.Identity{Tenant: "acme", User: "alice", Agent: "kaos://agent/ns/helper", Instance: "i1", Squad: "q1", Session: "s1"}
	if len(w.Memories) != 1 || w.Memories[0].Identity != want {
		t.Errorf("write attributed to %+v, want %+v", w.Memories, want)
	}
}

// TestTrustedHeaders checks the sidecar mode: every field from the
// headers, none at all 401, a header twice 400.
func TestTrustedHeaders(t *testing.T) {
	mem := newMemory(t, newFaulty(), memory.Posture{})
	_, hs := serve(t, mem, server.Options{Authenticator: server.TrustedHeaders{}})
	h := map[string]string{contract.HeaderTenant: "acme", contract.HeaderUser: "alice", contract.HeaderAgent: "a", contract.HeaderInstance: "i",
		contract.HeaderSquad: "q", contract.HeaderSession: "s1"}
	w := decodeAs[contract.WriteResponse](t, do(t, hs.URL, call{path: contract.PathWrite, headers: h, body: contract.WriteRequest{Memories: []string{"x y z"}}}), 200)
	if got := w.Memories[0].Identity; got != (contract.Identity{Tenant: "acme", User: "alice", Agent: "a", Instance: "i", Squad: "q", Session: "s1"}) {
		t.Errorf("trusted identity: %+v", got)
	}
	if res := do(t, hs.URL, call{path: contract.PathList, body: contract.ListRequest{}}); res.status != 401 || res.header.Get("WWW-Authenticate") != "" {
		t.Errorf("no identity headers: %d %s %v", res.status, res.body, res.header)
	}
	req, _ := http.NewRequest(http.MethodPost, hs.URL+contract.PathList, strings.NewReader(`{}`))
	req.Header.Add(contract.HeaderSession, "s1")
	req.Header.Add(contract.HeaderSession, "s2")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("a session header given twice: %d", resp.StatusCode)
	}
}

// tamper changes the claims of a token, keeping its signature.
func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	b, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c map[string]any
	_ = json.Unmarshal(b, &c)
	c["sub"] = "mallory"
	b, _ = json.Marshal(c)
	parts[1] = base64.RawURLEncoding.EncodeToString(b)
	return strings.Join(parts, ".")
}
