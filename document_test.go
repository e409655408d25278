package memory_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentmem/memory"
)

func TestCheckJSON(t *testing.T) {
	valid := []string{
		`{}`, `[]`, `0`, `"x"`, `null`, `true`, ` {"a": [1, 2.5e3, "b", {"c": null}]} `,
		`"\\u0000"`,            // an escaped backslash followed by text, not an escape
		`"\ud83d\ude00"`,       // a surrogate pair
		`"é\u00e9\n\"\\"`,      // escapes of every other kind
		`{"k":"\u0041\uFFFF"}`, // upper-case hex
	}
	for _, s := range valid {
		if err := memory.CheckJSON(s); err != nil {
			t.Errorf("CheckJSON(%q) = %v, want nil", s, err)
		}
	}
	invalid := map[string]string{
		``:                "not valid JSON",
		`{`:               "not valid JSON",
		`{"a":1,}`:        "not valid JSON",
		`{} {}`:           "not valid JSON",
		`NaN`:             "not valid JSON",
		"\"\xff\"":        "not valid UTF-8",
		`"\u0000"`:        `\u0000`,
		`["x\u0000y"]`:    `\u0000`,
		`"\ud800"`:        "without a low surrogate",
		`"\ud800x"`:       "without a low surrogate",
		`"\ud800\n"`:      "without a low surrogate",
		`"\ud800\u0041"`:  "without a low surrogate",
		`"\udc00"`:        "without a high surrogate",
		`"\ude00\ud83d"`:  "without a high surrogate",
		`{"\\\ud800": 1}`: "without a low surrogate",
	}
	for s, want := range invalid {
		err := memory.CheckJSON(s)
		if !errors.Is(err, memory.ErrInvalidArgument) || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckJSON(%q) = %v, want ErrInvalidArgument mentioning %q", s, err, want)
		}
	}
	big := `"` + strings.Repeat("a", memory.MaxDocumentBytes) + `"`
	if err := memory.CheckJSON(big); !errors.Is(err, memory.ErrTooLarge) {
		t.Errorf("CheckJSON of %d bytes = %v, want ErrTooLarge", len(big), err)
	}
}

func TestValidateChecksDocumentJSON(t *testing.T) {
	now := time.Unix(1700000000, 0)
	id := memory.Identity{Tenant: "t", Squad: "s"}
	doc := memory.NewDocument(id, "k", "working", `{"a":1}`, now)
	if err := doc.Validate(); err != nil {
		t.Fatalf("valid document: %v", err)
	}
	doc.Content = `{"a":`
	if err := doc.Validate(); !errors.Is(err, memory.ErrInvalidArgument) || !strings.Contains(err.Error(), doc.ID) {
		t.Errorf("document with broken JSON: %v, want ErrInvalidArgument naming the record", err)
	}
	// Other kinds hold any text.
	fact := memory.NewFact(id, `{"a":`, now)
	if err := fact.Validate(); err != nil {
		t.Errorf("a fact is not JSON and need not be: %v", err)
	}
}

// FuzzCheckJSON checks CheckJSON against encoding/json and against the
// rule it adds: a payload it accepts decodes, and re-encodes to a text it
// also accepts; a payload json.Valid accepts is refused only for the
// escapes it names.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{}`, `"\u0000"`, `"\ud83d\ude00"`, `"\ud800"`, `[1,"\\u0000"]`, `{"a":{"b":[true,null]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := memory.CheckJSON(s)
		if !json.Valid([]byte(s)) || !utf8.ValidString(s) {
			if !errors.Is(err, memory.ErrInvalidArgument) {
				t.Fatalf("CheckJSON(%q) = %v for invalid JSON", s, err)
			}
			return
		}
		if err != nil {
			if !strings.Contains(s, `\u`) {
				t.Fatalf("CheckJSON(%q) = %v, but it has no \\u escape", s, err)
			}
			return
		}
		var v any
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber() // numbers such as 1E1000 are valid JSON beyond float64
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("accepted %q does not decode: %v", s, err)
		}
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := memory.CheckJSON(string(out)); err != nil {
			t.Fatalf("re-encoding of accepted %q is refused: %v", s, err)
		}
	})
}
