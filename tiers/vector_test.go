package tiers_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/internal/lexical"
	"github.com/agentmem/memory/internal/tokens"
	"github.com/agentmem/memory/tiers"
)

var (
	monitor   = memory.Identity{Tenant: "acme", Agent: "kaos://agent/ai/monitor", Session: "run-1"}
	retriever = memory.Identity{Tenant: "acme", Agent: "kaos://agent/ai/retriever", Session: "run-1"}
)

// newVector opens vector memory in a fresh temporary directory (unless
// opt names one) with a fresh store on clock.
func newVector(t *testing.T, clock *fakeClock, opt tiers.VectorOptions) *tiers.Vector {
	t.Helper()
	return vectorOn(t, newStore(t, clock), opt)
}

// vectorOn opens vector memory over st in a fresh temporary directory
// (unless opt names one).
func vectorOn(t *testing.T, st *backend.Store, opt tiers.VectorOptions) *tiers.Vector {
	t.Helper()
	if opt.Dir == "" {
		opt.Dir = t.TempDir()
	}
	v, err := tiers.NewVector(context.Background(), st, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = v.Close() })
	return v
}

func vstep(i int) tiers.Step {
	return tiers.Step{Workflow: "nightly", Name: "scan", Input: fmt.Sprintf("scan number %d", i), Output: fmt.Sprintf("finding %d: all quiet", i)}
}

func saveSteps(t *testing.T, v *tiers.Vector, id memory.Identity, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := v.Save(context.Background(), id, vstep(i)); err != nil {
			t.Fatal(err)
		}
	}
}

// entryFiles lists the .txt files in dir, sorted.
func entryFiles(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	slices.Sort(names)
	return names
}

