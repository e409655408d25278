package tiered_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/fs"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/tiers/tiered"
)

// words counts a text's tokens as its words, so the tests' budgets are
// easy to reason about.
type words struct{}

func (words) CountTokens(_ context.Context, s string) (int, error) {
	return len(strings.Fields(s)), nil
}

// counting is extract.Rules counting its calls: how many folds the
// models were asked for.
type counting struct {
	extract.Rules
	summaries, extractions atomic.Int64
}

func (c *counting) Summarize(ctx context.Context, previous string, turns []memory.Record) (string, extract.Usage, error) {
	c.summaries.Add(1)
	return c.Rules.Summarize(ctx, previous, turns)
}

func (c *counting) Extract(ctx context.Context, turns, known []memory.Record) ([]extract.Fact, extract.Usage, error) {
	c.extractions.Add(1)
	return c.Rules.Extract(ctx, turns, known)
}

// newWordMemory returns a Memory over a store on d that counts words as
// tokens.
func newWordMemory(t testing.TB, d driver.Driver, opt tiered.Options) (*tiered.Memory, *backend.Store) {
	t.Helper()
	st := backend.NewStore(d, backend.StoreOptions{Tokens: words{}})
	m, err := tiered.New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m, st
}

var alice = memory.Identity{Tenant: "acme", User: "alice", Agent: "helper", Session: "s1"}

// say appends one user turn of text.
func say(t testing.TB, m *tiered.Memory, id memory.Identity, text string) {
	t.Helper()
	if _, err := m.Append(context.Background(), id, tiered.Turn{Role: memory.RoleUser, Content: text}); err != nil {
		t.Fatalf("Append(%q): %v", text, err)
	}
}

func contents(recs []memory.Record) string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Content
	}
	return strings.Join(out, " | ")
}

// TestOptionsAndDrivers checks that options out of range and a driver
// without a work queue are refused at construction, with their classes.
func TestOptionsAndDrivers(t *testing.T) {
	open := tieredDrivers[0].Storage(t)
	st := backend.NewStore(open(), backend.StoreOptions{})
	for _, opt := range []tiered.Options{
		{Budget: -1}, {Target: 10, Trigger: 10}, {Trigger: 5000}, {Target: 3000, Trigger: 2000},
		{DigestRetention: -1}, {Workers: -2}, {Lease: time.Millisecond}, {FailureMode: 7}, {MaxTurns: memory.MaxBatch + 1},
	} {
		if _, err := tiered.New(st, opt); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("New(%+v): %v, want ErrInvalidArgument", opt, err)
		}
	}
	d, err := fs.Open(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := tiered.New(backend.NewStore(d, backend.StoreOptions{}), tiered.Options{}); !errors.Is(err, memory.ErrUnimplemented) {
		t.Errorf("New over the fs driver: %v, want ErrUnimplemented", err)
	}
}

