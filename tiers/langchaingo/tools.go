package langchaingo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/tiers/tiered"
)

// The tools' names, as the memory service document spells them.
const (
	SaveName   = "save_memory"
	SearchName = "search_memory"
)

// Limits of the tools' input.
const (
	// MaxQueryBytes is the longest query SearchTool takes.
	MaxQueryBytes = 4096
	// MaxSearchK is the most facts one search returns.
	MaxSearchK = 50
	// DefaultSearchK is how many facts a search returns when neither the
	// model nor SearchOptions.K says.
	DefaultSearchK = 5
	// MaxInputBytes is the longest input either tool's Call reads: the
	// longest query or fact with room for the JSON around it.
	MaxInputBytes = MaxQueryBytes + 1024
)

// SaveTool is the save_memory tool: the model stores one fact on purpose,
// as a long-term fact written by the bound identity
// (tiered.Interface.Remember: the identity's compound attribution, no
// level), recalled later by relevance like the facts folds extract. It
// implements langchaingo's tools.Tool and is safe for concurrent use as far
// as its tiered.Interface is.
type SaveTool struct {
	mem tiered.Interface
	id  memory.Identity
}

// NewSaveTool returns the save_memory tool writing to mem as id: the
// identity the host program verified for the running agent, never one taken
// from the model's arguments. A nil mem is memory.ErrInvalidArgument, and
// an invalid identity is refused as memory.Identity.Validate refuses it.
func NewSaveTool(mem tiered.Interface, id memory.Identity) (*SaveTool, error) {
	if err := checkBinding(mem, id, "the "+SaveName+" tool", false); err != nil {
		return nil, err
	}
	return &SaveTool{mem: mem, id: id}, nil
}

// Name returns SaveName.
func (t *SaveTool) Name() string { return SaveName }

// Description tells the model what the tool does and how to call it.
func (t *SaveTool) Description() string {
	return "Save one fact to long-term memory so that it can be recalled in later conversations: " +
		"something worth remembering about the user, their preferences or the task, " +
		"written as one short, self-contained sentence. " +
		fmt.Sprintf(`Input: the fact as plain text (one line, at most %d bytes), or a JSON object {"fact": "..."}.`, extract.MaxFactBytes)
}

// Call stores the fact input holds (see ParseSaveInput) and answers with
// what was saved. A mistake in the model's input is not a Go error, which
// would end an agent executor's run: Call answers with text that starts
// with "The save_memory call was not run: ", says what was wrong and how
// to call the tool, and a nil error, so the model can call again. Go errors
// are kept for failures the model cannot fix: ctx's end (its error,
// unchanged) and the memory's errors, classified.
func (t *SaveTool) Call(ctx context.Context, input string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	fact, err := ParseSaveInput(input)
	if err != nil {
		return mistake(SaveName, err, saveUsage), nil
	}
	if _, err := t.mem.Remember(ctx, t.id, fact); err != nil {
		return "", err
	}
	return "Saved to long-term memory: " + fact + "\n", nil
}

// saveUsage tells the model how to call save_memory, after a mistake.
var saveUsage = fmt.Sprintf(`Call %s with the fact as plain text, or a JSON object {"fact": "..."}: `+
	`one line without tabs, not empty, at most %d bytes.`, SaveName, extract.MaxFactBytes)

// ParseSaveInput returns the fact a save_memory input holds: plain text
// taken whole, a JSON string, or a JSON object {"fact": "..."} with no
// other fields, trimmed of surrounding white space. The fact must be one a
// tiered memory stores (extract.CheckFactText: not empty, one line, at most
// extract.MaxFactBytes bytes). Input that is not valid UTF-8 or well-formed,
// or a fact that is not one line, is memory.ErrInvalidArgument; input
// longer than MaxInputBytes, or a longer fact, memory.ErrTooLarge.
func ParseSaveInput(input string) (string, error) {
	s, err := checkInput(SaveName, input)
	if err != nil {
		return "", err
	}
	switch {
	case strings.HasPrefix(s, "{"):
		var raw struct {
			Fact *string `json:"fact"`
		}
		if err := decodeObject(SaveName, s, &raw, `{"fact": "..."}`); err != nil {
			return "", err
		}
		if raw.Fact == nil {
			return "", memory.Errorf(memory.ErrInvalidArgument, `%s arguments: "fact" is missing`, SaveName)
		}
		s = *raw.Fact
	case strings.HasPrefix(s, `"`):
		if s, err = decodeString(SaveName, s); err != nil {
			return "", err
		}
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", memory.Errorf(memory.ErrInvalidArgument, "%s arguments: the fact is empty", SaveName)
	}
	if err := extract.CheckFactText(s); err != nil {
		var me *memory.Error
		if errors.As(err, &me) {
			return "", memory.Errorf(me.Kind, "%s arguments: the fact %s", SaveName, strings.TrimPrefix(me.Msg, "extract: the fact text "))
		}
		return "", err
	}
	return s, nil
}

