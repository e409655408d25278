package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/memory"
)

// Limits of the input and output of extraction and summarisation.
// Input over a limit is memory.ErrTooLarge; a reply over MaxReplyBytes is
// memory.ErrTooLarge wrapping ErrMalformedOutput.
const (
	// MaxTurns is the most turns one call may take: memory.MaxBatch, the
	// most one store write carries.
	MaxTurns = memory.MaxBatch
	// MaxKnownFacts is the most known facts one Extract call may take.
	MaxKnownFacts = 1000
	// MaxInputBytes is the most text one call may take: the contents of
	// its turns and known facts and the previous digest, together.
	MaxInputBytes = 4 << 20
	// MaxFactBytes is the longest fact text. Rules keeps no longer
	// sentence, and ParseFacts drops a longer fact (a paragraph is not one
	// fact).
	MaxFactBytes = 500
	// MaxReplyBytes is the longest model reply ParseFacts and ParseDigest
	// read; a longer one is refused before any of it is parsed.
	MaxReplyBytes = 1 << 20
)

// CheckExtract validates the input of Extractor.Extract. Every turn must
// be a record of kind memory.KindTurn with a non-empty id of at most
// memory.MaxIDBytes bytes of valid UTF-8 without NUL, no two with one id,
// a valid memory.Role as its Label, content of valid UTF-8 without NUL
// (memory.MaxContentBytes at most), and a speaker (metadata memory.SpeakerKey)
// of at most memory.MaxLabelBytes bytes of such text. Every known fact
// must be of kind memory.KindFact with such an id, distinct from the
// other known facts', and such content. At most MaxTurns turns,
// MaxKnownFacts known facts and MaxInputBytes of content together; the
// sizes are checked before any text is read. Violations are
// memory.ErrInvalidArgument, or memory.ErrTooLarge for a limit, naming
// the first bad record.
func CheckExtract(turns, known []memory.Record) error {
	if len(known) > MaxKnownFacts {
		return memory.Errorf(memory.ErrTooLarge, "extract: %d known facts, the limit is %d", len(known), MaxKnownFacts)
	}
	if err := checkSizes(len(turns), contentBytes(turns)+contentBytes(known)); err != nil {
		return err
	}
	if err := checkTurns(turns); err != nil {
		return err
	}
	ids := make(map[string]bool, len(known))
	for i, r := range known {
		if err := checkRecord("known fact", memory.KindFact, i, r, ids); err != nil {
			return err
		}
	}
	return nil
}

// CheckSummarize validates the input of Summarizer.Summarize: the turns
// as CheckExtract checks them, and previous of valid UTF-8 without NUL,
// MaxInputBytes of text at most together with the turns' contents.
func CheckSummarize(previous string, turns []memory.Record) error {
	if err := checkSizes(len(turns), len(previous)+contentBytes(turns)); err != nil {
		return err
	}
	if err := checkTurns(turns); err != nil {
		return err
	}
	return checkText("the previous digest", previous)
}

// checkSizes checks the number of turns and the bytes of text of a call
// before any of the text is read.
func checkSizes(turns, textBytes int) error {
	if turns > MaxTurns {
		return memory.Errorf(memory.ErrTooLarge, "extract: %d turns, the limit is %d", turns, MaxTurns)
	}
	if textBytes > MaxInputBytes {
		return memory.Errorf(memory.ErrTooLarge, "extract: the input holds %d bytes of text, the limit is %d", textBytes, MaxInputBytes)
	}
	return nil
}

func checkTurns(turns []memory.Record) error {
	ids := make(map[string]bool, len(turns))
	for i, r := range turns {
		if err := checkRecord("turn", memory.KindTurn, i, r, ids); err != nil {
			return err
		}
		if !memory.Role(r.Label).Valid() {
			return memory.Errorf(memory.ErrInvalidArgument, "extract: turn %d (%s) has role %q; the roles are %v", i, r.ID, r.Label, memory.Roles)
		}
		if sp := r.Metadata[memory.SpeakerKey]; len(sp) > memory.MaxLabelBytes {
			return memory.Errorf(memory.ErrTooLarge, "extract: the speaker of turn %s is %d bytes, the limit is %d", r.ID, len(sp), memory.MaxLabelBytes)
		}
		if err := checkText("the speaker of turn "+r.ID, r.Metadata[memory.SpeakerKey]); err != nil {
			return err
		}
	}
	return nil
}

// checkRecord checks the kind, id and content of record i of a list, and
// that no earlier record of the list (ids) had its id.
func checkRecord(what string, kind memory.Kind, i int, r memory.Record, ids map[string]bool) error {
	switch {
	case r.Kind != kind:
		return memory.Errorf(memory.ErrInvalidArgument, "extract: %s %d (%q) is of kind %q, not %q", what, i, r.ID, r.Kind, kind)
	case r.ID == "":
		return memory.Errorf(memory.ErrInvalidArgument, "extract: %s %d has an empty id", what, i)
	case len(r.ID) > memory.MaxIDBytes:
		return memory.Errorf(memory.ErrInvalidArgument, "extract: %s %d has an id of %d bytes, the limit is %d", what, i, len(r.ID), memory.MaxIDBytes)
	case !utf8.ValidString(r.ID) || strings.IndexByte(r.ID, 0) >= 0:
		return memory.Errorf(memory.ErrInvalidArgument, "extract: %s %d has an id %q that is not valid UTF-8 without NUL", what, i, r.ID)
	case ids[r.ID]:
		return memory.Errorf(memory.ErrInvalidArgument, "extract: %s %d has the id %s of an earlier one", what, i, r.ID)
	}
	ids[r.ID] = true
	if len(r.Content) > memory.MaxContentBytes {
		return memory.Errorf(memory.ErrTooLarge, "extract: %s %s is %d bytes, the limit is %d", what, r.ID, len(r.Content), memory.MaxContentBytes)
	}
	return checkText("the content of "+what+" "+r.ID, r.Content)
}

func checkText(what, s string) error {
	if !utf8.ValidString(s) {
		return memory.Errorf(memory.ErrInvalidArgument, "extract: %s is not valid UTF-8", what)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return memory.Errorf(memory.ErrInvalidArgument, "extract: %s contains a NUL byte", what)
	}
	return nil
}

func contentBytes(recs []memory.Record) int {
	n := 0
	for _, r := range recs {
		n += len(r.Content)
	}
	return n
}

// CheckFactText validates a fact's text as Fact describes it: not
// empty, at most MaxFactBytes bytes of valid UTF-8, one line (no
// control characters — so no line breaks or tabs — and no Unicode line or
// paragraph separators), without leading or trailing white space. It
// reports memory.ErrInvalidArgument, or memory.ErrTooLarge for the length.
// A fact Reconcile returns passes it; package tiers/facts applies it to
// what it is asked to store.
func CheckFactText(text string) error {
	switch {
	case text == "":
		return memory.Errorf(memory.ErrInvalidArgument, "extract: the fact text is empty")
	case len(text) > MaxFactBytes:
		return memory.Errorf(memory.ErrTooLarge, "extract: the fact text is %d bytes, the limit is %d", len(text), MaxFactBytes)
	case !utf8.ValidString(text):
		return memory.Errorf(memory.ErrInvalidArgument, "extract: the fact text is not valid UTF-8")
	}
	for _, r := range text {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return memory.Errorf(memory.ErrInvalidArgument, "extract: the fact text %q is not one line: it contains %U", text, r)
		}
	}
	if strings.TrimSpace(text) != text {
		return memory.Errorf(memory.ErrInvalidArgument, "extract: the fact text %q has leading or trailing white space", text)
	}
	return nil
}