// TestWindow checks the short-term window: the newest turns within the
// budget, oldest first; a smaller budget trims; the newest turn is kept
// even over budget; no session fails closed; another principal's turns
// in a session of the same id are not in it.
func TestWindow(t *testing.T) {
	forEachDriver(t, func(t *testing.T, open func() driver.Driver) {
		ctx := context.Background()
		m, _ := newWordMemory(t, open(), tiered.Options{Budget: 10, Trigger: 10, Target: 5, NoWorkers: true})
		for i := range 6 {
			say(t, m, alice, fmt.Sprintf("turn %d here", i)) // 3 words each
		}
		got, err := m.Window(ctx, alice, 0)
		if err != nil {
			t.Fatal(err)
		}
		if c := contents(got); c != "turn 3 here | turn 4 here | turn 5 here" {
			t.Errorf("window of budget 10: %s", c)
		}
		got, _ = m.Window(ctx, alice, 4)
		if c := contents(got); c != "turn 5 here" {
			t.Errorf("window of budget 4: %s", c)
		}
		got, _ = m.Window(ctx, alice, 1)
		if c := contents(got); c != "turn 5 here" {
			t.Errorf("window of budget 1 keeps the newest turn: %s", c)
		}
		for _, r := range got {
			if r.Tokens != 3 {
				t.Errorf("turn %q has cached token count %d, want 3", r.Content, r.Tokens)
			}
		}
		noSession := alice
		noSession.Session = ""
		if _, err := m.Append(ctx, noSession, tiered.Turn{Role: memory.RoleUser, Content: "hi"}); !errors.Is(err, memory.ErrIncompleteScope) {
			t.Errorf("Append without a session: %v", err)
		}
		if _, err := m.Window(ctx, noSession, 0); !errors.Is(err, memory.ErrIncompleteScope) {
			t.Errorf("Window without a session: %v", err)
		}
		bob := alice
		bob.User = "bob"
		if got, err := m.Window(ctx, bob, 0); err != nil || len(got) != 0 {
			t.Errorf("bob's window of alice's session id: %v, %v", contents(got), err)
		}
		for _, bad := range []tiered.Turn{{Role: "robot", Content: "x"}, {Role: memory.RoleUser, Content: "  "}, {Role: memory.RoleUser, Content: "\xff"}} {
			if _, err := m.Append(ctx, alice, bad); !errors.Is(err, memory.ErrInvalidArgument) {
				t.Errorf("Append(%+v): %v, want ErrInvalidArgument", bad, err)
			}
		}
		if got, _ := m.Window(ctx, alice, 0); len(got) != 3 {
			t.Errorf("refused turns were stored: %s", contents(got))
		}
	})
}

