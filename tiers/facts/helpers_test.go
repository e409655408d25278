package facts_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/tiers/facts"
)

var ctx = context.Background()

// mustAdd adds fs as id and returns the outcomes.
func mustAdd(t *testing.T, f *facts.Facts, id memory.Identity, fs ...extract.Fact) []facts.Added {
	t.Helper()
	out, err := f.Add(ctx, id, fs...)
	if err != nil {
		t.Fatalf("Add: %v", err)
	}
	if len(out) != len(fs) {
		t.Fatalf("Add of %d facts returned %d outcomes", len(fs), len(out))
	}
	return out
}

// mustGet returns fact factID as id reads it at level.
func mustGet(t *testing.T, f *facts.Facts, id memory.Identity, level memory.Level, factID string) memory.Record {
	t.Helper()
	r, err := f.Get(ctx, id, level, factID)
	if err != nil {
		t.Fatalf("Get %s: %v", factID, err)
	}
	return r
}

// texts returns the contents of recs, in order.
func texts(recs []memory.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Content
	}
	return out
}

// listTexts returns the texts of the facts id lists at level.
func listTexts(t *testing.T, f *facts.Facts, id memory.Identity, level memory.Level, includeSuperseded bool) []string {
	t.Helper()
	recs, err := f.List(ctx, id, level, includeSuperseded)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return texts(recs)
}

// searchTexts returns the texts of the facts a search finds, best first.
func searchTexts(t *testing.T, f *facts.Facts, id memory.Identity, level memory.Level, text string) []string {
	t.Helper()
	res, err := f.Search(ctx, id, level, text, 10)
	if err != nil {
		t.Fatalf("Search %q: %v", text, err)
	}
	if res.Degraded != nil {
		t.Fatalf("Search %q degraded: %v", text, res.Degraded)
	}
	out := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		out[i] = h.Record.Content
	}
	return out
}

// wantErr fails t unless err matches kind.
func wantErr(t *testing.T, what string, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("%s: got error %v, want %v", what, err, kind)
	}
}

// wantTexts fails t unless got equals want.
func wantTexts(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
}
