package extract

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentmem/memory"
)

// checkFactText fails t unless text is what every fact's text must be:
// one line, trimmed, single-spaced, valid UTF-8, not empty, at most
// MaxFactBytes.
func checkFactText(t *testing.T, text string) {
	t.Helper()
	if text == "" || len(text) > MaxFactBytes || !utf8.ValidString(text) || oneLine(text) != text {
		t.Fatalf("fact text %q is not one non-empty line of at most %d bytes", text, MaxFactBytes)
	}
}

// checkMalformed fails t unless err is classified as a reply that cannot
// be used.
func checkMalformed(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrMalformedOutput) || !errors.Is(err, memory.ErrInvalidArgument) && !errors.Is(err, memory.ErrTooLarge) {
		t.Fatalf("error %v is not malformed output of a memory.Err* kind", err)
	}
}

// FuzzParseFacts checks ParseFacts on any reply: it never panics, an
// error is classified and comes without facts, every fact's text and
// references are well formed, and a second parse gives the same result.
func FuzzParseFacts(f *testing.F) {
	for _, seed := range []string{
		`{"facts":[{"text":"The user likes tea.","sources":["T1"],"supersedes":"F2"}]}`,
		"```json\n[\"a b\", {\"fact\": \"c d\", \"source\": 3}]\n```",
		`Sure! [note] here: [{"text":"x y","sources":"T1, T2",},]`,
		`[{“text”: “He said "hi"”}]`,
		`{"facts":[{"text":"cut off`,
		`{"text":"one fact","replaces":[1,2]}`,
		"[" + strings.Repeat("[", 20),
		"[\"line\nbreak\ttab\"]",
		`{"facts": null, "facts": ["second"]}`,
		`{"text":[0]`, // found by fuzzing: a single fact whose text is not a string
		`["\ud800 lone surrogate", "\u0000nul"]`,
		"",
		"\xff\xfe",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		facts, err := ParseFacts(reply)
		if err != nil {
			checkMalformed(t, err)
			if facts != nil {
				t.Fatalf("facts %v came with error %v", facts, err)
			}
			return
		}
		for _, fact := range facts {
			checkFactText(t, fact.Text)
			for _, ref := range append(slices.Clone(fact.Sources), fact.Supersedes) {
				if len(ref) > memory.MaxIDBytes || !utf8.ValidString(ref) || strings.ContainsFunc(ref, space) || strings.ContainsAny(ref, ",;") {
					t.Fatalf("reference %q of fact %q is not one id", ref, fact.Text)
				}
			}
			for _, src := range fact.Sources {
				if src == "" {
					t.Fatalf("fact %q has an empty source", fact.Text)
				}
			}
		}
		again, err := ParseFacts(reply)
		if err != nil || !cmp.Equal(facts, again) {
			t.Fatalf("a second parse differs: %v, %v then %v", facts, err, again)
		}
	})
}

// FuzzParseFactsRoundTrip builds a well-formed reply from two fact texts,
// dresses it as models do (prose before it, a fence around it), and checks
// that ParseFacts reads back exactly the facts written, and that the same
// reply cut off anywhere gives a prefix of them or an error, never a fact
// that was not written.
func FuzzParseFactsRoundTrip(f *testing.F) {
	f.Add("The user likes tea.", "The user lives in Oslo.", "Here you go:", uint16(40), true)
	f.Add("a\nb", "", "", uint16(0), false)
	f.Add("“quoted”", `"ascii" \ back`, "Facts (two)", uint16(65), false)
	f.Add(strings.Repeat("x", MaxFactBytes+1), "short", "```", uint16(100), true)
	// Found by fuzzing: a reply cut off where its only whole fact is
	// dropped for its text; "```" inside a fact's text.
	f.Add("", "&000000000000000", "00000", uint16(106), true)
	f.Add("```", "0", "0", uint16(72), false)
	f.Fuzz(func(t *testing.T, a, b, prose string, cut uint16, fenced bool) {
		type item struct {
			Text    string   `json:"text"`
			Sources []string `json:"sources"`
		}
		body, err := json.Marshal(map[string][]item{"facts": {{a, []string{"T1"}}, {b, []string{"T2", "T3"}}}})
		if err != nil {
			t.Skip()
		}
		// What the JSON holds: Marshal writes invalid UTF-8 as U+FFFD.
		var decoded map[string][]item
		if err := json.Unmarshal(body, &decoded); err != nil {
			t.Fatal(err)
		}
		var want []Fact
		for _, it := range decoded["facts"] {
			if text, ok := textFact(it.Text); ok {
				want = append(want, Fact{Text: text, Sources: it.Sources})
			}
		}
		prose = strings.Map(func(r rune) rune {
			if strings.ContainsRune("{[`", r) || r == utf8.RuneError {
				return -1
			}
			return r
		}, prose)
		reply := prose + "\n" + string(body)
		if fenced {
			reply = prose + "\n```json\n" + string(body) + "\n```\n"
		}
		got, err := ParseFacts(reply)
		if err != nil {
			t.Fatalf("ParseFacts(%q): %v", reply, err)
		}
		if !cmp.Equal(want, got) {
			t.Fatalf("ParseFacts(%q) = %v, want %v", reply, got, want)
		}
		if int(cut) >= len(reply) {
			return
		}
		got, err = ParseFacts(reply[:cut])
		if err != nil {
			checkMalformed(t, err)
			return
		}
		if len(got) > len(want) || !cmp.Equal(want[:len(got)], got, cmpopts.EquateEmpty()) {
			t.Fatalf("ParseFacts(%q), cut off, = %v; not a prefix of %v", reply[:cut], got, want)
		}
	})
}