// waitFor polls cond until it holds, failing t after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFoldAndRecall checks folding end to end: passing the trigger folds
// the oldest turns into a digest version and facts in the background,
// down to the target; recall returns window, digest and the fact about
// what it asks, within its budget, rendered between the delimiters; and
// Forget erases every tier and says how much.
func TestFoldAndRecall(t *testing.T) {
	forEachDriver(t, func(t *testing.T, open func() driver.Driver) {
		ctx := context.Background()
		model := &counting{}
		m, _ := newWordMemory(t, open(), tiered.Options{Budget: 200, Trigger: 40, Target: 20, IdleFlush: -1, Settle: 100 * time.Millisecond,
			Summarizer: model, Extractor: model})
		lines := []string{
			"I live in Lisbon with two cats.",
			"My favourite food is grilled sardines.",
			"I work as a ferry engineer on the Tagus.",
			"We are planning a trip to the Azores in May.",
			"The weather was grey and windy all week long.",
			"I started learning the cello last winter.",
			"Our neighbour plays the accordion every evening.",
			"I think the new bridge looks quite elegant.",
		}
		for _, l := range lines {
			say(t, m, alice, l)
		}
		// Folded until no fold is due: in one fold, or, on a machine slow
		// enough that the turns came and settled one by one, in several.
		// A fold in flight has called the Summarizer and not yet stored
		// its version.
		unfolded := func() ([]memory.Record, int) {
			w, err := m.Window(ctx, alice, 0)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, r := range w {
				n += r.Tokens
			}
			return w, n
		}
		waitFor(t, "the folds", func() bool {
			_, n := unfolded()
			ds, _ := m.Digests(ctx, alice)
			return len(ds) > 0 && n <= 40 && model.summaries.Load() == int64(len(ds))
		})
		ds, err := m.Digests(ctx, alice)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(ds[0].Content, "Lisbon") {
			t.Errorf("digest does not carry the first turn: %q", ds[0].Content)
		}
		window, n := unfolded()
		folded := 0
		for _, d := range ds {
			k, _ := strconv.Atoi(d.Metadata[tiered.MetaFoldedTurns])
			folded += k
		}
		if n > 40 || len(window)+folded != len(lines) || window[len(window)-1].Content != lines[len(lines)-1] {
			t.Errorf("after the folds: window of %d turns, %d tokens (trigger 40), %d folded, of %d", len(window), n, folded, len(lines))
		}
		if v := int64(len(ds)); model.summaries.Load() != v || model.extractions.Load() != v {
			t.Errorf("%d folds made %d summaries and %d extractions, want one each a fold", v, model.summaries.Load(), model.extractions.Load())
		}
		waitFor(t, "the first fold's facts", func() bool {
			fs, _ := m.Facts().List(ctx, alice, memory.LevelSession, false)
			return slices.ContainsFunc(fs, func(r memory.Record) bool { return strings.Contains(r.Content, "Lisbon") })
		})
		rec, err := m.RecallWith(ctx, alice, "Where does she live?", tiered.RecallOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rec.Degraded || len(rec.Facts) == 0 || !strings.Contains(rec.Facts[0].Record.Content, "Lisbon") || rec.Digest == nil || len(rec.Window) != len(window) {
			t.Fatalf("recall: degraded %v %+v, facts %d, digest %v, window %d", rec.Degraded, rec.Errors, len(rec.Facts), rec.Digest != nil, len(rec.Window))
		}
		for _, budget := range []int{200, 25, 3} {
			small, err := m.RecallWith(ctx, alice, "Where does she live?", tiered.RecallOptions{Budget: budget})
			if err != nil {
				t.Fatal(err)
			}
			used := 0
			for _, r := range small.Window {
				used += r.Tokens
			}
			if small.Digest != nil {
				used += small.Digest.Tokens
			}
			for _, f := range small.Facts {
				used += f.Record.Tokens
			}
			if used > budget || budget == 200 && small.Digest == nil {
				t.Errorf("recall within %d tokens holds %d (digest %v)", budget, used, small.Digest != nil)
			}
		}
		if !strings.HasPrefix(rec.Text, tiered.BlockStart) || !strings.HasSuffix(rec.Text, tiered.BlockEnd) || rec.Tokens == 0 {
			t.Errorf("rendered block: %q (%d tokens)", rec.Text, rec.Tokens)
		}
		erased, err := m.Forget(ctx, alice, memory.LevelSession)
		if err != nil {
			t.Fatal(err)
		}
		if erased.Turns != int64(len(lines)) || erased.Digests != int64(len(ds)) || erased.Facts == 0 {
			t.Errorf("Forget erased %+v", erased)
		}
		rec, err = m.RecallWith(ctx, alice, "Where does she live?", tiered.RecallOptions{})
		if err != nil || rec.Text != "" || rec.Degraded {
			t.Errorf("recall after Forget: %q, %v", rec.Text, err)
		}
	})
}

// TestFoldsExactlyOnce runs two replicas of four workers each on one
// store (for SQLite and PostgreSQL, two driver handles on one database)
// while eight goroutines append to twelve sessions at once, and checks
// that every session ends folded below its trigger, with digest versions
// contiguous from 1, each folding the turns after the one before it and
// no turn twice, and as many model calls as versions: no fold was done
// twice.
func TestFoldsExactlyOnce(t *testing.T) {
	forEachDriver(t, func(t *testing.T, open func() driver.Driver) {
		ctx := context.Background()
		model := &counting{}
		opt := tiered.Options{Budget: 30, Trigger: 30, Target: 15, Workers: 4, IdleFlush: -1, DigestRetention: 1000, Settle: 500 * time.Millisecond, Summarizer: model, Extractor: model}
		m1, st := newWordMemory(t, open(), opt)
		m2, _ := newWordMemory(t, open(), opt)
		const sessions, turns = 12, 40
		who := func(s int) memory.Identity {
			id := alice
			id.Session = fmt.Sprintf("s%02d", s)
			return id
		}
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				m := m1
				if g%2 == 1 {
					m = m2
				}
				for i := range turns * sessions / 8 {
					k := g*turns*sessions/8 + i
					say(t, m, who(k%sessions), fmt.Sprintf("I noted item %d of the list today.", k))
				}
			})
		}
		wg.Wait()
		// unfolded returns the tokens of session s's turns after its
		// digest's boundary.
		unfolded := func(s int) int {
			all, err := st.List(ctx, who(s), memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindTurn}})
			if err != nil {
				t.Fatal(err)
			}
			d, ok, err := m1.Digest(ctx, who(s))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, r := range all { // newest first
				if ok && r.ID == d.Metadata[tiered.MetaThroughID] {
					break
				}
				n += r.Tokens
			}
			return n
		}
		for s := range sessions {
			waitFor(t, "session "+who(s).Session+" to fold below its trigger", func() bool { return unfolded(s) <= 30 })
		}
		versions := 0
		for s := range sessions {
			ds, err := m1.Digests(ctx, who(s))
			if err != nil {
				t.Fatal(err)
			}
			all, err := st.List(ctx, who(s), memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindTurn}})
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != turns {
				t.Fatalf("session %d holds %d turns, want %d", s, len(all), turns)
			}
			// Oldest first, and the turns in the order said.
			for i, j := 0, len(ds)-1; i < j; i, j = i+1, j-1 {
				ds[i], ds[j] = ds[j], ds[i]
			}
			for i, j := 0, len(all)-1; i < j; i, j = i+1, j-1 {
				all[i], all[j] = all[j], all[i]
			}
			pos := 0 // turns folded by the versions so far
			for i, d := range ds {
				if d.Key != fmt.Sprintf("%020d", i+1) {
					t.Fatalf("session %d: digest version %d has key %q: versions not contiguous", s, i+1, d.Key)
				}
				folded, _ := strconv.Atoi(d.Metadata[tiered.MetaFoldedTurns])
				pos += folded
				if pos > len(all) || all[pos-1].ID != d.Metadata[tiered.MetaThroughID] {
					t.Fatalf("session %d: version %d folds through %q, but its count puts the boundary at turn %d", s, i+1, d.Metadata[tiered.MetaThroughID], pos)
				}
			}
			versions += len(ds)
		}
		if versions == 0 {
			t.Fatal("nothing was folded")
		}
		if s, e := model.summaries.Load(), model.extractions.Load(); s != int64(versions) || e != int64(versions) {
			t.Errorf("%d digest versions stored, but %d summaries and %d extractions made: a fold was done twice", versions, s, e)
		}
	})
}

