package main

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/postgres"
	"github.com/agentmem/memory/client"
	"github.com/agentmem/memory/internal/foldcheck"
	"github.com/agentmem/memory/internal/latency"
	"github.com/agentmem/memory/internal/pgtest"
	"github.com/agentmem/memory/internal/proctest"
	"github.com/agentmem/memory/tiers/tiered"
)

// pgShared is the PostgreSQL cluster the package's tests share.
var pgShared pgtest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	pgShared.Stop()
	os.Exit(code)
}

// envArgs carries a child service's command line, one argument a line.
const envArgs = "AGENTMEM_SERVER_CHILD_ARGS"

// The service's folding in TestTwoServersFoldOnce: small budgets, so
// that each session folds every few turns, and every digest version kept
// so that they can be checked.
var replicaArgs = []string{"-budget", "60", "-idle-flush", "2s", "-digest-retention", "100000", "-workers", "4"}

// replicaTrigger is the trigger of replicaArgs: the budget.
const replicaTrigger = 60

// TestServiceChild is one server process of TestTwoServersFoldOnce: the
// service, run with the arguments envArgs holds, until its standard input
// closes. Run directly, it skips.
func TestServiceChild(t *testing.T) {
	proctest.Child(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	args := strings.Split(os.Getenv(envArgs), "\n")
	if err := run(ctx, args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		t.Fatal(err)
	}
}

// roundRobin sends each request to the next of hosts in turn.
type roundRobin struct {
	hosts []string
	next  atomic.Int64
	base  http.RoundTripper
}

func (r *roundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Host = r.hosts[int(r.next.Add(1))%len(r.hosts)]
	req.Host = req.URL.Host
	return r.base.RoundTrip(req)
}

// stoppedLine matches the log line a service writes as it stops, with
// what its Memory did.
var stoppedLine = regexp.MustCompile(`msg=stopped folds=(\d+) folded_turns=(\d+) facts=(\d+) given_up=(\d+)`)

// TestTwoServersFoldOnce runs two server processes on one PostgreSQL
// database behind one client that sends each request to the next
// server: twenty sessions written at once, each turn through either
// server. Once the servers have folded everything and stopped, every
// turn is stored once, every session's digest versions partition its
// turns in order with one fact per folded turn (package foldcheck), and
// the two processes together made exactly as many folds as there are
// versions: no fold was done twice or lost.
func TestTwoServersFoldOnce(t *testing.T) {
	const sessions, turns = 20, 12
	dsn := pgShared.CreateDB(t, true) + " options='-c synchronous_commit=off'"
	d, err := postgres.Open(dsn, postgres.Options{}) // the schema, made once before the servers open it
	if err != nil {
		t.Fatal(err)
	}
	st := backend.NewStore(d, backend.StoreOptions{})
	defer st.Close()
	secret := strings.Repeat("s", 40)
	env := []string{"AGENTMEM_POSTGRES_DSN=" + dsn, "AGENTMEM_TOKEN_SECRET=" + secret,
		envArgs + "=" + strings.Join(append([]string{"-addr", "127.0.0.1:0"}, replicaArgs...), "\n")}
	var procs []*proctest.Process
	var hosts []string
	for range 2 {
		p := proctest.Start(t, "TestServiceChild", proctest.Options{Env: env, Timeout: 4 * time.Minute})
		procs = append(procs, p)
		for line := range p.Lines() {
			if rest, ok := strings.CutPrefix(line, listeningPrefix); ok {
				hosts = append(hosts, strings.Fields(rest)[0])
				break
			}
		}
	}
	if len(hosts) != 2 {
		t.Fatalf("servers listening: %v", hosts)
	}
	var tok strings.Builder
	if err := run(context.Background(), []string{"token", "-tenant", "acme", "-user", "alice", "-agent", "helper"},
		func(k string) string { return map[string]string{"AGENTMEM_TOKEN_SECRET": secret}[k] }, &tok, io.Discard); err != nil {
		t.Fatal(err)
	}
	cl, err := client.New("http://"+hosts[0], client.Options{Token: strings.TrimSpace(tok.String()),
		HTTPClient: &http.Client{Transport: &roundRobin{hosts: hosts, base: http.DefaultTransport}}})
	if err != nil {
		t.Fatal(err)
	}
	got := drive(context.Background(), cl, sessions, turns, func(i int) memory.Identity { return loadSession("two", i) })
	for _, err := range got.errors[:min(len(got.errors), 10)] {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	ctx := context.Background()
	waitFolded(t, ctx, st, dsn, sessions, turns)

	var folds, foldedTurns int64
	for i, p := range procs {
		p.Go() // closes its standard input: the service shuts down
		out, err := p.Wait()
		if err != nil {
			t.Fatalf("server %d: %v\n%s", i, err, out)
		}
		m := stoppedLine.FindSubmatch(out)
		if m == nil {
			t.Fatalf("server %d did not report what it folded:\n%s", i, out)
		}
		f, _ := strconv.ParseInt(string(m[1]), 10, 64)
		ft, _ := strconv.ParseInt(string(m[2]), 10, 64)
		if gu, _ := strconv.Atoi(string(m[4])); gu != 0 {
			t.Errorf("server %d gave up %d folds", i, gu)
		}
		t.Logf("server %d: %d folds of %d turns", i, f, ft)
		folds += f
		foldedTurns += ft
	}
	var versions, folded int
	for i := range sessions {
		id := loadSession("two", i)
		h := foldcheck.Check(t, ctx, st, id, replicaTrigger)
		if len(h.Turns) != turns || h.Folded != turns-1 {
			t.Errorf("session %s holds %d turns, %d of them folded; want %d, all but the newest (the idle flush)", id.Session, len(h.Turns), h.Folded, turns)
		}
		versions += len(h.Versions)
		folded += h.Folded
	}
	t.Logf("%d digest versions folding %d turns; write p50 %.2f ms p99 %.2f ms, recall p50 %.2f ms p99 %.2f ms",
		versions, folded, ms(latency.Percentile(got.writes, 50)), ms(latency.Percentile(got.writes, 99)), ms(latency.Percentile(got.recalls, 50)), ms(latency.Percentile(got.recalls, 99)))
	if folds != int64(versions) || foldedTurns != int64(folded) {
		t.Errorf("the servers made %d folds of %d turns, but %d digest versions fold %d turns: a fold was done twice, or one lost", folds, foldedTurns, versions, folded)
	}
	if versions < sessions*2 {
		t.Errorf("only %d digest versions over %d sessions: the test folds too little to test anything", versions, sessions)
	}
}

// waitFolded waits until the servers have folded every session of the
// test down to its newest turn and stored the facts of every fold: the
// work queue empty and each session's digest through its last turn but
// one.
func waitFolded(t *testing.T, ctx context.Context, st *backend.Store, dsn string, sessions, turns int) {
	t.Helper()
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var queued int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM memory_work WHERE queue = $1", tiered.Queue).Scan(&queued); err != nil {
			t.Fatal(err)
		}
		behind := 0
		for i := range sessions {
			id := loadSession("two", i)
			l, err := st.List(ctx, id, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindDigest}, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			folded := 0
			if len(l) == 1 {
				folded = digestThrough(t, ctx, st, id, l[0])
			}
			if folded < turns-1 {
				behind++
			}
		}
		if queued == 0 && behind == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s, %d sessions are not folded down to their newest turn, and %d jobs are queued", behind, queued)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// digestThrough returns how many of id's turns the digest version d has
// folded: the position of its boundary turn, plus one.
func digestThrough(t *testing.T, ctx context.Context, st *backend.Store, id memory.Identity, d memory.Record) int {
	t.Helper()
	turns, err := st.List(ctx, id, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindTurn}})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range turns { // newest first
		if r.ID == d.Metadata[tiered.MetaThroughID] {
			return len(turns) - i
		}
	}
	return 0
}
