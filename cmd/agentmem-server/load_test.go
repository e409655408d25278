package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/client"
	"github.com/agentmem/memory/internal/latency"
	"github.com/agentmem/memory/tiers/tiered"
)

// The load test's workload: loadSessions sessions at once, each an agent
// loop of loadTurns turns through the client — a recall at the agent
// level before each turn, the turn written after — bounded by
// loadTimeout.
const (
	loadSessions = 32
	loadTurns    = 16
	loadTimeout  = 2 * time.Minute
)

// loadSession is the identity of session s of the load: one user and
// agent, a session each.
func loadSession(prefix string, s int) memory.Identity {
	return memory.Identity{Tenant: "acme", User: "alice", Agent: "helper", Session: fmt.Sprintf("%s-%02d", prefix, s)}
}

// loadTurn is what session s says at turn i: one fact of its own, as
// extract.Rules takes it.
func loadTurn(s, i int) string { return fmt.Sprintf("I noted item %d of list %d today.", i, s) }

// load is what a run of the workload measured.
type load struct {
	writes, recalls []time.Duration
	errors          []error
	elapsed         time.Duration
}

// drive runs the workload through cl, each session's identity made by
// session, and returns the latency of every call and the errors.
func drive(ctx context.Context, cl *client.Client, sessions, turns int, session func(s int) memory.Identity) load {
	ctx, cancel := context.WithTimeout(ctx, loadTimeout)
	defer cancel()
	var (
		mu  sync.Mutex
		out load
		wg  sync.WaitGroup
	)
	start := time.Now()
	for s := range sessions {
		wg.Go(func() {
			id := session(s)
			var writes, recalls []time.Duration
			var errs []error
			for i := range turns {
				text := loadTurn(s, i)
				t0 := time.Now()
				rec, err := cl.RecallWith(ctx, id, text, tiered.RecallOptions{Level: memory.LevelAgent})
				recalls = append(recalls, time.Since(t0))
				if err == nil && rec.Degraded {
					err = fmt.Errorf("recall degraded: %+v", rec.Errors)
				}
				if err != nil {
					errs = append(errs, fmt.Errorf("session %s, recall %d: %w", id.Session, i, err))
				}
				t0 = time.Now()
				_, err = cl.Append(ctx, id, tiered.Turn{Role: memory.RoleUser, Content: text})
				writes = append(writes, time.Since(t0))
				if err != nil {
					errs = append(errs, fmt.Errorf("session %s, write %d: %w", id.Session, i, err))
				}
			}
			mu.Lock()
			defer mu.Unlock()
			out.writes = append(out.writes, writes...)
			out.recalls = append(out.recalls, recalls...)
			out.errors = append(out.errors, errs...)
		})
	}
	wg.Wait()
	out.elapsed = time.Since(start)
	return out
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// startLoad starts the service on SQLite for the load and returns it
// with a client holding a token for loadSession's user and agent.
func startLoad(t testing.TB) (*started, *client.Client) {
	s := start(t, nil, "-budget", "60", "-idle-flush", "1s", "-digest-retention", "100000")
	tr := &http.Transport{MaxIdleConnsPerHost: loadSessions}
	t.Cleanup(tr.CloseIdleConnections)
	cl, err := client.New(s.base, client.Options{
		Token:      s.token(t, "-tenant", "acme", "-user", "alice", "-agent", "helper"),
		HTTPClient: &http.Client{Transport: tr},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, cl
}

// TestLoad drives the service with loadSessions concurrent sessions
// through the client over loopback: no call fails, no recall is
// degraded, and once the service has shut down every turn written is in
// its session on the SQLite file, in order — none lost, none doubled.
func TestLoad(t *testing.T) {
	s, cl := startLoad(t)
	got := drive(context.Background(), cl, loadSessions, loadTurns, func(i int) memory.Identity { return loadSession("load", i) })
	for _, err := range got.errors[:min(len(got.errors), 10)] {
		t.Error(err)
	}
	t.Logf("%d sessions × %d turns in %v: write p50 %.2f ms p99 %.2f ms; recall p50 %.2f ms p99 %.2f ms",
		loadSessions, loadTurns, got.elapsed.Round(time.Millisecond),
		ms(latency.Percentile(got.writes, 50)), ms(latency.Percentile(got.writes, 99)), ms(latency.Percentile(got.recalls, 50)), ms(latency.Percentile(got.recalls, 99)))
	s.shutdown(t)

	d, err := sqlite.Open(s.env["AGENTMEM_DB"], sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := backend.NewStore(d, backend.StoreOptions{})
	defer st.Close()
	ctx := context.Background()
	for i := range loadSessions {
		id := loadSession("load", i)
		turns, err := st.List(ctx, id, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindTurn}})
		if err != nil {
			t.Fatal(err)
		}
		slices.Reverse(turns)
		var said []string
		for _, r := range turns {
			said = append(said, r.Content)
		}
		var want []string
		for j := range loadTurns {
			want = append(want, loadTurn(i, j))
		}
		if !slices.Equal(said, want) {
			t.Errorf("session %s holds %d turns, want the %d written in order: %q", id.Session, len(said), loadTurns, said)
		}
	}
}

// BenchmarkLoad runs the load test's workload b.N times, each on a fresh
// service, and reports the latency quantiles of its writes and recalls
// through the client over loopback, and the calls a second: with one
// session (a call's own latency) and with loadSessions at once (the
// latency under load, mostly waiting for the two cores).
func BenchmarkLoad(b *testing.B) {
	for _, sessions := range []int{1, loadSessions} {
		b.Run(fmt.Sprintf("sessions=%d", sessions), func(b *testing.B) {
			var writes, recalls []time.Duration
			var elapsed time.Duration
			for range b.N {
				b.StopTimer()
				s, cl := startLoad(b)
				b.StartTimer()
				got := drive(context.Background(), cl, sessions, loadTurns, func(i int) memory.Identity { return loadSession("bench", i) })
				b.StopTimer()
				if len(got.errors) > 0 {
					b.Fatal(got.errors[0])
				}
				writes, recalls, elapsed = append(writes, got.writes...), append(recalls, got.recalls...), elapsed+got.elapsed
				s.shutdown(b)
			}
			b.ReportMetric(ms(latency.Percentile(writes, 50)), "write-p50-ms")
			b.ReportMetric(ms(latency.Percentile(writes, 99)), "write-p99-ms")
			b.ReportMetric(ms(latency.Percentile(recalls, 50)), "recall-p50-ms")
			b.ReportMetric(ms(latency.Percentile(recalls, 99)), "recall-p99-ms")
			b.ReportMetric(float64(len(writes)+len(recalls))/elapsed.Seconds(), "calls/s")
		})
	}
}
