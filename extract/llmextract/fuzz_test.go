package llmextract_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/extract/llmextract"
)

// FuzzExtract runs Extract on any model reply: it never panics, an error
// is classified malformed output and comes without facts, and every fact
// has sources among the batch's turns, in order, and supersedes nothing
// or a known fact, whatever labels the reply wrote.
func FuzzExtract(f *testing.F) {
	f.Add(`{"facts":[{"text":"The user likes tea.","sources":["T1","t2",3,"T4","#0"],"supersedes":"F2"}]}`)
	f.Add(`[{"text":"a b","sources":"T3, T1","supersedes":2},{"text":"c d","sources":["t1"],"supersedes":"k1"}]`)
	f.Add("```json\n[\"The user likes tea.\"]\n```")
	f.Add(`{"facts":[{"text":"x","supersedes":"F-1"},{"text":"y","sources":["T99999999999999999999"]}]}`)
	f.Add("not JSON")
	batch := turns("I like tea.", "I live in Oslo.", "My cat is Miso.")
	known := facts("The user likes coffee.", "The user lives in Rome.")
	f.Fuzz(func(t *testing.T, reply string) {
		e, err := llmextract.New(&scripted{steps: []step{text(reply)}}, llmextract.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, usage, err := e.Extract(context.Background(), batch, known)
		if usage.ModelCalls != 1 {
			t.Fatalf("usage %+v", usage)
		}
		if err != nil {
			if !errors.Is(err, extract.ErrMalformedOutput) || got != nil {
				t.Fatalf("%v, %v: want malformed output and no facts", got, err)
			}
			return
		}
		for _, fact := range got {
			if len(fact.Sources) == 0 || !slices.IsSorted(fact.Sources) {
				t.Fatalf("fact %+v: sources not among the turns, in order", fact)
			}
			for _, s := range fact.Sources {
				if !slices.ContainsFunc(batch, func(r memory.Record) bool { return r.ID == s }) {
					t.Fatalf("fact %+v: source %q is no turn of the batch", fact, s)
				}
			}
			if fact.Supersedes != "" && fact.Supersedes != "k1" && fact.Supersedes != "k2" {
				t.Fatalf("fact %+v supersedes no known fact", fact)
			}
		}
	})
}
