package facts_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/recall"
	"github.com/agentmem/memory/tiers/facts"
)

// Bad input is a classified error and stores nothing, whichever fact of a
// batch has it.
func TestBadInputStoresNothing(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		f, _ := newFacts(t, d)
		ok := extract.Fact{Text: "Alice likes tea", Sources: []string{"t1"}}
		cases := []struct {
			name string
			fact extract.Fact
			err  error
		}{
			{"empty text", extract.Fact{Text: ""}, memory.ErrInvalidArgument},
			{"invalid UTF-8", extract.Fact{Text: "Alice likes \xc3\x28"}, memory.ErrInvalidArgument},
			{"too long", extract.Fact{Text: strings.Repeat("a", extract.MaxFactBytes+1)}, memory.ErrTooLarge},
			{"two lines", extract.Fact{Text: "Alice likes tea\nand cake"}, memory.ErrInvalidArgument},
			{"line separator", extract.Fact{Text: "Alice likes tea\u2028and cake"}, memory.ErrInvalidArgument},
			{"NUL", extract.Fact{Text: "Alice\x00likes tea"}, memory.ErrInvalidArgument},
			{"leading space", extract.Fact{Text: " Alice likes tea"}, memory.ErrInvalidArgument},
			{"empty source", extract.Fact{Text: "Alice likes cake", Sources: []string{""}}, memory.ErrInvalidArgument},
			{"source twice", extract.Fact{Text: "Alice likes cake", Sources: []string{"t1", "t1"}}, memory.ErrInvalidArgument},
			{"long source", extract.Fact{Text: "Alice likes cake", Sources: []string{strings.Repeat("t", memory.MaxIDBytes+1)}}, memory.ErrInvalidArgument},
			{"too many sources", extract.Fact{Text: "Alice likes cake", Sources: manySources(1000)}, memory.ErrTooLarge},
			{"invalid supersedes", extract.Fact{Text: "Alice likes cake", Supersedes: "\xff"}, memory.ErrInvalidArgument},
			{"supersedes itself", extract.Fact{Text: "Alice likes cake", Supersedes: memory.ContentID(memory.KindFact, alice, "Alice likes cake")}, memory.ErrInvalidArgument},
		}
		for _, c := range cases {
			_, err := f.Add(ctx, alice, ok, c.fact)
			wantErr(t, c.name, err, c.err)
		}
		_, err := f.Add(ctx, alice, make([]extract.Fact, memory.MaxBatch+1)...)
		wantErr(t, "a batch over memory.MaxBatch", err, memory.ErrTooLarge)
		wantTexts(t, "facts after bad input", listTexts(t, f, alice, memory.LevelUser, true), nil)

		// Update checks its text and id before touching the fact.
		r := mustAdd(t, f, alice, ok)[0].Record
		for _, c := range cases[:7] {
			_, err := f.Update(ctx, alice, r.ID, c.fact.Text)
			wantErr(t, "update: "+c.name, err, c.err)
		}
		wantTexts(t, "facts after bad updates", listTexts(t, f, alice, memory.LevelUser, true), []string{"Alice likes tea"})

		// Ids that cannot name a record.
		for _, id := range []string{"", strings.Repeat("x", memory.MaxIDBytes+1), "a\x00b"} {
			_, err := f.Get(ctx, alice, memory.LevelUser, id)
			wantErr(t, "get of a bad id", err, memory.ErrInvalidArgument)
			_, err = f.Update(ctx, alice, id, "Alice likes cake")
			wantErr(t, "update of a bad id", err, memory.ErrInvalidArgument)
			wantErr(t, "delete of a bad id", f.Delete(ctx, alice, id), memory.ErrInvalidArgument)
			_, err = f.History(ctx, alice, memory.LevelUser, id)
			wantErr(t, "history of a bad id", err, memory.ErrInvalidArgument)
		}
		_, err = f.Search(ctx, alice, memory.LevelUser, "tea", 0)
		wantErr(t, "search for no results", err, memory.ErrInvalidArgument)
	})
}

// recallOutOfRange are recall options recall.New refuses.
var recallOutOfRange = recall.Options{Candidates: -1}

// manySources returns n distinct source ids of about 100 bytes each.
func manySources(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%06d", strings.Repeat("s", 94), i)
	}
	return out
}

// New refuses a store whose driver lacks compare-and-swap or text search.
func TestNewNeedsSwapAndTextSearch(t *testing.T) {
	d := inmem.New(inmem.Options{})
	defer d.Close()
	noSwap := struct {
		driver.Driver
		driver.TextSearcher
	}{d, d}
	_, err := facts.New(backend.NewStore(noSwap, backend.StoreOptions{}), facts.Options{})
	wantErr(t, "a driver without compare-and-swap", err, memory.ErrUnimplemented)
	if !strings.Contains(err.Error(), "compare-and-swap") {
		t.Errorf("the error does not say what is missing: %v", err)
	}
	noText := struct {
		driver.Driver
		driver.Swapper
	}{d, d}
	_, err = facts.New(backend.NewStore(noText, backend.StoreOptions{}), facts.Options{})
	wantErr(t, "a driver without text search", err, memory.ErrUnimplemented)
	_, err = facts.New(nil, facts.Options{})
	wantErr(t, "a nil store", err, memory.ErrInvalidArgument)
	_, err = facts.New(backend.NewStore(d, backend.StoreOptions{}), facts.Options{Recall: recallOutOfRange})
	wantErr(t, "recall options out of range", err, memory.ErrInvalidArgument)
	if _, err := facts.New(backend.NewStore(d, backend.StoreOptions{}), facts.Options{}); err != nil {
		t.Fatalf("the in-memory driver: %v", err)
	}
}
