package extract

import (
	"context"

	"github.com/agentmem/memory"
)

// Fact is one candidate long-term fact, as an Extractor proposes it. The
// caller decides what to store: it gives the fact its scope, attribution,
// id and validity.
type Fact struct {
	// Text is the fact: one line of valid UTF-8, without leading or
	// trailing white space, at most MaxFactBytes long, never empty.
	Text string
	// Sources are the ids of the turns the fact was taken from, each once,
	// in the order the turns were given (the order they were said). An
	// Extractor never returns a fact without sources, nor a source that is
	// not one of the turns it was given.
	Sources []string
	// Supersedes is the id of a known fact this one replaces or
	// contradicts ("I moved to Berlin" after "I live in Paris"); empty
	// when it replaces none. It is always the id of one of the known facts
	// the Extractor was given.
	Supersedes string
}

// Usage is what a call spent on language models, for cost accounting.
// The zero value is a call that used no model.
type Usage struct {
	// ModelCalls counts the requests made to a model, failed ones
	// included.
	ModelCalls int
	// PromptTokens and CompletionTokens are the tokens the model's
	// provider reported for those requests: the input it read and the
	// output it wrote. Nothing is estimated: a request whose provider
	// reported no counts adds nothing here and one to UnreportedCalls.
	PromptTokens, CompletionTokens int
	// UnreportedCalls counts the requests among ModelCalls whose tokens
	// are not in the totals, because the provider reported none or the
	// request failed before it could.
	UnreportedCalls int
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		ModelCalls:       u.ModelCalls + v.ModelCalls,
		PromptTokens:     u.PromptTokens + v.PromptTokens,
		CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		UnreportedCalls:  u.UnreportedCalls + v.UnreportedCalls,
	}
}

// Extractor turns a batch of conversation turns into candidate long-term
// facts. The tiered memory calls it once per fold, with the turns the
// fold evicted from the short-term window, never once per turn.
//
// turns are the evicted turns, records of kind memory.KindTurn in the
// order they were said; they must pass CheckExtract together with known.
// known are facts already stored in the scope (kind memory.KindFact), so
// that an implementation can leave out what is already known and name
// what a new fact supersedes; it may be nil. Extract returns the
// candidate facts, none of them equal (by words, ignoring case and
// punctuation) to another or to a known fact, each as Fact describes.
// With no turns it returns no facts and uses no model.
//
// Usage reports what the call spent, also when err is not nil: a model
// that answered with something unusable was still paid for.
//
// Errors: input that fails CheckExtract is memory.ErrInvalidArgument or
// memory.ErrTooLarge, returned before any model is called; a model that
// failed or could not be reached is memory.ErrUnavailable; a reply that
// cannot be used wraps ErrMalformedOutput, and no facts come with it. A
// context that ends first gives its error unchanged. Implementations are
// safe for concurrent use.
type Extractor interface {
	Extract(ctx context.Context, turns, known []memory.Record) ([]Fact, Usage, error)
}

// Summarizer folds evicted turns into a session's rolling narrative
// digest, the medium-term tier: "a single rolling narrative digest per
// session that preserves continuity once older turns leave the window".
// The tiered memory calls it once per fold.
//
// previous is the session's latest digest, empty before the first fold;
// turns are the evicted turns in the order they were said. Both must pass
// CheckSummarize. Summarize returns the new digest, which replaces
// previous: it carries on what previous said, with the turns folded in.
// With no turns it returns previous unchanged and uses no model.
//
// Usage and errors are as for Extractor.Extract; an unusable reply wraps
// ErrMalformedOutput and no digest comes with it.
type Summarizer interface {
	Summarize(ctx context.Context, previous string, turns []memory.Record) (string, Usage, error)
}
