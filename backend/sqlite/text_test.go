//go:build cgo

package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// TestTextCacheLoads checks when the text cache is loaded: once, by the
// first search; not again for this driver's own appends, replacements,
// swaps and deletions, which it applies or catches up with; and again
// after another handle on the file replaces or deletes a record, which
// this driver cannot know but by the epoch. Every search's result is
// checked too, so a cache that skipped a load would be caught.
func TestTextCacheLoads(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "texts.db")
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	other, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	who := memory.Identity{Tenant: "acme", User: "alice", Session: "s1"}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := func(id, text string, sec int) memory.Record {
		return memory.Record{ID: id, Kind: memory.KindFact, Identity: who, Content: text, Created: t0.Add(time.Duration(sec) * time.Second), Version: 1}
	}
	q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "acme"}}}
	step := func(what, want string, loads int) {
		t.Helper()
		got, err := d.SearchText(ctx, q, "parcel", 10)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var ids []string
		for _, m := range got {
			ids = append(ids, m.Record.ID)
		}
		if s := strings.Join(ids, " "); s != want {
			t.Errorf("%s: SearchText(parcel) = %q, want %q", what, s, want)
		}
		d.tc.mu.RLock()
		n := d.tc.loads
		d.tc.mu.RUnlock()
		if n != loads {
			t.Errorf("%s: the text cache was loaded %d times, want %d", what, n, loads)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(d.Put(ctx, []memory.Record{rec("a", "the parcel is late", 1)}))
	step("the first search", "a", 1)
	must(d.Put(ctx, []memory.Record{rec("b", "parcel parcel", 2)}))
	step("after an append", "b a", 1)
	must(d.Put(ctx, []memory.Record{rec("b", "green tea", 2)}))
	step("after this driver replaced b", "a", 1)
	_, err = d.Swap(ctx, rec("c", "a parcel again", 3), 0)
	must(err)
	step("after this driver's swap created c", "c a", 1)
	_, err = d.Swap(ctx, rec("c", "no more", 3), 1)
	must(err)
	step("after this driver's swap rewrote c", "a", 1)
	must(d.Put(ctx, []memory.Record{rec("e", "parcel here", 5)}))
	_, err = d.Delete(ctx, driver.Query{Filter: q.Filter, IDs: []string{"a"}})
	must(err)
	step("after this driver deleted a", "e", 1)
	must(other.Put(ctx, []memory.Record{rec("f", "parcel there", 6)}))
	step("after another handle appended f", "f e", 1)
	must(other.Put(ctx, []memory.Record{rec("e", "tea", 5)}))
	step("after another handle replaced e", "f", 2)
	_, err = other.Delete(ctx, driver.Query{Filter: q.Filter, IDs: []string{"f"}})
	must(err)
	step("after another handle deleted f", "", 3)
}

// TestTextCacheRowidReuse checks that a record appended after this driver
// deleted the record of the largest rowid is found: SQLite gives the new
// record that rowid again, at or below the largest rowid the cache read.
func TestTextCacheRowidReuse(t *testing.T) {
	ctx := context.Background()
	d, err := Open(filepath.Join(t.TempDir(), "reuse.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	who := memory.Identity{Tenant: "acme", User: "alice"}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := func(id, text string, sec int) memory.Record {
		return memory.Record{ID: id, Kind: memory.KindFact, Identity: who, Content: text, Created: t0.Add(time.Duration(sec) * time.Second)}
	}
	q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "acme"}}}
	search := func(what, want string) {
		t.Helper()
		got, err := d.SearchText(ctx, q, "parcel", 10)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var ids []string
		for _, m := range got {
			ids = append(ids, m.Record.ID)
		}
		if s := strings.Join(ids, " "); s != want {
			t.Errorf("%s: SearchText(parcel) = %q, want %q", what, s, want)
		}
	}
	if err := d.Put(ctx, []memory.Record{rec("a", "parcel one", 1), rec("b", "parcel two", 2)}); err != nil {
		t.Fatal(err)
	}
	search("the first search", "b a")
	if _, err := d.Delete(ctx, driver.Query{Filter: q.Filter, IDs: []string{"b"}}); err != nil {
		t.Fatal(err)
	}
	search("after deleting the newest row", "a")
	if err := d.Put(ctx, []memory.Record{rec("c", "parcel three", 3)}); err != nil {
		t.Fatal(err)
	}
	search("after appending into the freed rowid", "c a")
}
