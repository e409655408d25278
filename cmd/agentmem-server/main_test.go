package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// started is a service run by a test.
type started struct {
	base   string // http://host:port
	env    map[string]string
	stop   context.CancelFunc
	done   chan error
	stderr *lockedBuffer
	once   sync.Once
}

// lockedBuffer is a bytes.Buffer safe for a writer and a reader at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// getenvOf returns a getenv reading env.
func getenvOf(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// start runs the service with args and env (its database and secret in
// a temporary directory unless env names them) and waits until it
// listens; it is stopped when t ends.
func start(t testing.TB, env map[string]string, args ...string) *started {
	t.Helper()
	dir := t.TempDir()
	if env == nil {
		env = map[string]string{}
	}
	if env["AGENTMEM_DB"] == "" && env["AGENTMEM_POSTGRES_DSN"] == "" {
		env["AGENTMEM_DB"] = filepath.Join(dir, "server.db")
	}
	if env["AGENTMEM_SECRET_FILE"] == "" && env["AGENTMEM_TOKEN_SECRET"] == "" {
		env["AGENTMEM_SECRET_FILE"] = filepath.Join(dir, "server.secret")
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &started{env: env, stop: cancel, done: make(chan error, 1), stderr: &lockedBuffer{}}
	go func() {
		err := run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), getenvOf(env), pw, s.stderr)
		_ = pw.CloseWithError(io.EOF)
		s.done <- err
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if err != nil {
		cancel()
		t.Fatalf("the service did not start: %v (%v)\n%s", err, <-s.done, s.stderr)
	}
	rest, ok := strings.CutPrefix(line, listeningPrefix)
	if !ok {
		t.Fatalf("the service's first line is %q", line)
	}
	s.base = "http://" + strings.Fields(rest)[0]
	t.Cleanup(func() { s.shutdown(t) })
	return s
}

// shutdown stops the service, once, and checks that it exited cleanly.
func (s *started) shutdown(t testing.TB) {
	s.once.Do(func() {
		s.stop()
		select {
		case err := <-s.done:
			if err != nil {
				t.Errorf("the service exited with %v\n%s", err, s.stderr)
			}
		case <-time.After(shutdownGrace + 10*time.Second):
			t.Errorf("the service did not shut down")
		}
	})
}

// token signs a token with the service's secret through the token
// subcommand.
func (s *started) token(t testing.TB, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), append([]string{"token"}, args...), getenvOf(s.env), &out, io.Discard); err != nil {
		t.Fatalf("token %v: %v", args, err)
	}
	return strings.TrimSpace(out.String())
}

// post sends body to path with headers and returns the status and the
// decoded JSON body.
func post(t *testing.T, url string, headers map[string]string, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s: status %d, body not JSON: %v", url, resp.StatusCode, err)
	}
	return resp.StatusCode, out
}

// TestServeWithTokens runs the service on SQLite with its made secret:
// no credentials and a token of another secret are 401, a token the
// token subcommand signed works, what one session wrote and saved is
// recalled by the next at the agent level, the store scope is refused
// to an agent, and the secret file is kept private.
func TestServeWithTokens(t *testing.T) {
	s := start(t, nil)
	if code, body := post(t, s.base+"/v1/recall", nil, `{"text":"hi"}`); code != http.StatusUnauthorized || body["error"].(map[string]any)["class"] != "unauthenticated" {
		t.Fatalf("no credentials: %d %v", code, body)
	}
	other := start(t, nil) // another secret
	foreign := other.token(t, "-tenant", "acme", "-user", "alice", "-agent", "helper")
	if code, _ := post(t, s.base+"/v1/recall", map[string]string{"Authorization": "Bearer " + foreign, "Agentmem-Session": "s1"}, `{"text":"hi"}`); code != http.StatusUnauthorized {
		t.Fatalf("a token of another secret: %d, want 401", code)
	}
	tok := s.token(t, "-tenant", "acme", "-user", "alice", "-agent", "helper")
	auth := func(session string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + tok, "Agentmem-Session": session}
	}
	code, body := post(t, s.base+"/v1/write", auth("s1"), `{"turns":[{"role":"user","content":"I keep bees in Lyon"}],"memories":["Alice keeps bees in Lyon"]}`)
	if code != http.StatusOK || body["turns"] != float64(1) {
		t.Fatalf("write: %d %v", code, body)
	}
	code, body = post(t, s.base+"/v1/recall", auth("s2"), `{"text":"where are the bees kept","scope":"agent"}`)
	if code != http.StatusOK || !strings.Contains(body["text"].(string), "Alice keeps bees in Lyon") {
		t.Fatalf("recall in the next session: %d %v", code, body)
	}
	if code, body := post(t, s.base+"/v1/list", auth("s2"), `{"scope":"store"}`); code != http.StatusForbidden {
		t.Fatalf("store scope for an agent: %d %v, want 403", code, body)
	}
	fi, err := os.Stat(s.env["AGENTMEM_SECRET_FILE"])
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret file: %v, %v; want mode 0600", fi, err)
	}
}

