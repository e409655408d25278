package tiers_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/internal/tokens"
	"github.com/agentmem/memory/tiers"
)

func step(i int) tiers.Step {
	return tiers.Step{Workflow: "wf", Name: fmt.Sprintf("step-%d", i), Input: fmt.Sprintf("in %d", i), Output: fmt.Sprintf("out %d", i)}
}

func line(i int) string { return fmt.Sprintf("[wf/step-%d] Task: in %d | Result: out %d", i, i, i) }

func block(lines ...string) string {
	return "[Previous execution context]\n" + strings.Join(lines, "\n") + "\n\n[Current task follows]\n"
}

func mustSave(t *testing.T, m tiers.StepMemory, id memory.Identity, s tiers.Step) {
	t.Helper()
	if err := m.Save(context.Background(), id, s); err != nil {
		t.Fatalf("Save(%v): %v", s, err)
	}
}

func mustRecall(t *testing.T, m tiers.StepMemory, id memory.Identity) memory.Recollection {
	t.Helper()
	r, err := m.Recall(context.Background(), id, "")
	if err != nil {
		t.Fatalf("Recall: %v", err)
	}
	return r
}

func TestSummaryRecallBlock(t *testing.T) {
	clock := newClock()
	s, st := newSummary(t, clock, tiers.SummaryOptions{})
	ctx := context.Background()

	r := mustRecall(t, s, alice)
	if diff := cmp.Diff(memory.Recollection{}, r, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("first recall, want empty (-want +got):\n%s", diff)
	}

	mustSave(t, s, alice, tiers.Step{Workflow: "nightly-scan", Name: "check-pods", Input: "List failing pods\nin ai-agents", Output: "3 pods in CrashLoopBackOff"})
	clock.Advance(time.Minute)
	mustSave(t, s, alice, tiers.Step{Workflow: "nightly-scan", Name: "report", Input: "Summarise", Output: "Sent report"})

	r, err := s.Recall(ctx, alice, "")
	if err != nil {
		t.Fatal(err)
	}
	want := "[Previous execution context]\n" +
		"[nightly-scan/check-pods] Task: List failing pods in ai-agents | Result: 3 pods in CrashLoopBackOff\n" +
		"[nightly-scan/report] Task: Summarise | Result: Sent report\n" +
		"\n" +
		"[Current task follows]\n"
	if r.Text != want {
		t.Fatalf("Text =\n%s\nwant\n%s", r.Text, want)
	}
	if len(r.Records) != 2 || r.Records[0].Key != "nightly-scan/check-pods" || r.Records[1].Key != "nightly-scan/report" {
		t.Fatalf("records not oldest first with step keys: %+v", r.Records)
	}
	for _, rec := range r.Records {
		wantRec := memory.Record{Kind: memory.KindSummary, Identity: alice} // and no expiry
		if diff := cmp.Diff(wantRec, rec, cmpopts.IgnoreFields(memory.Record{}, "ID", "Label", "Key", "Content", "Metadata", "Created", "Tokens", "Version", "Vector")); diff != "" {
			t.Fatalf("unexpected record (-want +got):\n%s", diff)
		}
		if rec.Tokens == 0 {
			t.Fatalf("record %s has no token count", rec.Key)
		}
	}
	if got := len(stored(t, st, alice)); got != 2 {
		t.Fatalf("%d records stored, want 2", got)
	}
}

func TestSummaryMaxEntriesDropsOldest(t *testing.T) {
	for _, tc := range []struct{ opt, want int }{{0, tiers.DefaultMaxEntries}, {3, 3}, {1, 1}} {
		t.Run(fmt.Sprint(tc.opt), func(t *testing.T) {
			clock := newClock()
			clock.tick = time.Second
			s, st := newSummary(t, clock, tiers.SummaryOptions{MaxEntries: tc.opt})
			const saves = 14
			for i := 1; i <= saves; i++ {
				mustSave(t, s, alice, step(i))
				if n := len(stored(t, st, alice)); n != min(i, tc.want) {
					t.Fatalf("after save %d: %d records stored, want %d", i, n, min(i, tc.want))
				}
			}
			var want []string
			for i := saves - tc.want + 1; i <= saves; i++ {
				want = append(want, line(i))
			}
			if got := mustRecall(t, s, alice).Text; got != block(want...) {
				t.Fatalf("recall =\n%s\nwant\n%s", got, block(want...))
			}
		})
	}
}

