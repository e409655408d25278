package tiered_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/postgres"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/internal/foldcheck"
	"github.com/agentmem/memory/internal/proctest"
	"github.com/agentmem/memory/tiers/tiered"
)

// The multi-process tests (this file and kill_test.go) run replicas of a
// tiered Memory as child processes (package internal/proctest), each
// with a driver of its own on one storage: a SQLite file, or a
// PostgreSQL database of the package's shared cluster (pgShared, started
// by the parent; the children connect to it).

// The environment of the child processes.
const (
	envKind    = "AGENTMEM_TIERED_CHILD_KIND"    // "sqlite" or "postgres"
	envWhere   = "AGENTMEM_TIERED_CHILD_WHERE"   // the SQLite file, or the PostgreSQL DSN
	envReplica = "AGENTMEM_TIERED_CHILD_REPLICA" // the replica's number
	envStallAt = "AGENTMEM_TIERED_CHILD_STALL"   // where a killed replica stalls
)

// storageKinds are the drivers the multi-process tests run on.
var storageKinds = []string{"sqlite", "postgres"}

// storageDriver is what the tests need of a driver: both the SQLite and
// the PostgreSQL drivers are one.
type storageDriver interface {
	driver.Driver
	driver.Claimer
	driver.WorkEraser
	driver.Swapper
	driver.TextRanker
}

var (
	_ storageDriver = (*sqlite.Driver)(nil)
	_ storageDriver = (*postgres.Driver)(nil)
)

// openStorage opens a driver of kind on the storage at where.
func openStorage(kind, where string) (storageDriver, error) {
	switch kind {
	case "sqlite":
		return sqlite.Open(where, sqlite.Options{})
	case "postgres":
		return postgres.Open(where, postgres.Options{})
	}
	return nil, fmt.Errorf("unknown storage kind %q", kind)
}

// newStorage prepares empty storage of kind for t, its schema made so
// that the children open an existing one, and returns where it is: the
// SQLite file's path, or the DSN of a PostgreSQL database dropped when t
// ends. Without PostgreSQL server binaries, kind postgres skips t
// (pgtest; unless pgtest.RequireEnv is set, when it fails).
func newStorage(t *testing.T, kind string) string {
	t.Helper()
	var where string
	switch kind {
	case "sqlite":
		where = filepath.Join(t.TempDir(), "memory.db")
	case "postgres":
		where = pgShared.CreateDB(t, true) + " options='-c synchronous_commit=off'"
	default:
		t.Fatalf("unknown storage kind %q", kind)
	}
	d, err := openStorage(kind, where)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return where
}

// childEnv is the environment of a child on the storage of kind at where.
func childEnv(kind, where string, more ...string) []string {
	return append([]string{envKind + "=" + kind, envWhere + "=" + where}, more...)
}

// workTable reads the tiered work queue of a storage with SQL: what is
// pending or claimed in it. The drivers have no call that lists a queue.
type workTable struct {
	db *sql.DB
}

