package extract_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
)

// TestCheckFactText checks the classes of CheckFactText, and that every
// fact Reconcile returns, from texts of every awkward kind, passes it:
// what an extractor returns can be stored.
func TestCheckFactText(t *testing.T) {
	for _, c := range []struct {
		text string
		want error
	}{
		{"Alice lives in Lisbon", nil},
		{"two  spaces are fine", nil},
		{"", memory.ErrInvalidArgument},
		{" leading", memory.ErrInvalidArgument},
		{"two\nlines", memory.ErrInvalidArgument},
		{"a\ttab", memory.ErrInvalidArgument},
		{"line\u2028separator", memory.ErrInvalidArgument},
		{"\xff", memory.ErrInvalidArgument},
		{strings.Repeat("a", extract.MaxFactBytes+1), memory.ErrTooLarge},
	} {
		if err := extract.CheckFactText(c.text); c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("CheckFactText(%.20q) = %v, want %v", c.text, err, c.want)
		}
	}
	turns := []memory.Record{{ID: "t1", Kind: memory.KindTurn, Label: "user", Content: "x"}}
	var facts []extract.Fact
	for _, s := range []string{" padded ", "two\nlines", "tab\there", "sep\u2028arated", "\u00a0nbsp\u00a0", "a  b", strings.Repeat("word ", 99) + "end"} {
		facts = append(facts, extract.Fact{Text: s, Sources: []string{"t1"}})
	}
	for _, f := range extract.Reconcile(facts, turns, nil) {
		if err := extract.CheckFactText(f.Text); err != nil {
			t.Errorf("Reconcile returned %q, which CheckFactText refuses: %v", f.Text, err)
		}
	}
}
