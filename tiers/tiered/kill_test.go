package tiered_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/internal/foldcheck"
	"github.com/agentmem/memory/internal/proctest"
	"github.com/agentmem/memory/tiers/tiered"
)

// Where the child of TestKilledReplicaLosesNothing stalls, waiting to be
// killed, in the fold of a session or in the storing of its facts.
const (
	// stallSummarize stalls in the Summarizer: the fold is claimed and
	// nothing of it written.
	stallSummarize = "summarize"
	// stallBeforeDigest stalls as the fold writes its digest version:
	// its facts job is queued, the version not written.
	stallBeforeDigest = "before-digest"
	// stallAfterDigest stalls once the fold has written its digest
	// version: the version is stored, its facts are not.
	stallAfterDigest = "after-digest"
	// stallStoringFacts stalls as the facts job, claimed, writes the
	// first fact: the fold is done, its facts are not stored.
	stallStoringFacts = "storing-facts"
)

// stalledPrefix starts the line on which the child says it stalled.
const stalledPrefix = "tiered-stalled: "

// stall says the child stalled at where, and never returns: the parent
// kills the child.
func stall(where string) {
	fmt.Println(stalledPrefix + where)
	for {
		time.Sleep(time.Hour)
	}
}

// stallingDriver stalls at its point (stallBeforeDigest,
// stallAfterDigest or stallStoringFacts) when the fold or the facts job
// writes there.
type stallingDriver struct {
	storageDriver
	at string
}

func (d stallingDriver) Swap(ctx context.Context, rec memory.Record, expect int64) (int64, error) {
	if rec.Kind == memory.KindDigest && d.at == stallBeforeDigest || rec.Kind == memory.KindFact && d.at == stallStoringFacts {
		stall(d.at)
	}
	v, err := d.storageDriver.Swap(ctx, rec, expect)
	if err == nil && rec.Kind == memory.KindDigest && d.at == stallAfterDigest {
		stall(d.at)
	}
	return v, err
}

func (d stallingDriver) Put(ctx context.Context, recs []memory.Record) error {
	for _, r := range recs {
		if r.Kind == memory.KindFact && d.at == stallStoringFacts {
			stall(d.at)
		}
	}
	return d.storageDriver.Put(ctx, recs)
}

// stallingModel is extract.Rules, stalling in Summarize at
// stallSummarize.
type stallingModel struct {
	extract.Rules
	at string
}

func (m stallingModel) Summarize(ctx context.Context, previous string, turns []memory.Record) (string, extract.Usage, error) {
	if m.at == stallSummarize {
		stall(m.at)
	}
	return m.Rules.Summarize(ctx, previous, turns)
}

// killOptions are the options of the replicas of
// TestKilledReplicaLosesNothing: replicaOptions, with the shortest lease,
// so that a killed replica's claims lapse soon, turns settled at once,
// and no idle flush: the one fold is the trigger's.
func killOptions(model interface {
	extract.Summarizer
	extract.Extractor
}, workers int) tiered.Options {
	opt := replicaOptions(model, workers)
	opt.Lease = 2 * time.Second
	opt.Settle = time.Nanosecond
	opt.IdleFlush = -1
	return opt
}

// TestKilledReplicaChild is the replica TestKilledReplicaLosesNothing
// kills: a Memory of one worker on the storage the environment names,
// which folds the session queued there and stalls where the environment
// says. Run directly, it skips.
func TestKilledReplicaChild(t *testing.T) {
	proctest.Child(t)
	kind, where, at := os.Getenv(envKind), os.Getenv(envWhere), os.Getenv(envStallAt)
	d, err := openStorage(kind, where)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st := backend.NewStore(stallingDriver{d, at}, backend.StoreOptions{Tokens: words{}})
	m, err := tiered.New(st, killOptions(stallingModel{at: at}, 1))
	if err != nil {
		t.Fatal(err)
	}
	// Not closed: Close would wait for the stalled fold. The parent
	// kills this process long before.
	_ = m
	<-time.After(30 * time.Second)
	t.Fatalf("not stalled %s after 30 s", at)
}

// killedSession is the session of TestKilledReplicaLosesNothing.
var killedSession = replicaSession(0)

