package llmextract

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/agentmem/memory/extract"
)

// tokenKeys are the GenerationInfo keys under which langchaingo's
// providers (v0.1.14) report a request's prompt and completion tokens,
// tried in this order; the first pair with a count is read:
//
//   - "PromptTokens" and "CompletionTokens": openai (and the
//     OpenAI-compatible servers it reaches), ollama, googleai, maritaca;
//   - "InputTokens" and "OutputTokens": anthropic;
//   - "input_tokens" and "output_tokens": bedrock, googleai's vertex.
//
// Providers that report none of these (mistral keeps a "usage" struct,
// others nothing) have their requests counted as unreported.
var tokenKeys = [][2]string{
	{"PromptTokens", "CompletionTokens"},
	{"InputTokens", "OutputTokens"},
	{"input_tokens", "output_tokens"},
}

// usageOf returns the usage of one request that returned resp (nil when
// it failed). The counts come from the first choice that reports any: the
// providers repeat the request's totals in every choice, so adding them
// up would count one request several times.
func usageOf(resp *llms.ContentResponse) extract.Usage {
	u := extract.Usage{ModelCalls: 1}
	if resp != nil {
		for _, c := range resp.Choices {
			if c == nil {
				continue
			}
			if prompt, completion, ok := tokenCounts(c.GenerationInfo); ok {
				u.PromptTokens, u.CompletionTokens = prompt, completion
				return u
			}
		}
	}
	u.UnreportedCalls = 1
	return u
}

// tokenCounts reads the first pair of tokenKeys that info holds a count
// under; a pair with one count only reads zero for the other.
func tokenCounts(info map[string]any) (prompt, completion int, ok bool) {
	for _, keys := range tokenKeys {
		p, okP := count(info[keys[0]])
		c, okC := count(info[keys[1]])
		if okP || okC {
			return p, c, true
		}
	}
	return 0, 0, false
}

// count reads a token count: a non-negative whole number of any of the
// types providers use (int, int32, int64, float64 from decoded JSON,
// json.Number, ...). Anything else is no count.
func count(v any) (int, bool) {
	var f float64
	switch x := v.(type) {
	case int:
		f = float64(x)
	case int8:
		f = float64(x)
	case int16:
		f = float64(x)
	case int32:
		f = float64(x)
	case int64:
		f = float64(x)
	case uint:
		f = float64(x)
	case uint8:
		f = float64(x)
	case uint16:
		f = float64(x)
	case uint32:
		f = float64(x)
	case uint64:
		f = float64(x)
	case float32:
		f = float64(x)
	case float64:
		f = x
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return 0, false
		}
	case string:
		return count(json.Number(strings.TrimSpace(x)))
	default:
		return 0, false
	}
	if f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return 0, false
	}
	return int(f), true
}
