package tiers

import (
	"context"
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/memory"
)

// StepMemory is the lifecycle an agent loop calls: Recall at the start of
// each step, Save at its end. Buffer, Summary, Vector and None implement
// it.
type StepMemory interface {
	// Recall returns the context to prepend to the step's system prompt;
	// its Text is empty when there is nothing to recall. All four types
	// recall by recency and ignore what the step is about.
	memory.Recaller
	// Save ends the step. What it keeps, if anything, is the type's
	// defining behaviour.
	Save(ctx context.Context, id memory.Identity, step Step) error
}

var (
	_ StepMemory       = (*Buffer)(nil)
	_ StepMemory       = (*Summary)(nil)
	_ StepMemory       = None{}
	_ memory.Forgetter = (*Buffer)(nil)
	_ memory.Forgetter = (*Summary)(nil)
)

// Step is one completed workflow step, as Save receives it.
type Step struct {
	// Workflow is the workflow's name (workflow-name).
	Workflow string
	// Name is the step's name within the workflow (step-name).
	Name string
	// Input is the task the step was given.
	Input string
	// Output is the step's final result.
	Output string
}

// Limits of a Step and its summary line. The rune limits are the
// document's "first 200 chars" and "first 500 chars".
const (
	// MaxInputRunes is how much of a step's input its summary keeps.
	MaxInputRunes = 200
	// MaxOutputRunes is how much of a step's output its summary keeps.
	MaxOutputRunes = 500
	// MaxStepNameBytes is the longest Workflow or Name: the longest
	// Kubernetes object name.
	MaxStepNameBytes = 253
)

// The lines framing recalled context, exactly as the document gives them.
const (
	// ContextHeader opens a recalled block.
	ContextHeader = "[Previous execution context]"
	// ContextFooter closes a recalled block; the system prompt follows it.
	ContextFooter = "[Current task follows]"
)

// Validate checks a step before it is saved. Workflow and Name are
// required, at most MaxStepNameBytes bytes of valid UTF-8, without leading
// or trailing white space, without control characters or line separators,
// and without '/', '[' or ']' — the characters that delimit
// "[<workflow>/<step>]" and the record key "<workflow>/<step>", so the pair
// can always be read back unambiguously and can never spell a block
// delimiter. Input and Output are free text, but must be valid UTF-8: text
// with invalid bytes is refused, never repaired, as backend.Store and
// Buffer.Add refuse it. Summary makes them one line. Violations are
// memory.ErrInvalidArgument.
func (s Step) Validate() error {
	if err := validateStepName("workflow", s.Workflow); err != nil {
		return err
	}
	if err := validateStepName("step name", s.Name); err != nil {
		return err
	}
	switch {
	case !utf8.ValidString(s.Input):
		return memory.Errorf(memory.ErrInvalidArgument, "step %s/%s: the input is not valid UTF-8", s.Workflow, s.Name)
	case !utf8.ValidString(s.Output):
		return memory.Errorf(memory.ErrInvalidArgument, "step %s/%s: the output is not valid UTF-8", s.Workflow, s.Name)
	}
	return nil
}

func validateStepName(what, v string) error {
	switch {
	case v == "":
		return memory.Errorf(memory.ErrInvalidArgument, "step %s is empty", what)
	case len(v) > MaxStepNameBytes:
		return memory.Errorf(memory.ErrInvalidArgument, "step %s is %d bytes, the limit is %d", what, len(v), MaxStepNameBytes)
	case !utf8.ValidString(v):
		return memory.Errorf(memory.ErrInvalidArgument, "step %s %q is not valid UTF-8", what, v)
	case strings.TrimSpace(v) != v:
		return memory.Errorf(memory.ErrInvalidArgument, "step %s %q has leading or trailing white space", what, v)
	}
	for _, r := range v {
		switch {
		case r == '/' || r == '[' || r == ']':
			return memory.Errorf(memory.ErrInvalidArgument, "step %s %q contains %q", what, v, r)
		case lineBreaking(r):
			return memory.Errorf(memory.ErrInvalidArgument, "step %s %q contains a control character", what, v)
		}
	}
	return nil
}

// key is the record key of the step's summary: "<workflow>/<step>".
func (s Step) key() string { return s.Workflow + "/" + s.Name }

// Summary returns the step's one-line summary, exactly as the document
// formats it:
//
//	[<workflow>/<step>] Task: <first 200 chars of input> | Result: <first 500 chars of output>
//
// Input and output are made one line first: every control character (line
// feed, carriage return, tab, ...) and the Unicode line and paragraph
// separators become a space, a CR LF pair becomes one space, and leading
// and trailing white space is dropped. Then each is cut to MaxInputRunes
// or MaxOutputRunes characters (runes, so a multi-byte character is never
// split) and any white space left at the cut is dropped. No ellipsis is
// added. Summary does not validate the step: every Save calls Validate
// first, which refuses invalid UTF-8, so no saved line ever holds a
// repaired byte; called directly on such a step, Summary still returns
// valid UTF-8, each invalid byte shown as U+FFFD.
func (s Step) Summary() string {
	var b strings.Builder
	b.WriteByte('[')
	b.WriteString(s.key())
	b.WriteString("] Task: ")
	b.WriteString(oneLine(s.Input, MaxInputRunes))
	b.WriteString(" | Result: ")
	b.WriteString(oneLine(s.Output, MaxOutputRunes))
	return b.String()
}

// lineBreaking reports whether r would break or disturb a one-line summary.
func lineBreaking(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

// lineRunes yields the runes of s as one line: a CR LF pair as one space,
// and every other rune lineBreaking reports as a space. An invalid byte
// arrives as utf8.RuneError (U+FFFD). It reads only as far as its caller
// takes.
func lineRunes(s string) iter.Seq[rune] {
	return func(yield func(rune) bool) {
		prevCR := false
		for _, r := range s {
			if r == '\n' && prevCR {
				prevCR = false
				continue
			}
			prevCR = r == '\r'
			if lineBreaking(r) {
				r = ' '
			}
			if !yield(r) {
				return
			}
		}
	}
}

// oneLine flattens s to one line, trims it and keeps at most max runes. It
// reads only as much of s as it keeps, so a huge output costs no more than
// a short one.
func oneLine(s string, max int) string {
	var b strings.Builder
	n := 0
	for r := range lineRunes(s) {
		if n == max {
			break
		}
		if n == 0 && unicode.IsSpace(r) {
			continue
		}
		b.WriteRune(r)
		n++
	}
	return strings.TrimRightFunc(b.String(), unicode.IsSpace)
}

// Prepend returns systemPrompt with r's block in front of it, as the
// document loads memory at the start of a step. With nothing recalled it
// returns systemPrompt unchanged. r.Text ends with a line break, so the
// prompt starts on the line after ContextFooter.
func Prepend(r memory.Recollection, systemPrompt string) string {
	if r.Text == "" {
		return systemPrompt
	}
	return r.Text + systemPrompt
}