func recallLines(t *testing.T, v *tiers.Vector, id memory.Identity) []string {
	t.Helper()
	rec, err := v.Recall(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rec.Records {
		out = append(out, r.Content)
	}
	return out
}

func TestVectorSaveThenRecallNextStep(t *testing.T) {
	clock := newClock()
	clock.tick = time.Second
	v := newVector(t, clock, tiers.VectorOptions{})
	ctx := context.Background()

	rec, err := v.Recall(ctx, monitor, "")
	if err != nil {
		t.Fatalf("first step's Recall: %v", err)
	}
	if diff := cmp.Diff(memory.Recollection{}, rec, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("first step recalls, want nothing (-want +got):\n%s", diff)
	}
	saveSteps(t, v, monitor, 0, 3)

	next := monitor
	next.Session = "run-2"
	rec, err = v.Recall(ctx, next, "")
	if err != nil {
		t.Fatal(err)
	}
	want := "[Previous execution context]\n" +
		"[nightly/scan] Task: scan number 0 | Result: finding 0: all quiet\n" +
		"[nightly/scan] Task: scan number 1 | Result: finding 1: all quiet\n" +
		"[nightly/scan] Task: scan number 2 | Result: finding 2: all quiet\n" +
		"\n[Current task follows]\n"
	if rec.Text != want {
		t.Fatalf("recalled\n%s\nwant\n%s", rec.Text, want)
	}
	files := entryFiles(t, v.Dir())
	if len(files) != 3 {
		t.Fatalf("directory holds %d entries, want 3: %v", len(files), files)
	}
	for i, r := range rec.Records {
		if r.ID != files[i] {
			t.Errorf("record %d is entry %s, want %s (names sort by time)", i, r.ID, files[i])
		}
		wantRec := memory.Record{Kind: memory.KindSummary, Identity: monitor, Key: "nightly/scan"}
		if diff := cmp.Diff(wantRec, r, cmpopts.IgnoreFields(memory.Record{}, "ID", "Label", "Content", "Metadata", "Created", "Expires", "Tokens", "Version", "Vector")); diff != "" {
			t.Errorf("record %d (-want +got):\n%s", i, diff)
		}
		if r.Tokens == 0 {
			t.Errorf("record %d has no token count", i)
		}
		data, err := os.ReadFile(filepath.Join(v.Dir(), r.ID))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(string(data), "\n\n"+r.Content+"\n") {
			t.Errorf("entry file %s ends %q, want the text", r.ID, data)
		}
	}
}

func TestVectorRecallBudgetExact(t *testing.T) {
	clock := newClock()
	clock.tick = time.Millisecond
	counter := tokens.Counter{}
	frame := countTokens(t, counter, "[Previous execution context]\n\n[Current task follows]\n")
	// Find a budget that admits exactly 7 of 20 entries, then check the
	// edges one token either side.
	lineTokens := func(i int) int { return countTokens(t, counter, vstep(i).Summary()) + 1 }
	budget := frame
	for i := 19; i >= 13; i-- {
		budget += lineTokens(i)
	}
	for _, tc := range []struct {
		budget int
		want   int
	}{{budget, 7}, {budget - 1, 6}, {budget + lineTokens(12) - 1, 7}, {budget + lineTokens(12), 8}} {
		v := newVector(t, clock, tiers.VectorOptions{MaxContextTokens: tc.budget})
		saveSteps(t, v, monitor, 0, 20)
		rec, err := v.Recall(context.Background(), monitor, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.Records) != tc.want {
			t.Fatalf("budget %d: %d entries, want %d", tc.budget, len(rec.Records), tc.want)
		}
		for i, r := range rec.Records { // the newest, unbroken, oldest first
			if want := vstep(20 - tc.want + i).Summary(); r.Content != want {
				t.Errorf("budget %d: line %d = %q, want %q", tc.budget, i, r.Content, want)
			}
		}
		if n := countTokens(t, counter, rec.Text); n > tc.budget {
			t.Errorf("budget %d: block is %d tokens", tc.budget, n)
		}
	}
}

func TestVectorPruneMaxEntries(t *testing.T) {
	clock := newClock()
	clock.tick = time.Millisecond
	v := newVector(t, clock, tiers.VectorOptions{MaxEntries: 3})
	saveSteps(t, v, monitor, 0, 5)
	saveSteps(t, v, retriever, 0, 2) // another scope, pruned on its own
	if n := len(entryFiles(t, v.Dir())); n != 5 {
		t.Fatalf("%d entry files, want 3 + 2", n)
	}
	got := recallLines(t, v, monitor)
	want := []string{vstep(2).Summary(), vstep(3).Summary(), vstep(4).Summary()}
	if !slices.Equal(got, want) {
		t.Fatalf("recalled %q, want %q", got, want)
	}
	if got := recallLines(t, v, retriever); len(got) != 2 {
		t.Fatalf("retriever recalls %d entries, want 2", len(got))
	}
}

func TestVectorPruneTTL(t *testing.T) {
	clock := newClock()
	ttl, err := tiers.ParseTTL("1h")
	if err != nil {
		t.Fatal(err)
	}
	v := newVector(t, clock, tiers.VectorOptions{TTL: ttl})
	saveSteps(t, v, monitor, 0, 2)
	clock.Advance(30 * time.Minute)
	saveSteps(t, v, monitor, 2, 3)
	clock.Advance(40 * time.Minute) // the first two are now 70 minutes old
	if got := recallLines(t, v, monitor); !slices.Equal(got, []string{vstep(2).Summary()}) {
		t.Fatalf("recalled %q, want only the entry younger than the ttl", got)
	}
	if ms, err := v.Search(context.Background(), monitor, "scan", 10); err != nil || len(ms) != 1 {
		t.Fatalf("search finds %v, %v; want the one live entry", ms, err)
	}
	if n := len(entryFiles(t, v.Dir())); n != 3 {
		t.Fatalf("%d files before the next save, want 3", n)
	}
	saveSteps(t, v, monitor, 3, 4) // Save prunes the expired entries
	if n := len(entryFiles(t, v.Dir())); n != 2 {
		t.Fatalf("%d files after the save, want 2", n)
	}
}

func TestVectorDefaultsPrune(t *testing.T) {
	// The zero options prune: the TTL default removes entries older than
	// DefaultVectorTTL on the next Save.
	clock := newClock()
	v := newVector(t, clock, tiers.VectorOptions{})
	saveSteps(t, v, monitor, 0, 1)
	clock.Advance(tiers.DefaultVectorTTL)
	saveSteps(t, v, monitor, 1, 2)
	if files := entryFiles(t, v.Dir()); len(files) != 1 {
		t.Fatalf("default pruning left %d entries, want 1", len(files))
	}
}

func TestVectorScopeIsolation(t *testing.T) {
	clock := newClock()
	clock.tick = time.Millisecond
	dir := t.TempDir()
	a := newVector(t, clock, tiers.VectorOptions{Dir: dir})
	b := newVector(t, clock, tiers.VectorOptions{Dir: dir}) // a second agent's process on the same PVC
	ctx := context.Background()
	if err := a.Save(ctx, monitor, tiers.Step{Workflow: "w", Name: "s", Input: "secret plans", Output: "secret result"}); err != nil {
		t.Fatal(err)
	}
	others := []memory.Identity{
		retriever,
		{Tenant: "other", Agent: monitor.Agent, Session: "run-1"},       // same agent, other tenant
		{Tenant: "acme", Agent: monitor.Agent + "x", Session: "run-1"},  // exact match only
		{Tenant: "acme", User: "mallory", Agent: monitor.Agent},         // a user binds the scope
		{Tenant: "acme", Agent: strings.TrimSuffix(monitor.Agent, "r")}, // a prefix is not a match
	}
	for _, other := range others {
		rec, err := b.Recall(ctx, other, "")
		if err != nil || rec.Text != "" {
			t.Errorf("%+v recalls %q, %v; want nothing", other, rec.Text, err)
		}
		ms, err := b.Search(ctx, other, "secret", 10)
		if err != nil || len(ms) != 0 {
			t.Errorf("%+v finds %v, %v; want nothing", other, ms, err)
		}
		if n, err := b.Forget(ctx, other, memory.LevelAgent); err != nil || n != 0 {
			t.Errorf("%+v forgets %d, %v; want 0", other, n, err)
		}
	}
	if got := recallLines(t, b, monitor); len(got) != 1 {
		t.Fatalf("the writer's own scope recalls %d entries through another Vector, want 1", len(got))
	}
	if _, err := b.Recall(ctx, memory.Identity{Tenant: "acme", Session: "run-1"}, ""); !errors.Is(err, memory.ErrIncompleteScope) {
		t.Fatalf("recall without an agent: %v, want ErrIncompleteScope", err)
	}
}

func TestVectorLeftoversIgnoredAndCleaned(t *testing.T) {
	clock := newClock()
	clock.tick = time.Millisecond
	dir := t.TempDir()
	v := newVector(t, clock, tiers.VectorOptions{Dir: dir})
	saveSteps(t, v, monitor, 0, 2)

	// A crash mid-write: a half-written temporary file, an entry-like file
	// that was never indexed, a torn index line, and stray files.
	tmp := filepath.Join(dir, ".tmp", "0123abcd")
	if err := os.WriteFile(tmp, []byte("agentmem-vector-entry 1\ntenant=acme\nag"), 0o640); err != nil {
		t.Fatal(err)
	}
	stray := "0000000000000000001-00000001-0000000000000000.txt"
	if err := os.WriteFile(filepath.Join(dir, stray), []byte("partial"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not an entry"), 0o640); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, ".index"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A writer that died after appending its index line, before the rename.
	ghost := "+\t9000000000000000000-00000001-0000000000000000.txt\t5\tacme\t\t" + monitor.Agent + "\t\t\trun-1\tnightly/scan\n"
	if _, err := f.WriteString(ghost + "+\t9999999999999999999-00000001-00000000"); err != nil {
		t.Fatal(err)
	}
	f.Close()

	if got := recallLines(t, v, monitor); len(got) != 2 {
		t.Fatalf("recalled %q with leftovers present, want the 2 entries", got)
	}
	again := newVector(t, clock, tiers.VectorOptions{Dir: dir}) // a new process starts
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatalf("leftover temporary file still there: %v", err)
	}
	saveSteps(t, again, monitor, 2, 3) // appends after the torn line
	if got := recallLines(t, again, monitor); len(got) != 3 {
		t.Fatalf("recalled %q after the torn line, want 3 entries", got)
	}
	if ms, err := again.Search(context.Background(), monitor, "scan", 10); err != nil || len(ms) != 3 {
		t.Fatalf("search: %v, %v; want the 3 entries", ms, err)
	}
	// Rebuild from the directory: the stray files are not entries.
	if err := again.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := recallLines(t, again, monitor); len(got) != 3 {
		t.Fatalf("recalled %q after a rebuild, want 3 entries", got)
	}
}

func TestVectorIndexMissingOrCorrupt(t *testing.T) {
	clock := newClock()
	clock.tick = time.Millisecond
	dir := t.TempDir()
	v := newVector(t, clock, tiers.VectorOptions{Dir: dir})
	saveSteps(t, v, monitor, 0, 4)
	if ms, err := v.Search(context.Background(), monitor, "scan", 10); err != nil || len(ms) != 4 {
		t.Fatalf("search: %v, %v", ms, err)
	}
	index := filepath.Join(dir, ".index")
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	if got := recallLines(t, v, monitor); len(got) != 4 {
		t.Fatalf("recalled %d entries without an index, want 4 (rebuilt)", len(got))
	}
	if err := os.WriteFile(index, []byte("garbage\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if ms, err := v.Search(context.Background(), monitor, "scan", 10); err != nil || len(ms) != 4 {
		t.Fatalf("search over a corrupt index: %v, %v; want 4 (rebuilt)", ms, err)
	}
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	saveSteps(t, v, monitor, 4, 5)
	if got := recallLines(t, v, monitor); len(got) != 5 {
		t.Fatalf("recalled %d entries, want 5", len(got))
	}
	// Files pruned by hand (the document's "periodically prune old files")
	// are skipped.
	files := entryFiles(t, dir)
	if err := os.Remove(filepath.Join(dir, files[0])); err != nil {
		t.Fatal(err)
	}
	if got := recallLines(t, v, monitor); len(got) != 4 {
		t.Fatalf("recalled %d entries after a manual prune, want 4", len(got))
	}
	ms, err := v.Search(context.Background(), monitor, "scan", 10)
	if err != nil || len(ms) != 4 {
		t.Fatalf("search after a manual prune: %v, %v; want 4", ms, err)
	}
	for _, m := range ms {
		if m.Entry == files[0] {
			t.Fatalf("search cites %s, which was removed", m.Entry)
		}
	}
}

func TestVectorConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	st := plainStore()
	const writers, each = 6, 15
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := tiers.NewVector(context.Background(), st, tiers.VectorOptions{Dir: dir, MaxContextTokens: 1 << 20})
			if err != nil {
				errs <- err
				return
			}
			who := monitor
			who.Session = fmt.Sprintf("writer-%d", w)
			for i := range each {
				if err := v.Save(context.Background(), who, vstep(w*100+i)); err != nil {
					errs <- err
					return
				}
				if _, err := v.Search(context.Background(), who, "quiet", 3); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	v, err := tiers.NewVector(context.Background(), st, tiers.VectorOptions{Dir: dir, MaxContextTokens: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	got := recallLines(t, v, monitor)
	if len(got) != writers*each || len(entryFiles(t, dir)) != writers*each {
		t.Fatalf("recalled %d entries, %d files; want %d", len(got), len(entryFiles(t, dir)), writers*each)
	}
	ms, err := v.Search(context.Background(), monitor, "quiet", tiers.MaxSearchResults)
	if err != nil || len(ms) != writers*each {
		t.Fatalf("search: %d matches, %v", len(ms), err)
	}
}

func TestVectorSearch(t *testing.T) {
	clock := newClock()
	clock.tick = time.Millisecond
	v := newVector(t, clock, tiers.VectorOptions{})
	ctx := context.Background()
	steps := []tiers.Step{
		{Workflow: "scan", Name: "cve", Input: "check openssl", Output: "CVE-2024-1 in OpenSSL; openssl upgrade needed"},
		{Workflow: "scan", Name: "cve", Input: "check zlib", Output: "nothing found"},
		{Workflow: "scan", Name: "cve", Input: "check OpenSSL again", Output: "still vulnerable"},
		{Workflow: "scan", Name: "cve", Input: "check curl", Output: "openssl linked"},
	}
	for _, s := range steps {
		if err := v.Save(ctx, monitor, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Save(ctx, retriever, tiers.Step{Workflow: "x", Name: "y", Input: "openssl openssl openssl openssl", Output: "openssl"}); err != nil {
		t.Fatal(err)
	}
	ms, err := v.Search(ctx, monitor, "OpenSSL openssl upgrade", 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, fmt.Sprintf("%.4f %s", m.Score, m.Text))
		if _, err := os.Stat(filepath.Join(v.Dir(), m.Entry)); err != nil {
			t.Errorf("match names entry %s, which is not a file: %v", m.Entry, err)
		}
	}
	// BM25 over the monitor's entries alone: the retriever's entry, of
	// another agent, holds the query's words but moves no score. The
	// query's repeated word counts once; the shorter of the two entries
	// holding "openssl" once ranks first.
	docs := make([]lexical.Doc[int], len(steps))
	for i, s := range steps {
		docs[i] = lexical.Doc[int]{Ref: i, Text: s.Summary()}
	}
	ref, err := lexical.Rank("OpenSSL openssl upgrade", docs, lexical.DefaultParams(), 3, lexical.ByScore(func(a, b int) bool { return a > b }), nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, h := range ref {
		want = append(want, fmt.Sprintf("%.4f %s", h.Score, steps[h.Ref].Summary()))
	}
	if len(want) != 3 || ref[0].Ref != 0 || ref[1].Ref != 3 || ref[2].Ref != 2 || !(ref[0].Score > 1.5 && ref[2].Score < 0.4) {
		t.Fatalf("reference ranking %v", ref)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("search found\n%q\nwant\n%q", got, want)
	}
	if ms, _ := v.Search(ctx, monitor, "kubernetes", 5); len(ms) != 0 {
		t.Fatalf("no-match query found %v", ms)
	}
	for _, bad := range []struct {
		query string
		k     int
		kind  error
	}{
		{"openssl", 0, memory.ErrInvalidArgument},
		{"openssl", tiers.MaxSearchResults + 1, memory.ErrInvalidArgument},
		{"", 5, memory.ErrInvalidArgument},
		{" -- !! ", 5, memory.ErrInvalidArgument},
		{"open\xffssl", 5, memory.ErrInvalidArgument},
		{strings.Repeat("a ", tiers.MaxSearchQueryBytes), 5, memory.ErrTooLarge},
	} {
		if _, err := v.Search(ctx, monitor, bad.query, bad.k); !errors.Is(err, bad.kind) {
			t.Errorf("Search(%.20q, %d) = %v, want %v", bad.query, bad.k, err, bad.kind)
		}
	}
}

func TestVectorSearchSeesOtherProcesses(t *testing.T) {
	clock := newClock()
	clock.tick = time.Millisecond
	dir := t.TempDir()
	reader := newVector(t, clock, tiers.VectorOptions{Dir: dir})
	writer := newVector(t, clock, tiers.VectorOptions{Dir: dir, MaxEntries: 2})
	ctx := context.Background()
	count := func() int {
		ms, err := reader.Search(ctx, monitor, "quiet", 10)
		if err != nil {
			t.Fatal(err)
		}
		return len(ms)
	}
	if n := count(); n != 0 {
		t.Fatalf("empty store finds %d", n)
	}
	saveSteps(t, writer, monitor, 0, 2)
	if n := count(); n != 2 {
		t.Fatalf("finds %d after two saves elsewhere, want 2", n)
	}
	saveSteps(t, writer, monitor, 2, 5) // prunes down to 2 again
	ms, err := reader.Search(ctx, monitor, "quiet", 10)
	if err != nil || len(ms) != 2 || ms[0].Text != vstep(4).Summary() || ms[1].Text != vstep(3).Summary() {
		t.Fatalf("after pruning elsewhere: %v, %v", ms, err)
	}
	if n, err := writer.Forget(ctx, monitor, memory.LevelAgent); err != nil || n != 2 {
		t.Fatalf("forget: %d, %v; want 2", n, err)
	}
	if n := count(); n != 0 {
		t.Fatalf("finds %d after forget, want 0", n)
	}
	if files := entryFiles(t, dir); len(files) != 0 {
		t.Fatalf("files left after forget: %v", files)
	}
}

func TestVectorErrors(t *testing.T) {
	clock := newClock()
	ctx := context.Background()
	st := newStore(t, clock)
	for _, opt := range []tiers.VectorOptions{{MaxContextTokens: -1}, {TTL: -time.Second}, {MaxEntries: -1}} {
		opt.Dir = t.TempDir()
		if _, err := tiers.NewVector(ctx, st, opt); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("NewVector(%+v) = %v, want ErrInvalidArgument", opt, err)
		}
	}
	if _, err := tiers.NewVector(ctx, nil, tiers.VectorOptions{Dir: t.TempDir()}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("NewVector(nil store) = %v, want ErrInvalidArgument", err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := tiers.NewVector(ctx, st, tiers.VectorOptions{Dir: file}); err == nil {
		t.Error("NewVector over a regular file succeeded")
	}

	v := newVector(t, clock, tiers.VectorOptions{})
	good := vstep(1)
	for _, tc := range []struct {
		name string
		id   memory.Identity
		step tiers.Step
		kind error
	}{
		{"no agent", memory.Identity{Tenant: "acme", Session: "s"}, good, memory.ErrIncompleteScope},
		{"empty identity", memory.Identity{}, good, memory.ErrIncompleteScope},
		{"bad identity", memory.Identity{Agent: "a\xff"}, good, memory.ErrInvalidArgument},
		{"bad step", monitor, tiers.Step{Workflow: "a/b", Name: "s"}, memory.ErrInvalidArgument},
	} {
		if err := v.Save(ctx, tc.id, tc.step); !errors.Is(err, tc.kind) {
			t.Errorf("%s: Save = %v, want %v", tc.name, err, tc.kind)
		}
	}
	if files := entryFiles(t, v.Dir()); len(files) != 0 {
		t.Fatalf("failed saves wrote %v", files)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := v.Save(cancelled, monitor, good); err != context.Canceled {
		t.Errorf("Save with a cancelled context = %v", err)
	}
	if _, err := v.Recall(cancelled, monitor, ""); err != context.Canceled {
		t.Errorf("Recall with a cancelled context = %v", err)
	}
	if _, err := v.Search(cancelled, monitor, "x", 1); err != context.Canceled {
		t.Errorf("Search with a cancelled context = %v", err)
	}

	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := v.Save(ctx, monitor, good); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("Save after Close = %v", err)
	}
	if _, err := v.Recall(ctx, monitor, ""); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("Recall after Close = %v", err)
	}
	if _, err := v.Search(ctx, monitor, "x", 1); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("Search after Close = %v", err)
	}
}

func TestVectorRequirePrincipal(t *testing.T) {
	clock := newClock()
	v := vectorOn(t, postureStore(t, clock, memory.Posture{RequirePrincipal: true}), tiers.VectorOptions{})
	if err := v.Save(context.Background(), monitor, vstep(0)); !errors.Is(err, memory.ErrIncompleteScope) {
		t.Fatalf("Save without a user under RequirePrincipal = %v", err)
	}
	withUser := monitor
	withUser.User = "alice"
	saveSteps(t, v, withUser, 0, 1)
	if got := recallLines(t, v, withUser); len(got) != 1 {
		t.Fatalf("recalled %d, want 1", len(got))
	}
}

func TestVectorTamperedEntryFailsClosed(t *testing.T) {
	clock := newClock()
	v := newVector(t, clock, tiers.VectorOptions{})
	saveSteps(t, v, monitor, 0, 1)
	name := entryFiles(t, v.Dir())[0]
	path := filepath.Join(v.Dir(), name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	forged := strings.Replace(string(data), "agent="+monitor.Agent, "agent="+retriever.Agent, 1)
	if err := os.WriteFile(path, []byte(forged), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Recall(context.Background(), monitor, ""); !errors.Is(err, memory.ErrConflict) {
		t.Fatalf("Recall of an entry whose file disagrees with the index = %v, want ErrConflict", err)
	}
	if got := recallLines(t, v, retriever); len(got) != 0 {
		t.Fatalf("the forged owner recalls %q", got)
	}
}