// SearchOptions configure a SearchTool. The zero value is the documented
// default.
type SearchOptions struct {
	// MaxReadScope is the widest level the tool searches facts at
	// (memory.LevelSession, LevelAgent, LevelUser or LevelStore, from the
	// narrowest), and the level it searches at when the model names none:
	// the service document's maxReadScope, set by the host program. A
	// wider scope the model asks for is capped to it, never widened. Empty
	// means memory.LevelSession.
	MaxReadScope memory.Level
	// K is how many facts a search returns when the model gives no k, 1
	// to MaxSearchK; zero means DefaultSearchK.
	K int
	// Logger is told of a search whose fact tier could not be read; nil
	// discards it.
	Logger *slog.Logger
}

// SearchTool is the search_memory tool: the model searches long-term facts
// (the facts folds extracted from earlier conversations, and those saved
// with save_memory) by relevance, at a level no wider than the bound
// maximum read scope. It implements langchaingo's tools.Tool and is safe
// for concurrent use as far as its tiered.Interface is.
type SearchTool struct {
	mem   tiered.Interface
	id    memory.Identity
	opt   SearchOptions
	usage string
}

// NewSearchTool returns the search_memory tool reading mem as id: the
// identity the host program verified for the running agent, never one
// taken from the model's arguments. A nil mem, a MaxReadScope other than
// the four tiered levels, or a K out of range is memory.ErrInvalidArgument,
// and an invalid identity is refused as memory.Identity.Validate refuses
// it. Whether id has what a level needs is the memory's to check, on each
// search.
func NewSearchTool(mem tiered.Interface, id memory.Identity, opt SearchOptions) (*SearchTool, error) {
	if err := checkBinding(mem, id, "the "+SearchName+" tool", false); err != nil {
		return nil, err
	}
	if opt.MaxReadScope == "" {
		opt.MaxReadScope = memory.LevelSession
	}
	if err := checkTieredLevel(opt.MaxReadScope); err != nil {
		return nil, err
	}
	if opt.K == 0 {
		opt.K = DefaultSearchK
	}
	if opt.K < 1 || opt.K > MaxSearchK {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "langchaingo: the %s tool's K is %d; it must be from 1 to %d", SearchName, opt.K, MaxSearchK)
	}
	t := &SearchTool{mem: mem, id: id, opt: opt}
	t.usage = fmt.Sprintf(`Call %s with a JSON object {"query": "what to look for", "scope": "%s", "k": %d}: `+
		`"query" is required, not empty, at most %d bytes; "scope" is optional, one of %s (default %q); `+
		`"k" is optional, a whole number from 1 to %d (default %d); no other fields. Plain text is also taken as the query.`,
		SearchName, opt.MaxReadScope, opt.K, MaxQueryBytes, t.scopes(), string(opt.MaxReadScope), MaxSearchK, opt.K)
	return t, nil
}

// scopes lists the levels the tool may search at, quoted, from the
// narrowest.
func (t *SearchTool) scopes() string {
	var q []string
	for _, l := range levels[:width[t.opt.MaxReadScope]+1] {
		q = append(q, strconv.Quote(string(l)))
	}
	return strings.Join(q, ", ")
}

// Name returns SearchName.
func (t *SearchTool) Name() string { return SearchName }

