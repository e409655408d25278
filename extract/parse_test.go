package extract_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
)

func TestParseFactsAccepts(t *testing.T) {
	tea := extract.Fact{Text: "The user likes green tea.", Sources: []string{"T1"}}
	berlin := extract.Fact{Text: "The user moved to Berlin.", Sources: []string{"T2", "T3"}, Supersedes: "F1"}
	both := `[{"text":"The user likes green tea.","sources":["T1"]},{"text":"The user moved to Berlin.","sources":["T2","T3"],"supersedes":"F1"}]`
	cases := []struct {
		name  string
		reply string
		want  []extract.Fact
	}{
		{"bare array", both, []extract.Fact{tea, berlin}},
		{"facts object", `{"facts":` + both + `}`, []extract.Fact{tea, berlin}},
		{"memories key", `{"memories":` + both + `}`, []extract.Fact{tea, berlin}},
		{"other keys around the list", `{"reasoning":"two facts","facts":` + both + `,"count":2}`, []extract.Fact{tea, berlin}},
		{"fenced json", "```json\n{\"facts\":" + both + "}\n```", []extract.Fact{tea, berlin}},
		{"fence without a language", "```\n" + both + "\n```\n", []extract.Fact{tea, berlin}},
		{"fence never closed", "Sure:\n```json\n" + both, []extract.Fact{tea, berlin}},
		{"prose around", "Here are the facts I found:\n" + both + "\nLet me know if you need more.", []extract.Fact{tea, berlin}},
		{"bracket in the prose before", "Facts [as requested] follow: " + both, []extract.Fact{tea, berlin}},
		{"brace in the prose after", both + " {done}", []extract.Fact{tea, berlin}},
		{"fenced block without JSON, JSON after it", "```text\nnothing\n```\n" + both, []extract.Fact{tea, berlin}},
		{"trailing commas", `{"facts":[{"text":"The user likes green tea.","sources":["T1",],},],}`, []extract.Fact{tea}},
		{"white space and line breaks", "{\n  \"facts\" : [\n    {\"text\" : \"The user likes green tea.\",\n     \"sources\" : [ \"T1\" ] }\n  ]\n}", []extract.Fact{tea}},
		{"single fact object", `{"text":"The user likes green tea.","sources":["T1"]}`, []extract.Fact{tea}},
		{"bare strings", `["The user likes green tea.", "The user has a cat."]`, []extract.Fact{{Text: "The user likes green tea."}, {Text: "The user has a cat."}}},
		{"facts as one string", `{"facts":"The user likes green tea."}`, []extract.Fact{{Text: "The user likes green tea."}}},
		{"empty list", `{"facts":[]}`, nil},
		{"null list", `{"facts":null}`, nil},
		{"empty bare list", `[]`, nil},
		{"truncated after a fact", `{"facts":[{"text":"The user likes green tea.","sources":["T1"]},{"text":"The user mov`, []extract.Fact{tea}},
		{"truncated after a comma", `[{"text":"The user likes green tea.","sources":["T1"]},`, []extract.Fact{tea}},
		{"truncated inside a number", `[{"text":"The user likes green tea.","sources":["T1"]},{"text":"x","sources":[12`, []extract.Fact{tea}},
		{"truncated inside an escape", `["The user likes green tea.","a\`, []extract.Fact{{Text: "The user likes green tea."}}},
		{"truncated after the list", `{"facts":[{"text":"The user likes green tea.","sources":["T1"]}],"note":"cut off`, []extract.Fact{tea}},
		{"raw line break and tab in a string", "[{\"text\":\"The user likes\n\tgreen tea.\",\"sources\":[\"T1\"]}]", []extract.Fact{tea}},
		{"typographic quotes as delimiters", `[{“text”: “The user likes green tea.”, “sources”: [“T1”]}]`, []extract.Fact{tea}},
		{"typographic string holding an ASCII quote", `[{"text": “She said "hi" to the user.”}]`, []extract.Fact{{Text: `She said "hi" to the user.`}}},
		{"typographic quotes inside an ASCII string stay", `["The user called it “the best tea”."]`, []extract.Fact{{Text: "The user called it “the best tea”."}}},
		{"other text keys", `[{"fact":"a b"},{"memory":"c d"},{"content":"e f"},{"statement":"g h"}]`,
			[]extract.Fact{{Text: "a b"}, {Text: "c d"}, {Text: "e f"}, {Text: "g h"}}},
		{"text key wins over the others", `[{"fact":"second","text":"first"}]`, []extract.Fact{{Text: "first"}}},
		{"sources as a string of several", `[{"text":"a b","sources":"T1, T2;T3 T4"}]`, []extract.Fact{{Text: "a b", Sources: []string{"T1", "T2", "T3", "T4"}}}},
		{"sources as numbers", `[{"text":"a b","source":[1,"T2",2.0]}]`, []extract.Fact{{Text: "a b", Sources: []string{"1", "T2", "2.0"}}}},
		{"sources under other keys", `[{"text":"a b","turns":3},{"text":"c d","evidence":["T4"]}]`,
			[]extract.Fact{{Text: "a b", Sources: []string{"3"}}, {Text: "c d", Sources: []string{"T4"}}}},
		{"odd sources ignored", `[{"text":"a b","sources":[{"id":"T1"},null,true,["T2"]]}]`, []extract.Fact{{Text: "a b"}}},
		{"supersedes forms", `[{"text":"a b","supersedes":null},{"text":"c d","replaces":["F2","F3"]},{"text":"e f","contradicts":4}]`,
			[]extract.Fact{{Text: "a b"}, {Text: "c d", Supersedes: "F2"}, {Text: "e f", Supersedes: "4"}}},
		{"escapes decoded, control characters made spaces", `["caf\u00e9 \u0000 au\tlait  now"]`, []extract.Fact{{Text: "café au lait now"}}},
		{"empty texts dropped", `["", "   ", {"text":"\n"}, "kept one"]`, []extract.Fact{{Text: "kept one"}}},
		{"too long a text dropped", `["` + strings.Repeat("long ", extract.MaxFactBytes/5+1) + `", "short one"]`, []extract.Fact{{Text: "short one"}}},
		{"longest text kept", `["` + strings.Repeat("x", extract.MaxFactBytes) + `"]`, []extract.Fact{{Text: strings.Repeat("x", extract.MaxFactBytes)}}},
		{"long reference dropped", `[{"text":"a b","sources":["` + strings.Repeat("T", memory.MaxIDBytes+1) + `","T1"]}]`, []extract.Fact{{Text: "a b", Sources: []string{"T1"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := extract.ParseFacts(c.reply)
			if err != nil {
				t.Fatalf("ParseFacts(%q): %v", c.reply, err)
			}
			if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ParseFacts(%q) (-want +got):\n%s", c.reply, diff)
			}
		})
	}
}

func TestParseFactsRefuses(t *testing.T) {
	cases := []struct {
		name  string
		reply string
		kind  error
	}{
		{"empty", "", memory.ErrInvalidArgument},
		{"white space", " \n\t", memory.ErrInvalidArgument},
		{"prose only", "The user likes green tea.", memory.ErrInvalidArgument},
		{"not valid UTF-8", `["The user likes \xff tea."]`, memory.ErrInvalidArgument},
		{"numbers", `[1, 2]`, memory.ErrInvalidArgument},
		{"nested lists", `[["a b"]]`, memory.ErrInvalidArgument},
		{"null element", `["a b", null]`, memory.ErrInvalidArgument},
		{"object without facts or text", `{"result":"none"}`, memory.ErrInvalidArgument},
		{"text not a string", `[{"text": 42}]`, memory.ErrInvalidArgument},
		{"element without text", `[{"sources": ["T1"]}]`, memory.ErrInvalidArgument},
		{"facts not a list", `{"facts": {"text": "a b"}}`, memory.ErrInvalidArgument},
		{"syntax error inside", `[{"text": "a b"} {"text": "c d"}]`, memory.ErrInvalidArgument},
		{"double comma", `["a b",, "c d"]`, memory.ErrInvalidArgument},
		{"single quotes", `[{'text': 'a b'}]`, memory.ErrInvalidArgument},
		{"cut off before the first fact", `{"facts": [{"text": "The user li`, memory.ErrInvalidArgument},
		{"cut off before the list", `{"reasoning": "thinking about`, memory.ErrInvalidArgument},
		{"cut off single object", `{"text": "a b", "sources": ["T1"`, memory.ErrInvalidArgument},
		{"nested too deep", strings.Repeat("[", 17) + strings.Repeat("]", 17), memory.ErrInvalidArgument},
		{"over the size limit", `["` + strings.Repeat("a", extract.MaxReplyBytes) + `"]`, memory.ErrTooLarge},
		{"a list inside an object that is not facts", `{"result": ["a b"]}`, memory.ErrInvalidArgument},
		{"facts nested in another object", `{"response": {"facts": ["a b"]}}`, memory.ErrInvalidArgument},
		{"brackets only in prose", "[note] see [1] and [2] and [3] and then {x}", memory.ErrInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			facts, err := extract.ParseFacts(c.reply)
			if err == nil {
				t.Fatalf("ParseFacts(%.80q) = %v, want an error", c.reply, facts)
			}
			if facts != nil {
				t.Errorf("facts came with the error: %v", facts)
			}
			if !errors.Is(err, c.kind) || !errors.Is(err, extract.ErrMalformedOutput) {
				t.Errorf("error %v is not %v wrapping ErrMalformedOutput", err, c.kind)
			}
			var e *memory.Error
			if !errors.As(err, &e) || e.Kind != c.kind {
				t.Errorf("error %v is not a *memory.Error of kind %v", err, c.kind)
			}
		})
	}
}

// TestParseFactsTriesFewStarts checks that prose with many brackets
// before the JSON is given up, not searched bracket by bracket: the
// bounded search is what keeps hostile replies linear.
func TestParseFactsTriesFewStarts(t *testing.T) {
	json := `["a b"]`
	if _, err := extract.ParseFacts("[x] [y] [z] " + json); err != nil {
		t.Errorf("three brackets before the JSON: %v", err)
	}
	if _, err := extract.ParseFacts("[w] [x] [y] [z] " + json); err == nil {
		t.Error("four brackets before the JSON: parsed, so the search is not bounded")
	}
}

func TestParseDigest(t *testing.T) {
	cases := []struct {
		name  string
		reply string
		max   int
		want  string
	}{
		{"plain", "Sam planned a trip to Lisbon.", 0, "Sam planned a trip to Lisbon."},
		{"white space tidied", "  Sam planned   a trip.\r\n\n\n\nThe assistant\tbooked it.  \n", 0, "Sam planned a trip.\n\nThe assistant booked it."},
		{"fenced with a language", "```markdown\nSam planned a trip.\n```\nHope this helps!", 0, "Sam planned a trip."},
		{"fenced on one line", "```text Sam planned a trip.```", 0, "Sam planned a trip."},
		{"fenced on one line, text after", "```text Sam planned a trip.```\nHope this helps!", 0, "Sam planned a trip."},
		{"JSON object", `{"digest": "Sam planned a trip.\nIt is in June."}`, 0, "Sam planned a trip.\nIt is in June."},
		{"JSON summary key with trailing comma", `{"summary": "Sam planned a trip.",}`, 0, "Sam planned a trip."},
		{"JSON without a digest key stays text", `{"x": 1}`, 0, `{"x": 1}`},
		{"heading line", "Digest:\nSam planned a trip.", 0, "Sam planned a trip."},
		{"markdown heading", "## Updated digest\n\nSam planned a trip.", 0, "Sam planned a trip."},
		{"heading with the text after it", "**Summary:** Sam planned a trip.", 0, "Sam planned a trip."},
		{"a sentence that starts like a heading stays", "Summary of the day: Sam planned a trip.", 0, "Summary of the day: Sam planned a trip."},
		{"cut at a sentence", "Sam planned a trip. It is in June. The assistant booked flights for the whole family.", 64, "Sam planned a trip. It is in June."},
		{"cut at a line", "Sam planned a trip to Lisbon with the kids\nand then booked flights for June", 64, "Sam planned a trip to Lisbon with the kids"},
		{"cut at a word", "Sam planned a very long trip across many countries and seven seas", 64, "Sam planned a very long trip across many countries and seven…"},
		{"fits exactly", strings.Repeat("a", 64), 64, strings.Repeat("a", 64)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := extract.ParseDigest(c.reply, c.max)
			if err != nil {
				t.Fatalf("ParseDigest(%q, %d): %v", c.reply, c.max, err)
			}
			if got != c.want {
				t.Errorf("ParseDigest(%q, %d) = %q, want %q", c.reply, c.max, got, c.want)
			}
			if c.max > 0 && len(got) > c.max {
				t.Errorf("the digest is %d bytes, over %d", len(got), c.max)
			}
		})
	}
}

func TestParseDigestRefuses(t *testing.T) {
	cases := []struct {
		name      string
		reply     string
		max       int
		kind      error
		malformed bool
	}{
		{"empty", "", 0, memory.ErrInvalidArgument, true},
		{"blank", " \n\n ", 0, memory.ErrInvalidArgument, true},
		{"heading only", "## Digest\n", 0, memory.ErrInvalidArgument, true},
		{"empty fence", "```\n```", 0, memory.ErrInvalidArgument, true},
		{"empty JSON digest", `{"digest": ""}`, 0, memory.ErrInvalidArgument, true},
		{"not valid UTF-8", "Sam \xff", 0, memory.ErrInvalidArgument, true},
		{"over the size limit", strings.Repeat("a", extract.MaxReplyBytes+1), 0, memory.ErrTooLarge, true},
		{"negative limit", "Sam planned a trip.", -1, memory.ErrInvalidArgument, false},
		{"limit below the least", "Sam planned a trip.", extract.MinDigestBytes - 1, memory.ErrInvalidArgument, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := extract.ParseDigest(c.reply, c.max)
			if err == nil {
				t.Fatalf("ParseDigest = %q, want an error", got)
			}
			if got != "" || !errors.Is(err, c.kind) || errors.Is(err, extract.ErrMalformedOutput) != c.malformed {
				t.Errorf("ParseDigest = %q, %v; want %v, malformed output %v", got, err, c.kind, c.malformed)
			}
		})
	}
}

// TestFencesStartLines checks that only "```" at the start of a line
// opens or closes a fenced block: one inside a fact's text is text.
func TestFencesStartLines(t *testing.T) {
	reply := "Here:\n```json\n[\"Use ``` for code.\", {\"text\": \"a b\", \"sources\": [\"T1\"]}]\n  ```\nDone."
	got, err := extract.ParseFacts(reply)
	want := []extract.Fact{{Text: "Use ``` for code."}, {Text: "a b", Sources: []string{"T1"}}}
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("ParseFacts = %v, %v; want %v", got, err, want)
	}
	digest, err := extract.ParseDigest("Note:\n```text\nSam wrote ``` in a chat.\n```\n", 0)
	if err != nil || digest != "Sam wrote ``` in a chat." {
		t.Errorf("ParseDigest = %q, %v", digest, err)
	}
}