// TestFlushAndNewSession checks that Flush right after the turns are
// appended folds all of them but the newest, waiting for them to settle
// rather than stopping part-way, and that a new session's recall at the
// agent level carries on from the last session's digest, while one at
// the session level has none.
func TestFlushAndNewSession(t *testing.T) {
	forEachDriver(t, func(t *testing.T, open func() driver.Driver) {
		ctx := context.Background()
		m, _ := newWordMemory(t, open(), tiered.Options{Budget: 1000, IdleFlush: -1, Settle: 300 * time.Millisecond})
		for i := range 6 {
			say(t, m, alice, fmt.Sprintf("I packed item %d for the trip.", i))
			time.Sleep(50 * time.Millisecond) // settled at different times
		}
		if err := m.Flush(ctx, alice); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the flush to fold all turns but the newest", func() bool {
			w, err := m.Window(ctx, alice, 0)
			return err == nil && len(w) == 1
		})
		ds, err := m.Digests(ctx, alice)
		if err != nil || len(ds) == 0 {
			t.Fatalf("digests after the flush: %d, %v", len(ds), err)
		}
		next := alice
		next.Session = "s2"
		rec, err := m.RecallWith(ctx, next, "", tiered.RecallOptions{Level: memory.LevelAgent})
		if err != nil {
			t.Fatal(err)
		}
		if rec.Digest == nil || rec.Digest.Identity.Session != alice.Session || !strings.Contains(rec.Digest.Content, "item 4") {
			t.Fatalf("a new session's recall at the agent level: digest %+v", rec.Digest)
		}
		rec, err = m.RecallWith(ctx, next, "", tiered.RecallOptions{})
		if err != nil || rec.Digest != nil || rec.Text != "" {
			t.Fatalf("a new session's recall at the session level: digest %v, text %q, %v", rec.Digest != nil, rec.Text, err)
		}
	})
}