// Description tells the model what the tool does, the scopes it may
// search and how to call it.
func (t *SearchTool) Description() string {
	return "Search long-term memory for facts learned in earlier conversations or saved with " + SaveName + ", most relevant first. " +
		`The scope says whose memory is searched: "session" this conversation, "agent" this agent's conversations with this user, ` +
		`"user" everything this user said to any agent, "store" the whole store; this tool may search ` + t.scopes() + ". " +
		fmt.Sprintf(`Input: a JSON object {"query": "...", "scope": %q, "k": %d}, scope and k optional, or plain text taken as the query.`, string(t.opt.MaxReadScope), t.opt.K)
}

// Call searches long-term facts for the query input holds (see
// ParseSearchInput) at the scope it names, capped to
// SearchOptions.MaxReadScope (a wider scope is searched at the cap, and
// the answer says so), and answers with the facts found, best first, as
// tiered.Render renders facts. A mistake in the model's input is not a Go
// error: Call answers with text that starts with
// "The search_memory call was not run: ", says what was wrong and how to
// call the tool, and a nil error. A fact tier that cannot be read is
// answered as such, with a nil error, as recall is soft (and logged to
// SearchOptions.Logger). Go errors are kept for failures the model cannot
// fix: ctx's end (its error, unchanged), a bound identity without what the
// level needs (memory.ErrIncompleteScope), a level the posture refuses,
// a closed memory.
func (t *SearchTool) Call(ctx context.Context, input string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	args, err := ParseSearchInput(input)
	if err != nil {
		return mistake(SearchName, err, t.usage), nil
	}
	level, capped := t.Scope(args.Scope)
	k := args.K
	if k == 0 {
		k = t.opt.K
	}
	rec, err := t.mem.RecallWith(ctx, t.id, args.Query, tiered.RecallOptions{Level: level, K: k})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if capped {
		fmt.Fprintf(&b, "Scope %q is wider than this agent may read; searched at %q instead.\n", string(args.Scope), string(level))
	}
	if rec.Errors.Facts != nil {
		if t.opt.Logger != nil {
			t.opt.Logger.WarnContext(ctx, "langchaingo: search_memory could not read facts", "level", string(level), "err", rec.Errors.Facts)
		}
		b.WriteString("Long-term memory could not be searched just now; go on without it.\n")
		return b.String(), nil
	}
	n := len(rec.Facts)
	switch n {
	case 0:
		fmt.Fprintf(&b, "No facts in %s memory match %q.\n", string(level), args.Query)
	default:
		noun := "facts"
		if n == 1 {
			noun = "fact"
		}
		fmt.Fprintf(&b, "%d %s from %s memory for %q, best first:\n", n, noun, string(level), args.Query)
		b.WriteString(tiered.Render(tiered.Recollection{Facts: rec.Facts}) + "\n")
	}
	return b.String(), nil
}

// Scope returns the level a search asking for requested runs at, and
// whether it was capped: requested itself when it is no wider than
// SearchOptions.MaxReadScope, the maximum read scope when it is wider or
// empty (capped is true only for a wider one). requested must be one of
// the four tiered levels or empty; ParseSearchInput returns no other.
func (t *SearchTool) Scope(requested memory.Level) (memory.Level, bool) {
	w, ok := width[requested]
	switch {
	case requested == "" || !ok:
		return t.opt.MaxReadScope, false
	case w > width[t.opt.MaxReadScope]:
		return t.opt.MaxReadScope, true
	}
	return requested, false
}

// SearchArgs are a search_memory call's arguments.
type SearchArgs struct {
	// Query is the text to look for, trimmed of surrounding white space.
	Query string
	// Scope is the level asked for: one of the four tiered levels, or
	// empty for the tool's maximum read scope.
	Scope memory.Level
	// K is how many facts at most, 1 to MaxSearchK; zero means the tool's
	// SearchOptions.K.
	K int
}