// TestKilledReplicaLosesNothing queues the fold of a session (six 8-word
// turns: 48 tokens, over the trigger of 30; the fold evicts five, down to
// the target of 15), lets a replica in a child process claim it and kills
// the child with SIGKILL mid-way: in the Summarizer, as it writes the
// digest version, once it has written it, and as the facts job writes the
// facts. Then a replica of this process, once the killed one's leases
// lapse, must finish the work: one digest version, folding the five
// turns once; their five facts stored; the work queue empty; and the
// model called again only when the killed replica had not stored the
// version (a fold whose version is stored is not done twice).
func TestKilledReplicaLosesNothing(t *testing.T) {
	for _, kind := range storageKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			for _, at := range []string{stallSummarize, stallBeforeDigest, stallAfterDigest, stallStoringFacts} {
				t.Run(at, func(t *testing.T) {
					t.Parallel()
					testKilledReplica(t, kind, at)
				})
			}
		})
	}
}

func testKilledReplica(t *testing.T, kind, at string) {
	ctx := context.Background()
	where := newStorage(t, kind)
	_, st := openReplica(t, kind, where)
	work := openWork(t, kind, where)
	appender, err := tiered.New(st, tiered.Options{Budget: 30, Trigger: 30, Target: 15, IdleFlush: -1, NoWorkers: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if _, err := appender.Append(ctx, killedSession, tiered.Turn{Role: memory.RoleUser, Content: fmt.Sprintf("I noted item %d of the list today.", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := appender.Close(); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	p := proctest.Start(t, "TestKilledReplicaChild", proctest.Options{Env: childEnv(kind, where, envStallAt+"="+at)})
	stalled := false
	for line := range p.Lines() {
		if stalled = line == stalledPrefix+at; stalled {
			break
		}
	}
	if !stalled {
		out, err := p.Wait()
		t.Fatalf("the child exited (%v) without stalling %s:\n%s", err, at, out)
	}
	p.Kill()
	if out, err := p.Wait(); err == nil {
		t.Fatalf("the child exited cleanly though killed:\n%s", out)
	}
	killed := time.Since(start)

	// What the killed replica left: what it did up to where it stalled.
	queued := func() []string {
		items, err := work.items(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ops []string
		for _, it := range items {
			ops = append(ops, it.Op)
		}
		slices.Sort(ops)
		return ops
	}
	versions, err := st.List(ctx, killedSession, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindDigest}})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := st.List(ctx, killedSession, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindFact}})
	if err != nil {
		t.Fatal(err)
	}
	wantVersions, wantQueued := 0, []string{"facts", "fold"}
	switch at {
	case stallSummarize:
		wantQueued = []string{"fold"}
	case stallAfterDigest:
		wantVersions = 1
	case stallStoringFacts:
		wantVersions, wantQueued = 1, []string{"facts"}
	}
	if got := queued(); len(versions) != wantVersions || len(stored) != 0 || !slices.Equal(got, wantQueued) {
		t.Fatalf("killed at %s, the replica left %d digest versions, %d facts and work %v; want %d, 0 and %v",
			at, len(versions), len(stored), got, wantVersions, wantQueued)
	}
	var killedFold string // the claim of the killed replica's fold, when it wrote its version
	if wantVersions > 0 {
		killedFold = versions[0].Metadata[tiered.MetaFold]
	}

	model := &tallied{}
	m, err := tiered.New(st, killOptions(model, 2))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	deadline := time.Now().Add(30 * time.Second)
	for len(queued()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("work still queued 30 s after the kill: %v", queued())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed at %s after %v; the work was done %v later", at, killed.Round(time.Millisecond), (time.Since(start) - killed).Round(time.Millisecond))

	h := foldcheck.Check(t, ctx, st, killedSession, replicaTrigger)
	if len(h.Versions) != 1 || h.Folded != 5 {
		t.Errorf("%d digest versions folding %d turns; want 1 folding 5", len(h.Versions), h.Folded)
	}
	if killedFold != "" && len(h.Versions) > 0 && h.Versions[0].Metadata[tiered.MetaFold] != killedFold {
		t.Errorf("the killed replica's digest version was replaced: its fold %q, now %q", killedFold, h.Versions[0].Metadata[tiered.MetaFold])
	}
	wantCalls := int64(1)
	if wantVersions > 0 {
		wantCalls = 0 // the fold is done: only its facts were left
	}
	if s, e := model.summaries.Load(), model.extractions.Load(); s != wantCalls || e != wantCalls {
		t.Errorf("the surviving replica made %d summaries and %d extractions; want %d of each", s, e, wantCalls)
	}
	if t.Failed() {
		all, _ := st.List(ctx, killedSession, memory.Query{Level: memory.LevelSession})
		var b strings.Builder
		for _, r := range all {
			fmt.Fprintf(&b, "\n  %s %s %q %v", r.Kind, r.Key, r.Content, r.Metadata)
		}
		t.Logf("the session's records:%s", b.String())
	}
}