// TestForgetErasesQueuedWork checks that Forget erases the background
// work queued for the sessions it erases — a fold and an idle flush each
// — and no other session's.
func TestForgetErasesQueuedWork(t *testing.T) {
	forEachDriver(t, func(t *testing.T, open func() driver.Driver) {
		ctx := context.Background()
		m, _ := newWordMemory(t, open(), tiered.Options{Budget: 10, Trigger: 10, Target: 5, NoWorkers: true})
		bob := alice
		bob.User = "bob"
		for _, id := range []memory.Identity{alice, bob} {
			for i := range 4 {
				say(t, m, id, fmt.Sprintf("I packed item %d today.", i))
			}
		}
		erased, err := m.Forget(ctx, alice, memory.LevelSession)
		if err != nil {
			t.Fatal(err)
		}
		if erased.Work != 2 || erased.Turns != 4 {
			t.Errorf("Forget of alice's session erased %+v, want 2 jobs (a fold and an idle flush) and 4 turns", erased)
		}
		erased, err = m.Forget(ctx, bob, memory.LevelUser)
		if err != nil {
			t.Fatal(err)
		}
		if erased.Work != 2 || erased.Turns != 4 {
			t.Errorf("Forget of bob erased %+v, want his 2 jobs and 4 turns, untouched by alice's", erased)
		}
	})
}

// TestLaterSessionSupersedes checks that a fold in a later session
// supersedes what an earlier session's fold learned about the same
// slot: the agent-level recall then finds the new fact and not the old,
// which stays listable.
func TestLaterSessionSupersedes(t *testing.T) {
	forEachDriver(t, func(t *testing.T, open func() driver.Driver) {
		ctx := context.Background()
		m, _ := newWordMemory(t, open(), tiered.Options{Budget: 1000, IdleFlush: -1, Settle: time.Millisecond})
		later := alice
		later.Session = "s2"
		for _, s := range []struct {
			id    memory.Identity
			lines []string
		}{
			{alice, []string{"I live in Lisbon.", "The weather is fine."}},
			{later, []string{"I live in Porto now.", "The weather is fine."}},
		} {
			for _, l := range s.lines {
				say(t, m, s.id, l)
			}
			time.Sleep(2 * time.Millisecond)
			if err := m.Flush(ctx, s.id); err != nil {
				t.Fatal(err)
			}
			id := s.id
			waitFor(t, "the flush of "+id.Session, func() bool {
				w, err := m.Window(ctx, id, 0)
				fs, _ := m.Facts().List(ctx, id, memory.LevelSession, true)
				return err == nil && len(w) == 1 && len(fs) == 1
			})
		}
		rec, err := m.RecallWith(ctx, later, "Where does she live?", tiered.RecallOptions{Level: memory.LevelAgent})
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.Facts) != 1 || !strings.Contains(rec.Facts[0].Record.Content, "Porto") {
			t.Fatalf("recall after the later session: %d facts %v", len(rec.Facts), rec.Facts)
		}
		all, err := m.Facts().List(ctx, later, memory.LevelAgent, true)
		if err != nil || len(all) != 2 {
			t.Fatalf("facts with superseded ones: %d, %v", len(all), err)
		}
	})
}