func TestSummaryMaxEntriesLowered(t *testing.T) {
	clock := newClock()
	clock.tick = time.Second
	st := newStore(t, clock)
	wide, err := tiers.NewSummary(st, tiers.SummaryOptions{MaxEntries: 8})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 8; i++ {
		mustSave(t, wide, alice, step(i))
	}
	narrow, err := tiers.NewSummary(st, tiers.SummaryOptions{MaxEntries: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Recall honours the new limit before any prune.
	if got := mustRecall(t, narrow, alice).Text; got != block(line(7), line(8)) {
		t.Fatalf("recall = %q", got)
	}
	mustSave(t, narrow, alice, step(9))
	if n := len(stored(t, st, alice)); n != 2 {
		t.Fatalf("%d records stored after prune, want 2", n)
	}
	if got := mustRecall(t, narrow, alice).Text; got != block(line(8), line(9)) {
		t.Fatalf("recall = %q", got)
	}
}

func TestSummaryTTL(t *testing.T) {
	clock := newClock()
	s, st := newSummary(t, clock, tiers.SummaryOptions{TTL: 7 * 24 * time.Hour})
	mustSave(t, s, alice, step(1))
	recs := stored(t, st, alice)
	if len(recs) != 1 || !recs[0].Expires.Equal(recs[0].Created.Add(7*24*time.Hour)) {
		t.Fatalf("record not written with Expires = Created + TTL: %+v", recs)
	}
	clock.Advance(6 * 24 * time.Hour)
	mustSave(t, s, alice, step(2))
	if got := mustRecall(t, s, alice).Text; got != block(line(1), line(2)) {
		t.Fatalf("within ttl: %q", got)
	}
	clock.Advance(24*time.Hour - time.Nanosecond)
	if got := mustRecall(t, s, alice).Text; got != block(line(1), line(2)) {
		t.Fatalf("one nanosecond before expiry: %q", got)
	}
	clock.Advance(time.Nanosecond)
	if got := mustRecall(t, s, alice).Text; got != block(line(2)) {
		t.Fatalf("at expiry of the first: %q", got)
	}
	clock.Advance(7 * 24 * time.Hour)
	if diff := cmp.Diff(memory.Recollection{}, mustRecall(t, s, alice)); diff != "" {
		t.Fatalf("after expiry of both, want empty (-want +got):\n%s", diff)
	}
}

func TestSummaryTTLShortened(t *testing.T) {
	clock := newClock()
	st := newStore(t, clock)
	long, err := tiers.NewSummary(st, tiers.SummaryOptions{TTL: 7 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	noTTL, err := tiers.NewSummary(st, tiers.SummaryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustSave(t, long, alice, step(1))  // expires in 7 days
	mustSave(t, noTTL, alice, step(2)) // never expires
	clock.Advance(2 * time.Hour)
	mustSave(t, long, alice, step(3))

	short, err := tiers.NewSummary(st, tiers.SummaryOptions{TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// Records stored under a longer TTL, or none, are judged by age.
	if got := mustRecall(t, short, alice).Text; got != block(line(3)) {
		t.Fatalf("recall with shortened ttl = %q", got)
	}
	// Saving under the short TTL discards the stale records from storage.
	mustSave(t, short, alice, step(4))
	recs := stored(t, st, alice)
	var keys []string
	for _, r := range recs {
		keys = append(keys, r.Key)
	}
	if !slices.Equal(keys, []string{"wf/step-4", "wf/step-3"}) {
		t.Fatalf("stored after save = %v", keys)
	}
}

func TestSummaryMaxContextTokens(t *testing.T) {
	var counter tokens.Counter
	frame := countTokens(t, counter, "[Previous execution context]\n\n[Current task follows]\n")
	per := make([]int, 6)
	for i := 1; i <= 5; i++ {
		per[i] = countTokens(t, counter, line(i)) + 1
	}
	cases := []struct {
		budget int
		want   []int
	}{
		{0, []int{1, 2, 3, 4, 5}},
		{frame + per[5] + per[4] + per[3], []int{3, 4, 5}},
		{frame + per[5] + per[4] + per[3] - 1, []int{4, 5}},
		{frame + per[5], []int{5}},
		{frame + per[5] - 1, nil},
		{1, nil},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.budget), func(t *testing.T) {
			clock := newClock()
			clock.tick = time.Second
			s, _ := newSummary(t, clock, tiers.SummaryOptions{MaxContextTokens: tc.budget})
			for i := 1; i <= 5; i++ {
				mustSave(t, s, alice, step(i))
			}
			r := mustRecall(t, s, alice)
			if tc.want == nil {
				if diff := cmp.Diff(memory.Recollection{}, r); diff != "" {
					t.Fatalf("recall, want empty (-want +got):\n%s", diff)
				}
				return
			}
			var lines []string
			for _, i := range tc.want {
				lines = append(lines, line(i))
			}
			if r.Text != block(lines...) {
				t.Fatalf("recall =\n%s\nwant\n%s", r.Text, block(lines...))
			}
			if tc.budget > 0 {
				if n := countTokens(t, counter, r.Text); n > tc.budget {
					t.Fatalf("rendered block is %d tokens, over the budget of %d", n, tc.budget)
				}
			}
		})
	}
}

func TestSummaryUsesCachedTokens(t *testing.T) {
	clock := newClock()
	clock.tick = time.Second
	counter := &countingCounter{}
	st := backend.NewStore(inmem.New(inmem.Options{Clock: clock.Now}), backend.StoreOptions{Clock: clock.Now, Tokens: counter})
	s, err := tiers.NewSummary(st, tiers.SummaryOptions{MaxContextTokens: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		mustSave(t, s, alice, step(i))
	}
	before := counter.calls.Load()
	r := mustRecall(t, s, alice)
	if r.Text != block(line(1), line(2), line(3)) {
		t.Fatalf("recall = %q", r.Text)
	}
	if after := counter.calls.Load(); after != before+1 {
		t.Fatalf("Recall counted tokens %d times, want 1 (the block, for Tokens); the lines' cached counts should be used", after-before)
	}
	if want := countTokens(t, tokens.Counter{}, r.Text); r.Tokens != want {
		t.Fatalf("Tokens = %d, want %d", r.Tokens, want)
	}
	// A record written elsewhere without a count is counted on read.
	legacy := memory.NewSummary(alice, "wf/legacy", "[wf/legacy] Task: a | Result: b", clock.Now())
	if err := st.Driver().Put(context.Background(), []memory.Record{legacy}); err != nil {
		t.Fatal(err)
	}
	before = counter.calls.Load()
	mustRecall(t, s, alice)
	if after := counter.calls.Load(); after != before+2 {
		t.Fatalf("Recall counted %d times, want 2 (the uncounted record, the block)", after-before)
	}
}

func TestSummaryConcurrentSaves(t *testing.T) {
	for _, maxEntries := range []int{1, 5, 10} {
		t.Run(fmt.Sprint(maxEntries), func(t *testing.T) {
			clock := newClock()
			clock.tick = time.Millisecond
			rec := &recordingDriver{Driver: inmem.New(inmem.Options{Clock: clock.Now}), jitter: 200 * time.Microsecond}
			st := backend.NewStore(rec, backend.StoreOptions{Clock: clock.Now})
			s, err := tiers.NewSummary(st, tiers.SummaryOptions{MaxEntries: maxEntries})
			if err != nil {
				t.Fatal(err)
			}
			const workers, each = 8, 25
			var wg sync.WaitGroup
			errs := make(chan error, workers*each)
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						if err := s.Save(context.Background(), alice, step(w*each+i)); err != nil {
							errs <- err
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			all := slices.Clone(rec.all)
			if len(all) != workers*each {
				t.Fatalf("%d records written, want %d", len(all), workers*each)
			}
			sort.Slice(all, func(i, j int) bool { return driver.Newer(all[i], all[j]) })
			var want []string
			for _, r := range all[:maxEntries] {
				want = append(want, r.ID)
			}
			var got []string
			for _, r := range stored(t, st, alice) {
				got = append(got, r.ID)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("stored %d records %v, want the newest %d %v", len(got), got, maxEntries, want)
			}
		})
	}
}

func TestSummaryIsolation(t *testing.T) {
	clock := newClock()
	clock.tick = time.Second
	s, _ := newSummary(t, clock, tiers.SummaryOptions{MaxEntries: 2})
	otherAgent := memory.Identity{User: "alice", Agent: "kaos://agent/ai/reviewer", Session: "run-1"}
	otherTenant := alice
	otherTenant.Tenant = "acme"

	mustSave(t, s, alice, step(1))
	mustSave(t, s, bob, step(2))
	mustSave(t, s, otherAgent, step(3))
	mustSave(t, s, otherTenant, step(4))
	for i := 5; i <= 7; i++ {
		mustSave(t, s, bob, step(i)) // bob's pruning never touches alice's entries
	}

	checks := []struct {
		name string
		id   memory.Identity
		want string
	}{
		{"alice", alice, block(line(1))},
		{"bob", bob, block(line(6), line(7))},
		{"other agent", otherAgent, block(line(3))},
		{"other tenant", otherTenant, block(line(4))},
		{"alice in another session", memory.Identity{User: "alice", Agent: alice.Agent, Session: "run-9"}, block(line(1))},
		{"alicia", memory.Identity{User: "alicia", Agent: alice.Agent}, ""},
	}
	for _, c := range checks {
		if got := mustRecall(t, s, c.id).Text; got != c.want {
			t.Errorf("%s recalled %q, want %q", c.name, got, c.want)
		}
	}
}

func TestSummaryLevelOption(t *testing.T) {
	clock := newClock()
	clock.tick = time.Second
	s, _ := newSummary(t, clock, tiers.SummaryOptions{Level: memory.LevelSession})
	mustSave(t, s, alice, step(1))
	if got := mustRecall(t, s, alice).Text; got != block(line(1)) {
		t.Fatalf("same session: %q", got)
	}
	nextRun := alice
	nextRun.Session = "run-2"
	if got := mustRecall(t, s, nextRun).Text; got != "" {
		t.Fatalf("another session recalled %q", got)
	}
}

func TestSummaryIgnoresOtherKinds(t *testing.T) {
	clock := newClock()
	clock.tick = time.Second
	s, st := newSummary(t, clock, tiers.SummaryOptions{MaxEntries: 1})
	digest := memory.Record{ID: memory.NewID(clock.Now()), Kind: memory.KindDigest, Content: "The user is debugging pods.", Created: clock.Now()}
	if err := st.Add(context.Background(), alice, digest); err != nil {
		t.Fatal(err)
	}
	mustSave(t, s, alice, step(1))
	mustSave(t, s, alice, step(2))
	if got := mustRecall(t, s, alice).Text; got != block(line(2)) {
		t.Fatalf("recall = %q", got)
	}
	all := memory.Query{Level: memory.LevelAgent}
	recs, err := st.List(context.Background(), alice, all)
	if err != nil || len(recs) != 2 || recs[1].ID != digest.ID {
		t.Fatalf("the digest was pruned or steps were kept: %+v", recs)
	}
	n, err := s.Forget(context.Background(), alice, memory.LevelAgent)
	if err != nil || n != 1 {
		t.Fatalf("Forget = %d, %v; want 1", n, err)
	}
	if recs, _ := st.List(context.Background(), alice, all); len(recs) != 1 || recs[0].ID != digest.ID {
		t.Fatalf("Forget touched the digest: %+v", recs)
	}
}

func TestSummaryForget(t *testing.T) {
	clock := newClock()
	clock.tick = time.Second
	s, st := newSummary(t, clock, tiers.SummaryOptions{TTL: time.Hour})
	mustSave(t, s, alice, step(1))
	mustSave(t, s, bob, step(2))
	clock.Advance(2 * time.Hour) // alice's first summary expires, unswept
	mustSave(t, s, alice, step(3))

	// Erasure removes what is stored, expired or not: both of alice's.
	n, err := s.Forget(context.Background(), alice, memory.LevelUser)
	if err != nil || n != 2 {
		t.Fatalf("Forget = %d, %v; want 2", n, err)
	}
	if r := mustRecall(t, s, alice); r.Text != "" {
		t.Fatalf("recalled after Forget: %q", r.Text)
	}
	// Bob's expired summary is not alice's to forget: it is still stored.
	if left, _ := st.Driver().(driver.Sweeper).Sweep(context.Background()); left != 1 {
		t.Fatalf("sweep after Forget removed %d, want bob's 1", left)
	}
	if _, err := s.Forget(context.Background(), memory.Identity{Agent: alice.Agent}, memory.LevelUser); !errors.Is(err, memory.ErrIncompleteScope) {
		t.Fatalf("Forget without a user at user level = %v, want ErrIncompleteScope", err)
	}
}

func TestSummaryIncompleteScope(t *testing.T) {
	clock := newClock()
	s, st := newSummary(t, clock, tiers.SummaryOptions{})
	noAgent := memory.Identity{User: "alice", Session: "run-1"}
	if err := s.Save(context.Background(), noAgent, step(1)); !errors.Is(err, memory.ErrIncompleteScope) {
		t.Fatalf("Save without agent = %v, want ErrIncompleteScope", err)
	}
	if _, err := s.Recall(context.Background(), noAgent, ""); !errors.Is(err, memory.ErrIncompleteScope) {
		t.Fatalf("Recall without agent = %v, want ErrIncompleteScope", err)
	}
	recs, err := st.List(context.Background(), noAgent, memory.Query{Level: memory.LevelUser})
	if err != nil || len(recs) != 0 {
		t.Fatalf("something was written: %v, %v", recs, err)
	}
}

func TestSummaryInvalidArguments(t *testing.T) {
	clock := newClock()
	st := newStore(t, clock)
	bad := []tiers.SummaryOptions{
		{MaxEntries: -1},
		{TTL: -time.Second},
		{MaxContextTokens: -1},
		{Level: "team"},
	}
	for _, opt := range bad {
		if s, err := tiers.NewSummary(st, opt); !errors.Is(err, memory.ErrInvalidArgument) || s != nil {
			t.Errorf("NewSummary(%+v) = %v, %v; want ErrInvalidArgument", opt, s, err)
		}
	}
	if _, err := tiers.NewSummary(nil, tiers.SummaryOptions{}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("NewSummary(nil) = %v, want ErrInvalidArgument", err)
	}
	s, err := tiers.NewSummary(st, tiers.SummaryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(context.Background(), alice, tiers.Step{Workflow: "a/b", Name: "s"}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Fatalf("Save with a bad workflow = %v", err)
	}
	if err := s.Save(context.Background(), memory.Identity{Agent: " x"}, step(1)); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Fatalf("Save with a malformed identity = %v", err)
	}
	if n := len(stored(t, st, alice)); n != 0 {
		t.Fatalf("%d records written by failed saves", n)
	}
}

func TestSummaryContextAndClose(t *testing.T) {
	clock := newClock()
	s, st := newSummary(t, clock, tiers.SummaryOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Save(ctx, alice, step(1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Save = %v, want context.Canceled", err)
	}
	if _, err := s.Recall(ctx, alice, ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("Recall = %v, want context.Canceled", err)
	}
	if _, err := s.Forget(ctx, alice, memory.LevelAgent); !errors.Is(err, context.Canceled) {
		t.Fatalf("Forget = %v, want context.Canceled", err)
	}
	if n := len(stored(t, st, alice)); n != 0 {
		t.Fatalf("%d records written under a cancelled context", n)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(context.Background(), alice, step(1)); !errors.Is(err, memory.ErrClosed) {
		t.Fatalf("Save after Close = %v, want ErrClosed", err)
	}
	if _, err := s.Recall(context.Background(), alice, ""); !errors.Is(err, memory.ErrClosed) {
		t.Fatalf("Recall after Close = %v, want ErrClosed", err)
	}
}
