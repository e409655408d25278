package qdrant_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/qdrant"
)

// recordCases are records whose strings the tests decode: every field
// set, empty ones, separators and digits inside values.
var recordCases = []memory.Record{
	{ID: "a", Kind: memory.KindFact, Identity: memory.Identity{Tenant: "t"}, Created: t0},
	{
		ID: "id:12:x", Kind: memory.KindTurn, Label: "user", Key: "k:3:", Content: "12:ab 0: ünïcødé\n:",
		Identity: memory.Identity{Tenant: "t:1", User: "u", Agent: "a", Instance: "i", Squad: "s", Session: "9:"},
		Metadata: map[string]string{"speaker": "Bo", "": "empty key", "k:2": "", "z": "1:2:3"},
		Created:  time.Unix(0, -1).UTC(), Expires: time.Date(2262, 1, 1, 0, 0, 0, 999, time.UTC), Tokens: 42,
	},
}

// TestRecordString checks that a record's string decodes to the record
// at its version, byte for byte, and is valid UTF-8.
func TestRecordString(t *testing.T) {
	for _, r := range recordCases {
		s := qdrant.RecordString(r, 7)
		if !utf8.ValidString(s) {
			t.Errorf("record %s: string is not valid UTF-8", r.ID)
		}
		got, ok := qdrant.ParseRecordString(s)
		want := r
		want.Version = 7
		if !ok {
			t.Errorf("record %s: its string %q does not decode", r.ID, s)
		} else if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("record %s: decoded record differs (-want +got):\n%s", r.ID, diff)
		}
	}
}

// TestRecordStringRefusals checks that strings the encoder did not make
// are refused: cut short, lengthened, with a bad length or number.
func TestRecordStringRefusals(t *testing.T) {
	good := qdrant.RecordString(recordCases[1], 3)
	for name, s := range map[string]string{
		"empty":                    "",
		"another format":           "2|" + good[2:],
		"cut short":                good[:len(good)-1],
		"a byte more":              good + "x",
		"a field more":             good + "1:x",
		"a length past the end":    strings.Replace(good, "1|7:", "1|99:", 1),
		"a leading zero":           strings.Replace(good, "1|7:", "1|07:", 1),
		"a length without a colon": "1|12345678901",
		"a negative length":        strings.Replace(good, "1|7:", "1|-7:", 1),
	} {
		if _, ok := qdrant.ParseRecordString(s); ok {
			t.Errorf("%s: %q decoded", name, s)
		}
	}
	// A number that is not one.
	r := recordCases[0]
	s := qdrant.RecordString(r, 1)
	bad := strings.Replace(s, "1:0", "1:x", 1) // tokens 0
	if bad == s {
		t.Fatal("the test's record string has no tokens field 1:0")
	}
	if _, ok := qdrant.ParseRecordString(bad); ok {
		t.Errorf("a record string whose tokens are not a number decoded")
	}
}

// FuzzDecodeRecord checks that no string makes the decoder panic, and
// that whatever it accepts encodes back to the same string.
func FuzzDecodeRecord(f *testing.F) {
	for _, r := range recordCases {
		f.Add(qdrant.RecordString(r, 5))
	}
	f.Add("1|")
	f.Add("1|0:0:0:0:0:0:1:00:1:01:1:1:1:1:0:0:0:0:0:0:")
	f.Fuzz(func(t *testing.T, s string) {
		r, ok := qdrant.ParseRecordString(s)
		if !ok {
			return
		}
		if again := qdrant.RecordString(r, r.Version); again != s {
			t.Errorf("%q decoded to a record that encodes to %q", s, again)
		}
	})
}