// TestServeTrustedHeaders runs the service in sidecar mode: the identity
// comes from the headers, and a request without a tenant is 401.
func TestServeTrustedHeaders(t *testing.T) {
	s := start(t, map[string]string{"AGENTMEM_TRUSTED_HEADERS": "true"})
	if code, _ := post(t, s.base+"/v1/recall", nil, `{"text":"hi"}`); code != http.StatusUnauthorized {
		t.Fatalf("no identity headers: %d, want 401", code)
	}
	h := map[string]string{"Agentmem-Tenant": "acme", "Agentmem-User": "bob", "Agentmem-Session": "s1"}
	if code, body := post(t, s.base+"/v1/write", h, `{"turns":[{"role":"user","content":"hello"}]}`); code != http.StatusOK {
		t.Fatalf("write: %d %v", code, body)
	}
	if code, body := post(t, s.base+"/v1/list", h, `{"scope":"session"}`); code != http.StatusOK || len(body["turns"].([]any)) != 1 {
		t.Fatalf("list: %d %v", code, body)
	}
}

// TestUsage checks the command lines the program refuses, with exit
// code 2.
func TestUsage(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.secret")
	if err := os.WriteFile(short, []byte("too short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"-nope"}, nil, "flag provided but not defined"},
		{[]string{"extra"}, nil, "unexpected arguments"},
		{nil, map[string]string{"MEMORY_REQUIRE_PRINCIPAL": "maybe"}, "MEMORY_REQUIRE_PRINCIPAL"},
		{nil, map[string]string{"AGENTMEM_SECRET_FILE": short}, "at least 32"},
		{[]string{"-budget", "10", "-trigger", "20"}, nil, "Trigger"},
		{[]string{"token"}, nil, "-tenant is required"},
		{[]string{"token", "-tenant", "acme", "-ttl", "-1h"}, nil, "-ttl must be positive"},
		{[]string{"token", "-tenant", "ac\nme"}, nil, "invalid"},
	} {
		env := map[string]string{"AGENTMEM_DB": filepath.Join(dir, "x.db"), "AGENTMEM_SECRET_FILE": filepath.Join(dir, "x.secret")}
		for k, v := range c.env {
			env[k] = v
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // a command line that parses would serve: stop it at once
		args := c.args
		if len(args) == 0 || args[0] != "token" {
			args = append([]string{"-addr", "127.0.0.1:0"}, args...)
		}
		err := run(ctx, args, getenvOf(env), io.Discard, io.Discard)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %v: %v (exit %d), want a usage error with %q", c.args, c.env, err, exitCode(err), c.want)
		}
	}
}

// TestMetrics runs the service with -metrics: after a write and a
// recall, GET /metrics reports the requests per route and the
// operations, in the Prometheus text format, without the content.
func TestMetrics(t *testing.T) {
	s := start(t, map[string]string{"AGENTMEM_TRUSTED_HEADERS": "1"}, "-metrics")
	h := map[string]string{"Agentmem-Tenant": "acme", "Agentmem-User": "bob", "Agentmem-Session": "s1"}
	if code, body := post(t, s.base+"/v1/write", h, `{"turns":[{"role":"user","content":"secret-marker-42 lives here"}]}`); code != http.StatusOK {
		t.Fatalf("write: %d %v", code, body)
	}
	if code, body := post(t, s.base+"/v1/recall", h, `{"text":"where"}`); code != http.StatusOK {
		t.Fatalf("recall: %d %v", code, body)
	}
	resp, err := http.Get(s.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	text := string(b)
	for _, want := range []string{`http_route="/v1/write"`, `http_route="/v1/recall"`, "agentmem_http_request_duration_seconds_count",
		`agentmem_operation="append"`, `agentmem_operation="recall_with"`} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s:\n%s", want, text)
		}
	}
	if strings.Contains(text, "secret-marker-42") || strings.Contains(text, "bob") {
		t.Errorf("metrics carry user data:\n%s", text)
	}
}
