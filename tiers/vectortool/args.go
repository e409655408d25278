package vectortool

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/tiers"
)

// DefaultK is how many matches a call returns when the model gives no k.
const DefaultK = 5

// MaxInputBytes is the longest input Call accepts: a maximal query with
// room for the JSON around it.
const MaxInputBytes = tiers.MaxSearchQueryBytes + 1024

// Args are a call's arguments.
type Args struct {
	// Query is the text to search for, trimmed of surrounding white space.
	Query string `json:"query"`
	// K is how many matches to return, 1 to tiers.MaxSearchResults.
	K int `json:"k"`
}

// ParseArgs parses the model's input: either a JSON object
// {"query": "...", "k": n} with k optional (DefaultK) and no other fields,
// or, when the input does not start with "{", plain text taken whole as
// the query. k must be a whole number from 1 to tiers.MaxSearchResults,
// and the query must be one tiers.Vector.Search accepts (tiers.CheckSearch:
// at least one word, at most tiers.MaxSearchQueryBytes bytes), so arguments
// ParseArgs returns never make Search fail. Input that is not valid UTF-8,
// not well-formed JSON, holds unknown fields or is out of range is
// memory.ErrInvalidArgument; input longer than MaxInputBytes, or a longer
// query, is memory.ErrTooLarge.
func ParseArgs(input string) (Args, error) {
	if len(input) > MaxInputBytes {
		return Args{}, memory.Errorf(memory.ErrTooLarge, "vector-search input is %d bytes, the limit is %d", len(input), MaxInputBytes)
	}
	if !utf8.ValidString(input) {
		return Args{}, memory.Errorf(memory.ErrInvalidArgument, "vector-search input is not valid UTF-8")
	}
	s := strings.TrimSpace(input)
	args := Args{Query: s, K: DefaultK}
	if strings.HasPrefix(s, "{") {
		var err error
		if args, err = parseJSON(s); err != nil {
			return Args{}, err
		}
	}
	if args.Query == "" {
		return Args{}, memory.Errorf(memory.ErrInvalidArgument, "vector-search query is empty")
	}
	if err := tiers.CheckSearch(args.Query, args.K); err != nil {
		return Args{}, err
	}
	return args, nil
}

// parseJSON parses the JSON form of the arguments.
func parseJSON(s string) (Args, error) {
	var raw struct {
		Query *string      `json:"query"`
		K     *json.Number `json:"k"`
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	bad := func(format string, a ...any) (Args, error) {
		return Args{}, memory.Errorf(memory.ErrInvalidArgument, "vector-search arguments: "+format, a...)
	}
	if err := dec.Decode(&raw); err != nil {
		return bad(`want a JSON object {"query": "...", "k": n}: %v`, err)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return bad("unexpected text after the JSON object")
	}
	if raw.Query == nil {
		return bad(`"query" is missing`)
	}
	args := Args{Query: strings.TrimSpace(*raw.Query), K: DefaultK}
	if raw.K != nil {
		f, err := strconv.ParseFloat(string(*raw.K), 64)
		if err != nil || f != math.Trunc(f) || f < 1 || f > tiers.MaxSearchResults {
			return bad(`"k" is %s; it must be a whole number from 1 to %d`, string(*raw.K), tiers.MaxSearchResults)
		}
		args.K = int(f)
	}
	return args, nil
}
