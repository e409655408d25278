package inmem_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
)

// TestSearchTextScopeAndFilters checks the in-memory text search's
// behaviour beyond its ranking (which the conformance suite checks): it
// returns only records of the identities the filter matches, applies
// kinds and expiry inside the search, omits records sharing no word with
// the text, keeps up with writes made after the first search, and refuses
// bad arguments and a closed driver.
func TestSearchTextScopeAndFilters(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	d := inmem.New(inmem.Options{Clock: func() time.Time { return now }})
	alice := memory.Identity{Tenant: "acme", User: "alice", Session: "s1"}
	bob := memory.Identity{Tenant: "acme", User: "bob", Session: "s2"}
	rec := func(id string, who memory.Identity, kind memory.Kind, text string, age time.Duration) memory.Record {
		return memory.Record{ID: id, Kind: kind, Identity: who, Content: text, Created: now.Add(-age)}
	}
	expired := rec("a-expired", alice, memory.KindFact, "the parcel is late", time.Hour)
	expired.Expires = now
	if err := d.Put(ctx, []memory.Record{
		rec("a-fact", alice, memory.KindFact, "my parcel is late again", 3*time.Minute),
		rec("a-turn", alice, memory.KindTurn, "where is my parcel", 2*time.Minute),
		rec("a-other", alice, memory.KindFact, "I like green tea", time.Minute),
		expired,
		rec("b-fact", bob, memory.KindFact, "bob's parcel is late", time.Minute),
	}); err != nil {
		t.Fatal(err)
	}
	match := memory.FieldTenant | memory.FieldUser
	q := driver.Query{Filter: memory.Filter{Match: match, Identity: alice.Only(match)}}
	ids := func(ms []driver.Match) string {
		var out []string
		for _, m := range ms {
			if m.Score <= 0 {
				t.Errorf("%s has score %v, want above 0", m.Record.ID, m.Score)
			}
			out = append(out, m.Record.ID)
		}
		return strings.Join(out, " ")
	}
	got, err := d.SearchText(ctx, q, "parcel late", 10)
	if err != nil {
		t.Fatal(err)
	}
	if s := ids(got); s != "a-fact a-turn" {
		t.Errorf("alice's search for %q = %q, want a-fact a-turn (bob's and the expired record excluded, the tea fact shares no word)", "parcel late", s)
	}
	facts := q
	facts.Kinds = []memory.Kind{memory.KindTurn}
	if got, err := d.SearchText(ctx, facts, "parcel late", 10); err != nil || ids(got) != "a-turn" {
		t.Errorf("turns only = %q, %v; want a-turn", ids(got), err)
	}
	if got, err := d.SearchText(ctx, q, "parcel late", 1); err != nil || ids(got) != "a-fact" {
		t.Errorf("k=1 = %q, %v; want a-fact", ids(got), err)
	}

	// A write after the first search is found by the next.
	if err := d.Put(ctx, []memory.Record{rec("a-new", alice, memory.KindFact, "late late parcel", 0)}); err != nil {
		t.Fatal(err)
	}
	if got, err := d.SearchText(ctx, q, "parcel late", 10); err != nil || !strings.HasPrefix(ids(got), "a-new ") {
		t.Errorf("after a new write = %q, %v; want a-new first", ids(got), err)
	}
	// A replaced record is found by its new content only, a deleted one not at all.
	if err := d.Put(ctx, []memory.Record{rec("a-new", alice, memory.KindFact, "green tea", 0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Delete(ctx, driver.Query{Filter: q.Filter, IDs: []string{"a-turn"}}); err != nil {
		t.Fatal(err)
	}
	if got, err := d.SearchText(ctx, q, "parcel late", 10); err != nil || ids(got) != "a-fact" {
		t.Errorf("after a replacement and a deletion = %q, %v; want a-fact", ids(got), err)
	}

	for _, c := range []struct {
		name string
		text string
		k    int
		want error
	}{
		{"k of 0", "parcel", 0, memory.ErrInvalidArgument},
		{"k too large", "parcel", driver.MaxSearchK + 1, memory.ErrInvalidArgument},
		{"invalid UTF-8", "parcel \xff", 5, memory.ErrInvalidArgument},
		{"NUL byte", "parcel\x00", 5, memory.ErrInvalidArgument},
		{"oversized text", strings.Repeat("a ", driver.MaxSearchTextBytes), 5, memory.ErrTooLarge},
	} {
		if _, err := d.SearchText(ctx, q, c.text, c.k); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	if got, err := d.SearchText(ctx, q, "... !!!", 5); err != nil || len(got) != 0 {
		t.Errorf("a text without words = %q, %v; want nothing", ids(got), err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := d.SearchText(cancelled, q, "parcel", 5); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.SearchText(ctx, q, "parcel", 5); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("closed driver: err = %v, want memory.ErrClosed", err)
	}
}