// openWorkTable opens the work queue of the storage of kind at where.
func openWorkTable(kind, where string) (*workTable, error) {
	name, dsn := "postgres", where
	if kind == "sqlite" {
		name, dsn = "sqlite3", "file:"+where+"?_busy_timeout=10000"
	}
	db, err := sql.Open(name, dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return &workTable{db}, nil
}

func (w *workTable) Close() error { return w.db.Close() }

// queuedWork is an item of the work queue, as workTable reads it.
type queuedWork struct {
	ID       string
	Attempts int
	Op       string
}

// items returns the items of the tiered queue.
func (w *workTable) items(ctx context.Context) ([]queuedWork, error) {
	rows, err := w.db.QueryContext(ctx, "SELECT id, attempts, payload FROM memory_work WHERE queue = '"+tiered.Queue+"' ORDER BY created, id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []queuedWork
	for rows.Next() {
		var q queuedWork
		var payload string
		if err := rows.Scan(&q.ID, &q.Attempts, &payload); err != nil {
			return nil, err
		}
		var j struct {
			Op string `json:"op"`
		}
		_ = json.Unmarshal([]byte(payload), &j)
		q.Op = j.Op
		out = append(out, q)
	}
	return out, rows.Err()
}

// replicaOptions are the options of every replica of the multi-process
// tests: small budgets, so that folds are many (with 8-word turns, one
// every three or four turns); an idle flush soon after the appends end,
// which folds what the trigger left (across replicas a fold may be
// queued a second's appends late: see the package documentation), and
// all but the newest turn of every session; every digest version kept,
// so that they can be checked.
func replicaOptions(model interface {
	extract.Summarizer
	extract.Extractor
}, workers int) tiered.Options {
	return tiered.Options{
		Budget: 30, Trigger: 30, Target: 15,
		Workers:         workers,
		IdleFlush:       2 * time.Second,
		DigestRetention: 100000,
		Settle:          300 * time.Millisecond,
		Summarizer:      model,
		Extractor:       model,
	}
}

// replicaTrigger is replicaOptions' Trigger.
const replicaTrigger = 30

// tallied is extract.Rules counting its calls, and the turns it was
// given to summarise: a fold done twice shows as a call too many.
type tallied struct {
	extract.Rules
	summaries, extractions, summarized atomic.Int64
}

func (c *tallied) Summarize(ctx context.Context, previous string, turns []memory.Record) (string, extract.Usage, error) {
	c.summaries.Add(1)
	c.summarized.Add(int64(len(turns)))
	return c.Rules.Summarize(ctx, previous, turns)
}

func (c *tallied) Extract(ctx context.Context, turns, known []memory.Record) ([]extract.Fact, extract.Usage, error) {
	c.extractions.Add(1)
	return c.Rules.Extract(ctx, turns, known)
}

// replicaCounts is what a replica child reports of its work.
type replicaCounts struct {
	Summaries, Extractions, Summarized int64 // the model's calls, and the turns it summarised
	Folds, FoldedTurns, GivenUp        int64 // tiered.Stats
	Appended                           int
	Appending, Waiting                 string // how long the replica appended, and then waited for the folds
}

// countsPrefix starts the line on which a replica child reports its
// counts.
const countsPrefix = "tiered-replica-counts: "

// The workload of TestReplicasFoldExactlyOnce: each of the replicas has
// its appenders (goroutines) append turnsPerReplica turns to each of
// replicaSessions sessions, the same sessions in every replica.
const (
	replicas        = 2
	replicaSessions = 50
	turnsPerReplica = 12
	appenders       = 8
	// appendPace is how long an appender waits between its appends:
	// appending lasts several Settles, so that folds run while turns
	// come (an appender without pause would be done before the first
	// turn settles, and each session folded once).
	appendPace = 25 * time.Millisecond
)

// replicaSession is the identity of session s of the replica tests: the
// same user and agent, one session each.
func replicaSession(s int) memory.Identity {
	return memory.Identity{Tenant: "acme", User: "alice", Agent: "helper", Session: fmt.Sprintf("r%02d", s)}
}

// doneSession is where each replica of TestReplicasFoldExactlyOnce
// says it is done appending, with a record.
var doneSession = memory.Identity{Tenant: "acme", User: "alice", Agent: "helper", Session: "done"}

// TestReplicasChild is a replica of TestReplicasFoldExactlyOnce: a
// Memory of eight workers on the storage the environment names, whose
// appenders, once both replicas are ready, append to the shared
// sessions at once. It then waits until the work queue is empty (the
// folds, their facts and the idle flushes done) and every session is
// folded below its trigger, closes the Memory and reports its counts
// (countsPrefix). Run directly, it skips.
func TestReplicasChild(t *testing.T) {
	proctest.Child(t)
	kind, where := os.Getenv(envKind), os.Getenv(envWhere)
	replica, err := strconv.Atoi(os.Getenv(envReplica))
	if err != nil {
		t.Fatalf("%s: %v", envReplica, err)
	}
	ctx := context.Background()
	d, err := openStorage(kind, where)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	work, err := openWorkTable(kind, where)
	if err != nil {
		t.Fatal(err)
	}
	defer work.Close()
	st := backend.NewStore(d, backend.StoreOptions{Tokens: words{}})
	model := &tallied{}
	opt := replicaOptions(model, 8)
	opt.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	m, err := tiered.New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	proctest.Ready()
	start := time.Now()
	var wg sync.WaitGroup
	var appended atomic.Int64
	total := replicaSessions * turnsPerReplica
	for g := range appenders {
		wg.Go(func() {
			for k := g; k < total; k += appenders {
				text := fmt.Sprintf("I noted item %d from replica %d today.", k, replica)
				if _, err := m.Append(ctx, replicaSession(k%replicaSessions), tiered.Turn{Role: memory.RoleUser, Content: text}); err != nil {
					t.Errorf("replica %d, append %d: %v", replica, k, err)
					return
				}
				appended.Add(1)
				time.Sleep(appendPace)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// Say so in the storage (through the store: a turn tiered never
	// sees, nor folds): once both replicas have, every append has queued
	// what it queues.
	if err := st.Add(ctx, doneSession, memory.NewTurn(doneSession, memory.RoleUser, fmt.Sprintf("replica %d is done", replica), time.Now())); err != nil {
		t.Fatal(err)
	}
	appending := time.Since(start)
	// Wait until the folds, their facts and the idle flushes are done,
	// whichever replica does them. The queue is read first: when it is
	// empty and both replicas are done appending, no fold runs any more,
	// and a session over its trigger stays so.
	deadline := time.Now().Add(30 * time.Second)
	for {
		items, err := work.items(ctx)
		if err != nil {
			t.Fatal(err)
		}
		over, err := sessionsOverTrigger(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) == 0 && len(over) == 0 {
			break
		}
		if len(items) == 0 {
			done, err := st.List(ctx, doneSession, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindTurn}})
			if err != nil {
				t.Fatal(err)
			}
			if len(done) == replicas {
				t.Fatalf("replica %d: a fold was lost: every replica is done appending and no work is queued, yet sessions are over their trigger of %d tokens and will stay so (session: unfolded tokens): %v",
					replica, replicaTrigger, over)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %d: after 30 s, sessions still over their trigger (session: unfolded tokens): %v; work queued: %+v", replica, over, items)
		}
		time.Sleep(50 * time.Millisecond)
	}
	waiting := time.Since(start) - appending
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	s := m.Stats()
	counts := replicaCounts{
		Summaries: model.summaries.Load(), Extractions: model.extractions.Load(), Summarized: model.summarized.Load(),
		Folds: s.Folds, FoldedTurns: s.FoldedTurns, GivenUp: s.GivenUp,
		Appended:  int(appended.Load()),
		Appending: appending.Round(time.Millisecond).String(), Waiting: waiting.Round(time.Millisecond).String(),
	}
	line, err := json.Marshal(counts)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(countsPrefix + string(line))
}

// sessionsOverTrigger returns the sessions of the replica tests whose
// unfolded turns are over the trigger, with their unfolded tokens.
func sessionsOverTrigger(ctx context.Context, st *backend.Store) (map[string]int, error) {
	over := map[string]int{}
	for s := range replicaSessions {
		id := replicaSession(s)
		n, err := unfoldedTokens(ctx, st, id)
		if err != nil {
			return nil, err
		}
		if n > replicaTrigger {
			over[id.Session] = n
		}
	}
	return over, nil
}

// unfoldedTokens returns the tokens of the turns of id's session after
// its latest digest version's boundary.
func unfoldedTokens(ctx context.Context, st *backend.Store, id memory.Identity) (int, error) {
	ds, err := st.List(ctx, id, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindDigest}, Limit: 1})
	if err != nil {
		return 0, err
	}
	turns, err := st.List(ctx, id, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindTurn}})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range turns { // newest first
		if len(ds) > 0 && r.ID == ds[0].Metadata[tiered.MetaThroughID] {
			break
		}
		n += r.Tokens
	}
	return n, nil
}

// TestReplicasFoldExactlyOnce runs two replicas as two processes, each
// with a driver of its own on one storage (a SQLite file; a PostgreSQL
// database) and a Memory of eight workers, appending from eight
// goroutines each to the same fifty sessions at once, until the idle
// flushes fold what the trigger left. Then every session's digest
// versions must be contiguous from 1 and partition its turns in order
// (no turn folded twice, none skipped), all its turns but the newest
// folded; every folded turn's fact must be stored once; the work queue
// must be empty; and the two replicas together must have made one
// summary and one extraction per version, of the turns the versions
// folded: no fold was done twice, and none lost.
func TestReplicasFoldExactlyOnce(t *testing.T) {
	for _, kind := range storageKinds {
		t.Run(kind, func(t *testing.T) {
			where := newStorage(t, kind)
			var envs [][]string
			for r := range replicas {
				envs = append(envs, childEnv(kind, where, envReplica+"="+strconv.Itoa(r)))
			}
			start := time.Now()
			outputs := proctest.Run(t, "TestReplicasChild", envs...)
			t.Logf("%d replicas appended and folded in %v", replicas, time.Since(start).Round(time.Millisecond))
			var sum replicaCounts
			for r, out := range outputs {
				var c replicaCounts
				found := false
				for line := range strings.Lines(string(out)) {
					if rest, ok := strings.CutPrefix(strings.TrimSpace(line), countsPrefix); ok {
						found = json.Unmarshal([]byte(rest), &c) == nil
					}
				}
				if !found {
					t.Fatalf("replica %d reported no counts:\n%s", r, out)
				}
				t.Logf("replica %d: %+v", r, c)
				sum.Summaries += c.Summaries
				sum.Extractions += c.Extractions
				sum.Summarized += c.Summarized
				sum.Folds += c.Folds
				sum.FoldedTurns += c.FoldedTurns
				sum.GivenUp += c.GivenUp
				sum.Appended += c.Appended
			}

			ctx := context.Background()
			d, err := openStorage(kind, where)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			st := backend.NewStore(d, backend.StoreOptions{Tokens: words{}})
			var versions, folded int
			for s := range replicaSessions {
				id := replicaSession(s)
				h := foldcheck.Check(t, ctx, st, id, replicaTrigger)
				if want := replicas * turnsPerReplica; len(h.Turns) != want || h.Folded != want-1 {
					t.Errorf("session %s holds %d turns, %d of them folded; want %d, all but the newest (the idle flush)", id.Session, len(h.Turns), h.Folded, want)
				}
				versions += len(h.Versions)
				folded += h.Folded
			}
			work, err := openWorkTable(kind, where)
			if err != nil {
				t.Fatal(err)
			}
			defer work.Close()
			if items, err := work.items(ctx); err != nil || len(items) > 0 {
				t.Errorf("work left queued: %+v (%v)", items, err)
			}
			t.Logf("%d digest versions folding %d turns of %d", versions, folded, sum.Appended)
			if sum.Appended != replicas*replicaSessions*turnsPerReplica {
				t.Errorf("%d turns appended, want %d", sum.Appended, replicas*replicaSessions*turnsPerReplica)
			}
			if versions < replicaSessions*3 {
				t.Errorf("only %d digest versions over %d sessions: the test folds too little to test anything", versions, replicaSessions)
			}
			v := int64(versions)
			if sum.Summaries != v || sum.Extractions != v || sum.Folds != v {
				t.Errorf("%d digest versions stored, but the replicas made %d summaries and %d extractions and counted %d folds: a fold was done twice, or one lost",
					versions, sum.Summaries, sum.Extractions, sum.Folds)
			}
			if sum.Summarized != int64(folded) || sum.FoldedTurns != int64(folded) {
				t.Errorf("%d turns folded, but %d summarised and %d counted folded by the replicas", folded, sum.Summarized, sum.FoldedTurns)
			}
			if sum.GivenUp != 0 {
				t.Errorf("%d folds given up", sum.GivenUp)
			}
		})
	}
}