// FuzzParseDigest checks ParseDigest on any reply and limit: no panic, a
// classified error without a digest, or a digest of tidy lines within the
// limit, the same on a second parse.
func FuzzParseDigest(f *testing.F) {
	f.Add("The user planned a trip. It is in June.", uint16(0))
	f.Add("```markdown\n## Digest\n\nSam planned a trip.\n```", uint16(20))
	f.Add(`{"digest": "Sam planned\na trip.",}`, uint16(8))
	f.Add("**Summary:** short", uint16(64))
	f.Add("\n\n\n", uint16(3))
	f.Add("00", uint16(1)) // found by fuzzing: a limit no digest fits
	f.Add(strings.Repeat("word ", 40), uint16(MinDigestBytes))
	f.Fuzz(func(t *testing.T, reply string, limit uint16) {
		digest, err := ParseDigest(reply, int(limit))
		if limit > 0 && limit < MinDigestBytes {
			if !errors.Is(err, memory.ErrInvalidArgument) || errors.Is(err, ErrMalformedOutput) || digest != "" {
				t.Fatalf("limit %d: %q, %v; want an invalid limit", limit, digest, err)
			}
			return
		}
		if err != nil {
			checkMalformed(t, err)
			if digest != "" {
				t.Fatalf("digest %q came with error %v", digest, err)
			}
			return
		}
		if digest == "" || !utf8.ValidString(digest) || limit > 0 && len(digest) > int(limit) {
			t.Fatalf("digest %q is empty, not UTF-8 or over %d bytes", digest, limit)
		}
		for line := range strings.Lines(digest) {
			line = strings.TrimSuffix(line, "\n")
			if line != "" && oneLine(line) != line {
				t.Fatalf("digest line %q is not tidy", line)
			}
		}
		if again, _ := ParseDigest(reply, int(limit)); again != digest {
			t.Fatalf("a second parse differs: %q then %q", digest, again)
		}
	})
}

// FuzzRules checks Rules on any two turns, a known fact and a previous
// digest: the input check decides, and whatever passes it gives well-formed
// facts (sources among the turns, in order; supersedes only the known
// fact; no two alike, none like the known fact) and a digest within its
// budget, the same on a second run.
func FuzzRules(f *testing.F) {
	f.Add("Hi! I'm Sam. My favourite colour is blue.", "My favorite color is green. Can you help?", "My favourite colour is red.", "User: I moved.", "Caroline", uint8(0), uint16(0))
	f.Add("I live in Oslo.\nI live in Bergen.", "I live in Oslo", "I live in Rome.", "", "", uint8(1), uint16(64))
	f.Add("Dr. Lee is my doctor… I see.", "- I like tea\n- I like TEA!", "", "\n\n", "a:b", uint8(3), uint16(100))
	f.Add("\xff", "I like \x00 tea.", "x", "y", "z", uint8(2), uint16(65535))
	f.Fuzz(func(t *testing.T, a, b, knownText, previous, speaker string, roles uint8, budget uint16) {
		id := memory.Identity{Tenant: "acme", User: "sam"}
		turns := []memory.Record{
			{ID: "t1", Kind: memory.KindTurn, Identity: id, Label: string(memory.RoleUser), Content: a},
			{ID: "t2", Kind: memory.KindTurn, Identity: id, Label: string(memory.Roles[int(roles)%len(memory.Roles)]), Content: b,
				Metadata: map[string]string{memory.SpeakerKey: speaker}},
		}
		known := []memory.Record{{ID: "k1", Kind: memory.KindFact, Identity: id, Content: knownText}}
		r := Rules{FactRoles: memory.Roles, MaxDigestBytes: int(budget)}
		if r.MaxDigestBytes != 0 && r.MaxDigestBytes < MinDigestBytes {
			r.MaxDigestBytes = MinDigestBytes
		}
		ctx := context.Background()
		facts, _, err := r.Extract(ctx, turns, known)
		if checkErr := CheckExtract(turns, known); (err != nil) != (checkErr != nil) {
			t.Fatalf("Extract: %v; CheckExtract: %v", err, checkErr)
		}
		if err != nil {
			if !errors.Is(err, memory.ErrInvalidArgument) && !errors.Is(err, memory.ErrTooLarge) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		keys := map[string]bool{normKey(knownText): true}
		for _, fact := range facts {
			checkFactText(t, fact.Text)
			if k := normKey(fact.Text); keys[k] {
				t.Fatalf("fact %q repeats another or the known fact", fact.Text)
			} else {
				keys[k] = true
			}
			if len(fact.Sources) == 0 || !slices.IsSorted(fact.Sources) || slices.ContainsFunc(fact.Sources, func(s string) bool { return s != "t1" && s != "t2" }) {
				t.Fatalf("fact %q has sources %v", fact.Text, fact.Sources)
			}
			if fact.Supersedes != "" && fact.Supersedes != "k1" {
				t.Fatalf("fact %q supersedes %q", fact.Text, fact.Supersedes)
			}
		}
		digest, _, err := r.Summarize(ctx, previous, turns)
		if err != nil {
			if CheckSummarize(previous, turns) == nil {
				t.Fatalf("Summarize: %v, though its input passes the check", err)
			}
			return
		}
		limit := r.MaxDigestBytes
		if limit == 0 {
			limit = DefaultMaxDigestBytes
		}
		if len(digest) > limit || !utf8.ValidString(digest) {
			t.Fatalf("digest of %d bytes, the budget is %d", len(digest), limit)
		}
		again, _, _ := r.Extract(ctx, turns, known)
		digestAgain, _, _ := r.Summarize(ctx, previous, turns)
		if !cmp.Equal(facts, again) || digest != digestAgain {
			t.Fatalf("a second run differs: %v, %q then %v, %q", facts, digest, again, digestAgain)
		}
	})
}