// TestConcurrentAppendsQueueAFold checks that appends racing in one
// process all count towards the session's trigger: eight goroutines
// append a turn each to a session that holds one, taking it over its
// trigger, and a fold is queued (Forget finds it among the queued work).
func TestConcurrentAppendsQueueAFold(t *testing.T) {
	forEachDriver(t, func(t *testing.T, open func() driver.Driver) {
		ctx := context.Background()
		m, _ := newWordMemory(t, open(), tiered.Options{Budget: 40, Trigger: 40, Target: 20, NoWorkers: true, IdleFlush: -1})
		say(t, m, alice, "I packed the first bag.") // the window is read: 5 tokens
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() { say(t, m, alice, fmt.Sprintf("I packed bag %d today.", i)) }) // 5 tokens each
		}
		wg.Wait()
		erased, err := m.Forget(ctx, alice, memory.LevelSession)
		if err != nil {
			t.Fatal(err)
		}
		if erased.Turns != 9 || erased.Work != 1 {
			t.Errorf("after 45 tokens against a trigger of 40: erased %+v, want 9 turns and the queued fold", erased)
		}
	})
}

// TestAppendedFolding checks that an append reports the fold it queued:
// none while the session's unfolded turns stay within the trigger, one
// when they pass it, and the count of turns it stored.
func TestAppendedFolding(t *testing.T) {
	d := inmem.New(inmem.Options{})
	t.Cleanup(func() { _ = d.Close() })
	m, _ := newWordMemory(t, d, tiered.Options{Budget: 10, Trigger: 10, Target: 4, NoWorkers: true, IdleFlush: -1})
	ctx := context.Background()
	for i, c := range []struct {
		text    string
		folding bool
	}{
		{"one two three four", false},
		{"five six seven eight", false},
		{"nine ten eleven", true},
	} {
		got, err := m.Append(ctx, alice, tiered.Turn{Role: memory.RoleUser, Content: c.text}, tiered.Turn{Role: memory.RoleAssistant, Content: "ok"})
		if err != nil {
			t.Fatal(err)
		}
		if got.Folding != c.folding || got.Turns != 2 {
			t.Fatalf("append %d: got %+v, want Folding %v and 2 turns", i, got, c.folding)
		}
	}
}

// TestRemember checks that facts saved on purpose are stored once per
// writer, with its attribution, found by a recall, and that a bad text
// stores nothing.
func TestRemember(t *testing.T) {
	d := inmem.New(inmem.Options{})
	t.Cleanup(func() { _ = d.Close() })
	m, st := newWordMemory(t, d, tiered.Options{NoWorkers: true, IdleFlush: -1})
	ctx := context.Background()
	recs, err := m.Remember(ctx, alice, "Alice keeps bees in Lyon", "Alice's favourite tea is genmaicha")
	if err != nil {
		t.Fatal(err)
	}
	again, err := m.Remember(ctx, alice, "Alice keeps bees in Lyon")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || len(again) != 1 || again[0].ID != recs[0].ID || recs[0].Identity != alice || recs[0].Kind != memory.KindFact {
		t.Fatalf("Remember: %+v then %+v", recs, again)
	}
	if _, err := m.Remember(ctx, alice, "fine", "two\nlines"); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Fatalf("a fact of two lines: %v, want ErrInvalidArgument", err)
	}
	all, err := st.List(ctx, alice, memory.Query{Level: memory.LevelAgent, Kinds: []memory.Kind{memory.KindFact}})
	if err != nil || len(all) != 2 {
		t.Fatalf("facts stored: %d (%v), want 2", len(all), err)
	}
	got, err := m.RecallWith(ctx, alice, "where are the bees kept", tiered.RecallOptions{Level: memory.LevelAgent})
	if err != nil || len(got.Facts) == 0 || got.Facts[0].Record.ID != recs[0].ID {
		t.Fatalf("recall after Remember: %+v, %v", got.Facts, err)
	}
}

