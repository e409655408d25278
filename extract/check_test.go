package extract_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
)

func isInvalid(err error) bool { return errors.Is(err, memory.ErrInvalidArgument) }

// TestBadInputIsClassified checks every input check, through both checks
// and both methods of Rules.
func TestBadInputIsClassified(t *testing.T) {
	turn := func(edit func(*memory.Record)) []memory.Record {
		turns := conversation(user("I like tea."), user("I like coffee."))
		edit(&turns[1])
		return turns
	}
	fact := func(edit func(*memory.Record)) []memory.Record {
		known := knownFacts("I like tea.", "I like coffee.")
		edit(&known[1])
		return known
	}
	many := func(n int, r memory.Record) []memory.Record {
		out := make([]memory.Record, n)
		for i := range out {
			out[i] = r
			out[i].ID = strings.Repeat("i", 1+i%100) + string(rune('a'+i/100%26)) + string(rune('a'+i/2600))
		}
		return out
	}
	big := strings.Repeat("I like tea. ", memory.MaxContentBytes/12)
	cases := []struct {
		name     string
		turns    []memory.Record
		known    []memory.Record
		previous string
		kind     error
	}{
		{"not a turn", turn(func(r *memory.Record) { r.Kind = memory.KindFact }), nil, "", memory.ErrInvalidArgument},
		{"empty id", turn(func(r *memory.Record) { r.ID = "" }), nil, "", memory.ErrInvalidArgument},
		{"long id", turn(func(r *memory.Record) { r.ID = strings.Repeat("x", memory.MaxIDBytes+1) }), nil, "", memory.ErrInvalidArgument},
		{"id not UTF-8", turn(func(r *memory.Record) { r.ID = "t\xff" }), nil, "", memory.ErrInvalidArgument},
		{"id with NUL", turn(func(r *memory.Record) { r.ID = "t\x00" }), nil, "", memory.ErrInvalidArgument},
		{"duplicate id", turn(func(r *memory.Record) { r.ID = "t1" }), nil, "", memory.ErrInvalidArgument},
		{"unknown role", turn(func(r *memory.Record) { r.Label = "narrator" }), nil, "", memory.ErrInvalidArgument},
		{"content not UTF-8", turn(func(r *memory.Record) { r.Content = "I like \xff." }), nil, "", memory.ErrInvalidArgument},
		{"content with NUL", turn(func(r *memory.Record) { r.Content = "I like\x00 tea." }), nil, "", memory.ErrInvalidArgument},
		{"content too large", turn(func(r *memory.Record) { r.Content = strings.Repeat("a", memory.MaxContentBytes+1) }), nil, "", memory.ErrTooLarge},
		{"speaker not UTF-8", turn(func(r *memory.Record) { r.Metadata = map[string]string{memory.SpeakerKey: "\xff"} }), nil, "", memory.ErrInvalidArgument},
		{"speaker too long", turn(func(r *memory.Record) {
			r.Metadata = map[string]string{memory.SpeakerKey: strings.Repeat("a", memory.MaxLabelBytes+1)}
		}), nil, "", memory.ErrTooLarge},
		{"too many turns", many(extract.MaxTurns+1, conversation(user("hi"))[0]), nil, "", memory.ErrTooLarge},
		{"too much text", many(5, conversation(user(big))[0]), nil, "", memory.ErrTooLarge},
		{"too much text, invalid too: sizes first", append(many(5, conversation(user(big))[0]), turn(func(r *memory.Record) { r.Content = "\xff" })...), nil, "", memory.ErrTooLarge},
	}
	extractOnly := []struct {
		name  string
		known []memory.Record
		kind  error
	}{
		{"known fact not a fact", fact(func(r *memory.Record) { r.Kind = memory.KindTurn }), memory.ErrInvalidArgument},
		{"known fact without id", fact(func(r *memory.Record) { r.ID = "" }), memory.ErrInvalidArgument},
		{"known facts sharing an id", fact(func(r *memory.Record) { r.ID = "k1" }), memory.ErrInvalidArgument},
		{"known fact not UTF-8", fact(func(r *memory.Record) { r.Content = "\xff" }), memory.ErrInvalidArgument},
		{"too many known facts", many(extract.MaxKnownFacts+1, knownFacts("I like tea.")[0]), memory.ErrTooLarge},
		{"too much known text", many(5, knownFacts(big)[0]), memory.ErrTooLarge},
	}
	summarizeOnly := []struct {
		name     string
		previous string
		kind     error
	}{
		{"previous not UTF-8", "The user \xff", memory.ErrInvalidArgument},
		{"previous with NUL", "The user\x00", memory.ErrInvalidArgument},
		{"previous too large", strings.Repeat("a", extract.MaxInputBytes), memory.ErrTooLarge},
	}
	ctx := context.Background()
	for _, c := range cases {
		if err := extract.CheckExtract(c.turns, nil); !errors.Is(err, c.kind) {
			t.Errorf("%s: CheckExtract: %v, want %v", c.name, err, c.kind)
		}
		if err := extract.CheckSummarize("", c.turns); !errors.Is(err, c.kind) {
			t.Errorf("%s: CheckSummarize: %v, want %v", c.name, err, c.kind)
		}
		if facts, _, err := (extract.Rules{}).Extract(ctx, c.turns, nil); !errors.Is(err, c.kind) || facts != nil {
			t.Errorf("%s: Extract: %v, %v; want %v", c.name, facts, err, c.kind)
		}
		if digest, _, err := (extract.Rules{}).Summarize(ctx, "", c.turns); !errors.Is(err, c.kind) || digest != "" {
			t.Errorf("%s: Summarize: %q, %v; want %v", c.name, digest, err, c.kind)
		}
	}
	turns := conversation(user("I like tea."))
	for _, c := range extractOnly {
		if facts, _, err := (extract.Rules{}).Extract(ctx, turns, c.known); !errors.Is(err, c.kind) || facts != nil {
			t.Errorf("%s: Extract: %v, %v; want %v", c.name, facts, err, c.kind)
		}
	}
	for _, c := range summarizeOnly {
		if digest, _, err := (extract.Rules{}).Summarize(ctx, c.previous, turns); !errors.Is(err, c.kind) || digest != "" {
			t.Errorf("%s: Summarize: %q, %v; want %v", c.name, digest, err, c.kind)
		}
	}
	if err := extract.CheckExtract(conversation(user("I like tea.")), knownFacts("I like tea.")); err != nil {
		t.Errorf("good input: %v", err)
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	turns := conversation(user("I like tea."))
	if _, _, err := (extract.Rules{}).Extract(ctx, turns, nil); err != context.Canceled {
		t.Errorf("Extract: %v, want context.Canceled itself", err)
	}
	if _, _, err := (extract.Rules{}).Summarize(ctx, "", turns); err != context.Canceled {
		t.Errorf("Summarize: %v, want context.Canceled itself", err)
	}
}
