package tiers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/internal/osfile"
)

// wordCounter counts words: a cheap stand-in where exact counts do not
// matter.
type wordCounter struct{}

func (wordCounter) CountTokens(_ context.Context, s string) (int, error) {
	return len(strings.Fields(s)), nil
}

// testStore returns a Store over a fresh in-memory driver with clock and
// counter; nil means the defaults.
func testStore(tb testing.TB, clock memory.Clock, counter memory.TokenCounter) *backend.Store {
	tb.Helper()
	s := backend.NewStore(inmem.New(inmem.Options{Clock: clock}), backend.StoreOptions{Clock: clock, Tokens: counter})
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// TestVectorIndexCompacts checks that pruning rewrites the index once
// removal lines dominate it, that the search index drops the pruned
// entries, and that everything still reads.
func TestVectorIndexCompacts(t *testing.T) {
	dir := t.TempDir()
	seedVector(t, dir, 1100, benchWho, wordCounter{})
	now := benchBase.Add(2 * time.Hour)
	ctx := context.Background()
	v, err := NewVector(ctx, testStore(t, func() time.Time { return now }, nil), VectorOptions{Dir: dir, MaxEntries: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Search(ctx, benchWho, "payments", 5); err != nil {
		t.Fatal(err)
	}
	if err := v.Save(ctx, benchWho, Step{Workflow: "w", Name: "s", Input: "payments", Output: "ok"}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, vectorIndexFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], indexMagic+" ") {
		t.Fatalf("compacted index has %d lines, want the header and 3 entries:\n%s", len(lines), data)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	if len(files) != 3 {
		t.Fatalf("%d entry files, want 3", len(files))
	}
	rec, err := v.Recall(ctx, benchWho, "")
	if err != nil || len(rec.Records) != 3 {
		t.Fatalf("recall after compaction: %d records, %v", len(rec.Records), err)
	}
	ms, err := v.Search(ctx, benchWho, "payments", 5)
	if err != nil || len(ms) == 0 || ms[0].Key != "w/s" {
		t.Fatalf("search after compaction: %v, %v", ms, err)
	}
}

// TestReadBackward checks the backward line reader across chunk borders,
// with long lines and an unterminated last line.
func TestReadBackward(t *testing.T) {
	var lines []string
	var b strings.Builder
	for i := range 500 {
		l := fmt.Sprintf("line %d %s", i, strings.Repeat("x", i*37%3000))
		lines = append(lines, l)
		b.WriteString(l + "\n")
	}
	b.WriteString("torn")
	r := strings.NewReader(b.String())
	var got []string
	if err := readBackward(r, 0, int64(b.Len()), func(l []byte) bool { got = append(got, string(l)); return true }); err != nil {
		t.Fatal(err)
	}
	slices.Reverse(got)
	if !slices.Equal(got, lines) {
		t.Fatalf("read %d lines backward, want %d in order", len(got), len(lines))
	}
	n := 0
	_ = readBackward(r, 0, int64(b.Len()), func([]byte) bool { n++; return n < 3 })
	if n != 3 {
		t.Fatalf("reader went on after fn returned false: %d calls", n)
	}
}

// TestEntryNames checks names sort by time and never repeat.
func TestEntryNames(t *testing.T) {
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	prev := ""
	for i := range 1000 {
		name, err := newEntryName(at.Add(time.Duration(i/10) * time.Nanosecond))
		if err != nil {
			t.Fatal(err)
		}
		if seen[name] || name <= prev {
			t.Fatalf("name %d %s repeats or sorts before %s", i, name, prev)
		}
		if ns, ok := parseEntryName(name); !ok || ns != at.Add(time.Duration(i/10)).UnixNano() {
			t.Fatalf("name %s parses to %d, %v", name, ns, ok)
		}
		seen[name], prev = true, name
	}
	if _, err := newEntryName(time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)); err == nil {
		t.Fatal("a time before 1970 made a name")
	}
}

// TestVectorLockWaitHonoursContext checks that a call waiting for the
// directory lock gives up with the context's error, and writes nothing.
func TestVectorLockWaitHonoursContext(t *testing.T) {
	ctx := context.Background()
	v, err := NewVector(ctx, testStore(t, nil, nil), VectorOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	release, err := v.lock(ctx, osfile.Exclusive) // another writer holds the lock
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	err = v.Save(short, benchWho, Step{Workflow: "w", Name: "s", Input: "i", Output: "o"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Save while the lock is held = %v, want the deadline", err)
	}
	if _, err := v.Search(short, benchWho, "i", 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Search while the lock is held = %v, want the deadline", err)
	}
	release()
	files, _ := filepath.Glob(filepath.Join(v.dir, "*.txt"))
	if len(files) != 0 {
		t.Fatalf("a Save that gave up wrote %v", files)
	}
	if err := v.Save(ctx, benchWho, Step{Workflow: "w", Name: "s", Input: "i", Output: "o"}); err != nil {
		t.Fatalf("Save after the lock was released: %v", err)
	}
}