// ParseSearchInput parses a search_memory input: a JSON object
// {"query": "...", "scope": "session" | "agent" | "user" | "store", "k": n}
// with scope and k optional and no other fields, a JSON string, or plain
// text taken whole as the query. The query must not be empty. Input that is
// not valid UTF-8 or well-formed, holds unknown fields, an unknown scope or
// a k that is not a whole number from 1 to MaxSearchK is
// memory.ErrInvalidArgument; input longer than MaxInputBytes, or a query
// longer than MaxQueryBytes, memory.ErrTooLarge.
func ParseSearchInput(input string) (SearchArgs, error) {
	s, err := checkInput(SearchName, input)
	if err != nil {
		return SearchArgs{}, err
	}
	var args SearchArgs
	switch {
	case strings.HasPrefix(s, "{"):
		var raw struct {
			Query *string         `json:"query"`
			Scope string          `json:"scope"`
			K     json.RawMessage `json:"k"`
		}
		if err := decodeObject(SearchName, s, &raw, `{"query": "...", "scope": "...", "k": n}`); err != nil {
			return SearchArgs{}, err
		}
		if raw.Query == nil {
			return SearchArgs{}, memory.Errorf(memory.ErrInvalidArgument, `%s arguments: "query" is missing`, SearchName)
		}
		args.Query = *raw.Query
		if raw.Scope != "" {
			if _, ok := width[memory.Level(raw.Scope)]; !ok {
				return SearchArgs{}, memory.Errorf(memory.ErrInvalidArgument, `%s arguments: "scope" is %q; it must be "session", "agent", "user" or "store"`, SearchName, raw.Scope)
			}
			args.Scope = memory.Level(raw.Scope)
		}
		if raw.K != nil {
			// A JSON number, not a string holding one: ParseFloat
			// refuses the quotes.
			f, err := strconv.ParseFloat(string(raw.K), 64)
			if err != nil || f != math.Trunc(f) || f < 1 || f > MaxSearchK {
				return SearchArgs{}, memory.Errorf(memory.ErrInvalidArgument, `%s arguments: "k" is %s; it must be a whole number from 1 to %d`, SearchName, string(raw.K), MaxSearchK)
			}
			args.K = int(f)
		}
	case strings.HasPrefix(s, `"`):
		if args.Query, err = decodeString(SearchName, s); err != nil {
			return SearchArgs{}, err
		}
	default:
		args.Query = s
	}
	args.Query = strings.TrimSpace(args.Query)
	switch {
	case args.Query == "":
		return SearchArgs{}, memory.Errorf(memory.ErrInvalidArgument, "%s arguments: the query is empty", SearchName)
	case len(args.Query) > MaxQueryBytes:
		return SearchArgs{}, memory.Errorf(memory.ErrTooLarge, "%s arguments: the query is %d bytes, the limit is %d", SearchName, len(args.Query), MaxQueryBytes)
	}
	return args, nil
}

// checkInput checks a tool's raw input for size and encoding and returns
// it trimmed.
func checkInput(tool, input string) (string, error) {
	if len(input) > MaxInputBytes {
		return "", memory.Errorf(memory.ErrTooLarge, "%s arguments: the input is %d bytes, the limit is %d", tool, len(input), MaxInputBytes)
	}
	if !utf8.ValidString(input) {
		return "", memory.Errorf(memory.ErrInvalidArgument, "%s arguments: the input is not valid UTF-8", tool)
	}
	return strings.TrimSpace(input), nil
}

// decodeObject decodes s, a JSON object, into v, refusing unknown fields
// and text after the object.
func decodeObject(tool, s string, v any, shape string) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return memory.Errorf(memory.ErrInvalidArgument, "%s arguments: want a JSON object %s: %v", tool, shape, err)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return memory.Errorf(memory.ErrInvalidArgument, "%s arguments: unexpected text after the JSON object", tool)
	}
	return nil
}

// decodeString decodes s, a JSON string, such as a model that quotes its
// input writes.
func decodeString(tool, s string) (string, error) {
	var out string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return "", memory.Errorf(memory.ErrInvalidArgument, "%s arguments: the input starts with a quote but is not one JSON string: %v", tool, err)
	}
	return out, nil
}

// mistake is a tool's answer to input it could not use: what was wrong,
// then how to call it.
func mistake(tool string, err error, usage string) string {
	msg := err.Error()
	var me *memory.Error
	if errors.As(err, &me) {
		msg = strings.TrimPrefix(me.Msg, tool+" arguments: ")
	}
	return "The " + tool + " call was not run: " + msg + ".\n" + usage + "\n"
}
