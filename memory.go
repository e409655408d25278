package memory

import (
	"context"
	"time"
)

// Kind says what a Record is. Each kind is one thing an origin document stores.
type Kind string

// The record kinds.
const (
	// KindTurn is one verbatim conversation turn (short-term window).
	KindTurn Kind = "turn"
	// KindSummary is a one-line step summary (the summary memory type).
	KindSummary Kind = "summary"
	// KindDigest is a rolling narrative digest of a session (the
	// medium-term tier).
	KindDigest Kind = "digest"
	// KindFact is a long-term fact or a stored memory entry recalled by
	// relevance. Its id is derived from its scope and content.
	KindFact Kind = "fact"
	// KindSuperseded is a long-term fact that a newer fact superseded:
	// kept, with its history, under its own id and listable, but never
	// recalled by relevance (package tiers/facts rewrites a KindFact
	// record to this kind when it supersedes it).
	KindSuperseded Kind = "superseded"
	// KindDocument is a keyed JSON working-memory row: Key is memory_key,
	// Label is memory_type, Content is memory_json. Its id is derived from
	// its scope and key.
	KindDocument Kind = "document"
)

// Kinds lists every record kind.
var Kinds = []Kind{KindTurn, KindSummary, KindDigest, KindFact, KindSuperseded, KindDocument}

// Valid reports whether k is one of the defined kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindTurn, KindSummary, KindDigest, KindFact, KindSuperseded, KindDocument:
		return true
	}
	return false
}

// Role is who spoke a turn.
type Role string

// The conversation roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
	RoleTool      Role = "tool"
)

// Roles lists every conversation role.
var Roles = []Role{RoleUser, RoleAssistant, RoleSystem, RoleTool}

// Valid reports whether r is one of the conversation roles. A turn
// (KindTurn) carries its role in Label, and backend.Store refuses a turn
// whose label is not a valid role.
func (r Role) Valid() bool {
	switch r {
	case RoleUser, RoleAssistant, RoleSystem, RoleTool:
		return true
	}
	return false
}

// Record is the unit every driver stores. One struct serves every kind so
// that scope, attribution, expiry and erasure work identically for all of
// them; the constructors NewTurn, NewSummary, NewFact and NewDocument fill
// it correctly for each kind.
type Record struct {
	// ID is stable and unique within its tenant (Identity.Tenant): two
	// tenants' records under one id are two records. See NewID and
	// ContentID.
	ID string
	// Kind says what the record is.
	Kind Kind
	// Identity is the writer's full identity (compound attribution).
	Identity Identity
	// Label is the turn's role for turns, memory_type for documents, and a
	// free classification for other kinds.
	Label string
	// Key is memory_key for documents and the "<workflow>/<step>" source of a
	// step summary; empty when the kind has none.
	Key string
	// Content is the text, or the JSON payload of a document.
	Content string
	// Metadata holds optional string attributes. One key has a meaning
	// of its own: SpeakerKey.
	Metadata map[string]string
	// Created is when the record was written.
	Created time.Time
	// Expires is when the record stops being returned; zero means never.
	Expires time.Time
	// Tokens caches the token count of Content, computed once when the
	// record is written; zero means not counted (backend.Store counts every
	// kind but documents).
	Tokens int
	// Version counts the writes of this id: a store sets it to 1 when the
	// id is first stored and adds one on every replacement, so a reader
	// can make a conditional write (driver.Swapper) that fails if anyone
	// wrote in between. It is ignored on input; after a delete the id
	// starts again at 1.
	Version int64
	// Vector is an optional embedding of Content for similarity search; nil
	// means none. Its values must be finite and not all zero, and a store
	// holds vectors of one dimension only (MaxVectorDims at most).
	Vector []float32
}

// SpeakerKey is the Metadata key that names who said a turn (or wrote a
// record): a display name such as "Caroline". Recall (package recall)
// boosts a record whose speaker the query names, and drivers with a text
// index keep it beside each record's text for that (driver.Ref).
const SpeakerKey = "speaker"

// Expired reports whether r has expired at now.
func (r Record) Expired(now time.Time) bool {
	return !r.Expires.IsZero() && !now.Before(r.Expires)
}

// Query selects records within the caller's scope.
type Query struct {
	// Level selects whose records are visible; it is required.
	Level Level
	// Kinds restricts the result to these kinds; empty means all.
	Kinds []Kind
	// Key restricts the result to one key; empty means any.
	Key string
	// Limit keeps only the newest Limit records; zero means no limit.
	Limit int
}

// TokenCounter counts the tokens of a text. Implementations must be safe for
// concurrent use and deterministic, and return ctx's error unchanged when
// ctx ends before a count is done (a count of a long text stops early).
// Callers check the text's size and validity before counting it.
type TokenCounter interface {
	CountTokens(ctx context.Context, text string) (int, error)
}

// Store writes records attributed to the caller and lists what the caller's
// identity may see.
type Store interface {
	// Add writes records with the caller's full identity. A batch is stored
	// whole or not at all.
	Add(ctx context.Context, id Identity, recs ...Record) error
	// List returns the records visible to id under q, newest first.
	List(ctx context.Context, id Identity, q Query) ([]Record, error)
}

// Recollection is context assembled for a prompt.
type Recollection struct {
	// Records are the records used, in the order they appear in Text.
	Records []Record
	// Text is the rendered block, ready to prepend to a system prompt; empty
	// when there is nothing to recall.
	Text string
	// Tokens is the token count of Text by the store's counter (its
	// TokenCounter); 0 when Text is empty.
	Tokens int
	// Degraded, when not nil, says why part of what would be recalled is
	// missing (a tier or a search that failed); Records and Text hold the
	// rest. Recall is soft about such partial failures: they degrade the
	// recollection instead of failing the call. What leaves nothing to
	// recall from (an ended context, an invalid identity or incomplete
	// scope, a closed memory, the failure of the only source a type reads)
	// is still the call's error, so a type that recalls from one source
	// never sets Degraded; each type's documentation says which it is.
	Degraded error
}

// Recaller assembles what a caller should remember before a step or turn.
type Recaller interface {
	// Recall returns what id should remember before working on about: the
	// text the step or turn is about (the user's request, the task's
	// input). A type that recalls by relevance ranks by it; a type that
	// recalls by recency ignores it (each type's documentation says
	// which). about may be empty.
	Recall(ctx context.Context, id Identity, about string) (Recollection, error)
}

// Forgetter erases every record visible to id at a level and reports how
// many were removed.
type Forgetter interface {
	Forget(ctx context.Context, id Identity, level Level) (int64, error)
}