// TestAppendTurnIDs checks appends with turn ids: a repeated append
// stores nothing and says so, in this Memory or another on the same
// store; ids given to some turns only, repeated or out of order are
// refused.
func TestAppendTurnIDs(t *testing.T) {
	d := inmem.New(inmem.Options{})
	t.Cleanup(func() { _ = d.Close() })
	m, st := newWordMemory(t, d, tiered.Options{NoWorkers: true, IdleFlush: -1})
	other, _ := newWordMemory(t, d, tiered.Options{NoWorkers: true, IdleFlush: -1})
	ctx := context.Background()
	key := func(i int) string {
		return memory.ContentID(memory.KindTurn, alice, "request-1")[:24] + fmt.Sprintf("%08x", i)
	}
	turns := []tiered.Turn{{Role: memory.RoleUser, Content: "hello", ID: key(0)}, {Role: memory.RoleAssistant, Content: "hi there", ID: key(1)}}
	for i, mem := range []*tiered.Memory{m, m, other} {
		got, err := mem.Append(ctx, alice, turns...)
		if err != nil || got.Turns != 2 || got.Replayed != (i > 0) {
			t.Fatalf("append %d: %+v, %v; want 2 turns, replayed %v", i, got, err, i > 0)
		}
	}
	stored, err := st.List(ctx, alice, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindTurn}})
	if err != nil || len(stored) != 2 || stored[1].ID != key(0) || stored[0].Version != 1 {
		t.Fatalf("stored %+v (%v); want the two turns once, at version 1", stored, err)
	}
	for _, bad := range [][]tiered.Turn{
		{{Role: memory.RoleUser, Content: "a", ID: key(5)}, {Role: memory.RoleUser, Content: "b"}},
		{{Role: memory.RoleUser, Content: "a"}, {Role: memory.RoleUser, Content: "b", ID: key(6)}},
		{{Role: memory.RoleUser, Content: "a", ID: key(7)}, {Role: memory.RoleUser, Content: "b", ID: key(7)}},
		{{Role: memory.RoleUser, Content: "a", ID: key(9)}, {Role: memory.RoleUser, Content: "b", ID: key(8)}},
	} {
		if _, err := m.Append(ctx, alice, bad...); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("append %+v: %v, want ErrInvalidArgument", bad, err)
		}
	}
}

// TestRecallLeavesTiersOut checks RecallOptions' NoWindow, NoDigest and
// NoFacts: a tier left out is not in the recollection, and the budget it
// would have taken goes to the others.
func TestRecallLeavesTiersOut(t *testing.T) {
	d := inmem.New(inmem.Options{})
	t.Cleanup(func() { _ = d.Close() })
	m, _ := newWordMemory(t, d, tiered.Options{Budget: 40, Trigger: 40, Target: 20, NoWorkers: true, IdleFlush: -1})
	ctx := context.Background()
	if _, err := m.Remember(ctx, alice, "Alice keeps bees in the garden", "Alice keeps hives near the river", "Alice keeps honey in the cellar"); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		say(t, m, alice, fmt.Sprintf("turn %d about nothing in particular today", i))
	}
	all, err := m.RecallWith(ctx, alice, "where does alice keep bees hives honey", tiered.RecallOptions{Budget: 24})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Window) == 0 || len(all.Facts) == 0 || len(all.Facts) == 3 {
		t.Fatalf("the whole recall within 24 tokens: %d turns, %d facts; want both, and not every fact", len(all.Window), len(all.Facts))
	}
	facts, err := m.RecallWith(ctx, alice, "where does alice keep bees hives honey", tiered.RecallOptions{Budget: 24, NoWindow: true, NoDigest: true})
	if err != nil || len(facts.Window) != 0 || facts.Digest != nil || len(facts.Facts) != 3 {
		t.Fatalf("facts alone within 24 tokens: %d turns, digest %v, %d facts (%v); want every fact", len(facts.Window), facts.Digest != nil, len(facts.Facts), err)
	}
	if !strings.Contains(facts.Text, "Alice keeps honey") || strings.Contains(facts.Text, "turn 3") {
		t.Fatalf("facts alone render %q", facts.Text)
	}
	window, err := m.RecallWith(ctx, alice, "where does alice keep bees hives honey", tiered.RecallOptions{NoFacts: true})
	if err != nil || len(window.Facts) != 0 || len(window.Window) != 4 {
		t.Fatalf("without facts: %d facts, %d turns (%v)", len(window.Facts), len(window.Window), err)
	}
}
