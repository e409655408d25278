// Package vectortool offers vector memory's keyword search to a model as
// the built-in "vector-search" function tool of the per-agent memory
// document: the model passes a query, the tool returns the top matches,
// each with the name of the entry it comes from so the model can cite it.
//
// Tool implements langchaingo's tools.Tool interface (Name, Description,
// Call) for agents and executors. For langchaingo's function calling,
// Definition gives the JSON-schema function definition (llms.WithFunctions)
// and LLMTool wraps it as a function tool (llms.WithTools).
// The search always runs as the identity the host program bound to the
// Tool, never one taken from the model's arguments. A model's mistake in
// its arguments comes back as the tool's text answer, so the model can
// call again; Call returns a Go error only for failures the model cannot
// fix.
package vectortool

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/tiers"
)

// Name is the tool's name, as the document spells it.
const Name = "vector-search"

// Description tells the model what the tool does and how to call it.
//
// The origin document says entries are scored "by term frequency"; the
// score is BM25, the term-frequency score of search engines, and the
// description says exactly what it computes (see tiers.Vector.Search).
const Description = "Search this agent's memory of past runs by keyword. " +
	"Entries are scored by term frequency with BM25 (k1 = 1.2, b = 0.75): words are case-folded, common English stopwords dropped and the rest stemmed " +
	"(\"restarted\" matches \"restart\"); an entry scores higher the more often it holds the query's words, the rarer those words are among this agent's entries, and the shorter it is. " +
	"The best matches are returned, each with the name of the memory entry it comes from: cite that name when you use a match. " +
	`Input: a JSON object {"query": "words to look for", "k": number of matches, 1 to 100, default 5}, or plain text taken as the query.`

// Tool is the vector-search tool bound to one caller's scope. It
// implements langchaingo's tools.Tool. It is safe for concurrent use.
//
// The interface is satisfied by method set; this package does not import
// github.com/tmc/langchaingo/tools, whose calculator tool would pull a
// Starlark interpreter (go.starlark.net) into every program using it.
type Tool struct {
	mem *tiers.Vector
	who memory.Identity
}

// New returns the tool searching mem as who: the identity the host program
// verified for the running agent. The search sees only who's agent-level
// scope. A nil mem or a malformed identity is memory.ErrInvalidArgument.
func New(mem *tiers.Vector, who memory.Identity) (*Tool, error) {
	if mem == nil {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "the vector-search tool needs vector memory")
	}
	if err := who.Validate(); err != nil {
		return nil, err
	}
	return &Tool{mem: mem, who: who}, nil
}

// Name returns "vector-search".
func (t *Tool) Name() string { return Name }

// Description returns Description.
func (t *Tool) Description() string { return Description }

// Call runs a search as the Tool's identity. input is the model's
// arguments (see ParseArgs); the answer lists the matches, best first,
// each headed by its entry name (see Format).
//
// A mistake in the model's arguments — input that is not UTF-8 or longer
// than MaxInputBytes, malformed JSON, an unknown field, k out of range, an
// empty or wordless or too long query — is not a Go error, which would
// make an agent executor abort the whole run: Call answers with text that
// starts with MistakePrefix, says what was wrong and how to call the
// tool, and a nil error, so the model can correct itself. Go errors are
// kept for real failures, which the model cannot fix: a done context (its
// error, unchanged), a closed Vector (memory.ErrClosed), a bound identity
// without the agent-level scope (memory.ErrIncompleteScope), and storage
// failures (classified, the file-system error reachable with errors.As).
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	args, err := ParseArgs(input)
	if err != nil {
		return mistake(err), nil
	}
	matches, err := t.mem.Search(ctx, t.who, args.Query, args.K)
	if err != nil {
		return "", err
	}
	return Format(args.Query, matches), nil
}

// MistakePrefix starts Call's answer to arguments it could not use.
const MistakePrefix = "The vector-search call was not run: "

// usage tells the model how to call the tool, after a mistake.
var usage = fmt.Sprintf(`Call vector-search with a JSON object {"query": "words to look for", "k": %d}: `+
	`"query" is required and must hold at least one word (at most %d bytes); `+
	`"k" is optional, a whole number from 1 to %d (default %d); no other fields. Plain text is also taken as the query.`,
	DefaultK, tiers.MaxSearchQueryBytes, tiers.MaxSearchResults, DefaultK)

// mistake is Call's answer to arguments ParseArgs refused: what was wrong,
// then how to call the tool.
func mistake(err error) string {
	msg := err.Error()
	var me *memory.Error
	if errors.As(err, &me) {
		msg = strings.TrimPrefix(me.Msg, "vector-search arguments: ")
	}
	return MistakePrefix + msg + ".\n" + usage + "\n"
}

// Definition returns the tool's function definition for langchaingo's
// function calling: its Parameters are a JSON-schema object with a
// required string "query" and an optional integer "k".
func Definition() llms.FunctionDefinition {
	return llms.FunctionDefinition{
		Name:        Name,
		Description: Description,
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query": map[string]any{
					"type":        "string",
					"description": "Words to look for in past memory entries.",
				},
				"k": map[string]any{
					"type":        "integer",
					"description": fmt.Sprintf("How many matches to return (default %d).", DefaultK),
					"minimum":     1,
					"maximum":     tiers.MaxSearchResults,
				},
			},
			"required":             []string{"query"},
			"additionalProperties": false,
		},
	}
}

// LLMTool returns Definition wrapped as a langchaingo function tool, for
// llms.WithTools.
func LLMTool() llms.Tool {
	def := Definition()
	return llms.Tool{Type: "function", Function: &def}
}

// Format renders matches for the model, best first: a count line, then per
// match a line naming the entry, its BM25 score (three decimals) and when
// it was saved, followed
// by the entry's text as tiers.RecalledLine renders it in the recalled
// block (one line, the block's delimiters neutralised), so a found entry
// cannot forge them in the model's context either.
func Format(query string, matches []tiers.VectorMatch) string {
	if len(matches) == 0 {
		return fmt.Sprintf("No memory entries match %q.\n", query)
	}
	var b strings.Builder
	noun := "matches"
	if len(matches) == 1 {
		noun = "match"
	}
	fmt.Fprintf(&b, "%d %s for %q, best first; cite the entry name:\n", len(matches), noun, query)
	for _, m := range matches {
		fmt.Fprintf(&b, "\nentry %s (score %.3f, saved %s)\n%s\n", m.Entry, m.Score, m.Created.Format("2006-01-02T15:04:05Z07:00"), tiers.RecalledLine(m.Text))
	}
	return b.String()
}
