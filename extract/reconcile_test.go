package extract_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/memory/extract"
)

func TestReconcile(t *testing.T) {
	turns := conversation(user("a"), user("b"), user("c"))
	known := knownFacts("The user lives in Paris.", "The user has a cat.")
	in := []extract.Fact{
		{Text: "The user moved to\n Berlin.", Sources: []string{"t3", "t1", "t3", "nope"}, Supersedes: "k1"},
		{Text: "the user has a CAT"}, // known
		{Text: "The user likes tea.", Sources: []string{"T9"}, Supersedes: "F1"},
		{Text: "THE USER MOVED TO BERLIN", Sources: []string{"t2"}, Supersedes: "k2"},
		{Text: "   "},
		{Text: strings.Repeat("x", extract.MaxFactBytes+1), Sources: []string{"t1"}},
		{Text: "The user likes tea!", Sources: []string{"t2"}},
	}
	before := cloneFacts(in)
	got := extract.Reconcile(in, turns, known)
	want := []extract.Fact{
		{Text: "The user moved to Berlin.", Sources: []string{"t1", "t2", "t3"}, Supersedes: "k1"},
		{Text: "The user likes tea.", Sources: []string{"t2"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, in); diff != "" {
		t.Errorf("Reconcile modified its input (-before +after):\n%s", diff)
	}

	// A fact whose sources are all unknown came from the batch as a whole.
	got = extract.Reconcile([]extract.Fact{{Text: "The user likes tea.", Sources: []string{"T1"}}}, turns, nil)
	if diff := cmp.Diff([]extract.Fact{{Text: "The user likes tea.", Sources: []string{"t1", "t2", "t3"}}}, got); diff != "" {
		t.Errorf("unknown sources (-want +got):\n%s", diff)
	}
	if got := extract.Reconcile(want, nil, nil); got != nil {
		t.Errorf("no turns: %v", got)
	}
}

func cloneFacts(facts []extract.Fact) []extract.Fact {
	out := make([]extract.Fact, len(facts))
	for i, f := range facts {
		out[i] = f
		out[i].Sources = append([]string(nil), f.Sources...)
	}
	return out
}
