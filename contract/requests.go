package contract

import (
	"github.com/agentmem/memory"
)

// Tier names one tier of the tiered memory in a request's include list and
// in a recall's per-tier errors.
type Tier string

// The tiers.
const (
	// TierShort is the session's window of verbatim turns.
	TierShort Tier = "short"
	// TierMedium is the session's rolling digest.
	TierMedium Tier = "medium"
	// TierLong is the long-term facts.
	TierLong Tier = "long"
)

// Includes reports whether include selects t: an empty include selects
// every tier.
func Includes(include []Tier, t Tier) bool {
	if len(include) == 0 {
		return true
	}
	for _, i := range include {
		if i == t {
			return true
		}
	}
	return false
}

// LeftOut returns which tiers include leaves out: the window (short), the
// digest (medium), the facts (long) — tiered.RecallOptions' and
// tiered.ListOptions' NoWindow, NoDigest and NoFacts.
func LeftOut(include []Tier) (noWindow, noDigest, noFacts bool) {
	return !Includes(include, TierShort), !Includes(include, TierMedium), !Includes(include, TierLong)
}

// Include returns the include list that leaves out the tiers named: nil
// (every tier) when none is, and empty when all are.
func Include(noWindow, noDigest, noFacts bool) []Tier {
	if !noWindow && !noDigest && !noFacts {
		return nil
	}
	include := []Tier{}
	for _, t := range []struct {
		left bool
		tier Tier
	}{{noWindow, TierShort}, {noDigest, TierMedium}, {noFacts, TierLong}} {
		if !t.left {
			include = append(include, t.tier)
		}
	}
	return include
}

// MaxTextBytes is the longest recall text: memory.MaxContentBytes, the
// longest text a record may hold.
const MaxTextBytes = memory.MaxContentBytes

// RecallRequest asks what the caller should remember before a turn about
// Text (tiered.Memory.RecallWith).
type RecallRequest struct {
	// Text is what the turn is about; facts are ranked by it, and none
	// are recalled when it is empty.
	Text string `json:"text"`
	// Scope is the level facts are recalled at: session, agent, user or
	// store. Empty means session.
	Scope memory.Level `json:"scope,omitempty"`
	// Include selects the tiers returned; empty means all three. A tier
	// left out is not read and takes none of the budget
	// (tiered.RecallOptions' NoWindow, NoDigest, NoFacts).
	Include []Tier `json:"include,omitempty"`
	// K is how many facts at most; zero means the server's default.
	K int `json:"k,omitempty"`
	// Budget is the tokens the recalled records may hold together; zero
	// means the server's window budget, which also caps it.
	Budget int `json:"budget,omitempty"`
}

// RecallResponse is a recollection (tiered.Recollection). A recall is
// soft: a tier that could not be read sets Degraded and its entry of
// Errors, and the response is still a success.
type RecallResponse struct {
	// Turns are the window's turns that fit, oldest first.
	Turns []Record `json:"turns"`
	// Digest is the latest digest, or null.
	Digest *Record `json:"digest"`
	// Facts are the most relevant facts, best first, with their scores.
	Facts []Fact `json:"facts"`
	// Text is the rendered block of the tiers returned; Tokens its token
	// count.
	Text   string `json:"text"`
	Tokens int    `json:"tokens"`
	// Usage is what the recall spent on models.
	Usage Usage `json:"usage,omitzero"`
	// Degraded reports that a tier could not be read; Errors says which
	// and why.
	Degraded bool       `json:"degraded"`
	Errors   TierErrors `json:"errors,omitzero"`
}

// Fact is a recalled fact and its relevance score (recall.Result).
type Fact struct {
	Record Record  `json:"record"`
	Score  float64 `json:"score"`
}

// TierErrors are the failures of a recall's tiers, by tier; absent where
// a tier was read.
type TierErrors struct {
	Short  *Error `json:"short,omitempty"`
	Medium *Error `json:"medium,omitempty"`
	Long   *Error `json:"long,omitempty"`
}

// Usage is what a call spent on language models (extract.Usage).
type Usage struct {
	ModelCalls       int `json:"model_calls,omitempty"`
	PromptTokens     int `json:"prompt_tokens,omitempty"`
	CompletionTokens int `json:"completion_tokens,omitempty"`
	UnreportedCalls  int `json:"unreported_calls,omitempty"`
}

// ListRequest asks for every fact at a scope and the session's window and
// digest (tiered.Memory.List).
type ListRequest struct {
	// Scope is the level facts are listed at; empty means session.
	Scope memory.Level `json:"scope,omitempty"`
	// Include selects the tiers listed; empty means all three. Without
	// short and medium no session is needed.
	Include []Tier `json:"include,omitempty"`
	// Budget is the window's token budget; zero means the server's.
	Budget int `json:"budget,omitempty"`
}

// ListResponse is a listing (tiered.Listing).
type ListResponse struct {
	// Turns are the session's window, oldest first.
	Turns []Record `json:"turns"`
	// Digest is the session's latest digest, or null.
	Digest *Record `json:"digest"`
	// Facts are every live fact at the scope, newest first.
	Facts []Record `json:"facts"`
}

// WriteRequest stores turns in the caller's session
// (tiered.Memory.Append) and memories the agent saves on purpose, as
// long-term facts (tiered.Memory.Remember). Memories are stored first:
// storing a text twice stores it once, so a write retried after a failure
// never stores them twice. A request that names neither field appends no
// turns, which checks the caller may write to its session.
type WriteRequest struct {
	// Turns are appended in order, as one batch; absent means none.
	Turns []Turn `json:"turns"`
	// Memories are fact texts; absent means none.
	Memories []string `json:"memories"`
}

// Turn is one turn to append (tiered.Turn).
type Turn struct {
	Role    memory.Role `json:"role"`
	Content string      `json:"content"`
	// Speaker, when not empty, names who said it.
	Speaker string `json:"speaker,omitempty"`
}

// WriteResponse says what a write stored. Its status is 202 Accepted when
// Folding (background work was scheduled), else 200.
type WriteResponse struct {
	// Turns is how many turns were appended.
	Turns int `json:"turns"`
	// Folding reports that the append queued a fold of the session.
	Folding bool `json:"folding"`
	// Memories are the memories' fact records as stored.
	Memories []Record `json:"memories"`
	// Replayed reports that the turns were stored before, by an earlier
	// request with the same Idempotency-Key (found in the store, so by any
	// replica of the service): this request stored none of them again.
	Replayed bool `json:"replayed,omitempty"`
}

// ForgetRequest erases every tier at a scope (tiered.Memory.Forget).
type ForgetRequest struct {
	// Scope is the level erased: session, agent, user or store. It is
	// required.
	Scope memory.Level `json:"scope"`
}

// ForgetResponse counts what an erasure removed, per tier
// (tiered.Erased).
type ForgetResponse struct {
	Turns   int64 `json:"turns"`
	Digests int64 `json:"digests"`
	Facts   int64 `json:"facts"`
	Work    int64 `json:"work"`
}
