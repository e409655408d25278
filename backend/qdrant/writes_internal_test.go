package qdrant

import (
	"slices"
	"testing"
)

// TestPushWrite checks the recent writes a write carries forward: its
// own first, then those at most historyAge seconds older, at most
// historyMax in all.
func TestPushWrite(t *testing.T) {
	var ws []write
	for v := int64(1); v <= 100; v++ {
		ws = pushWrite(ws, write{v, "t", 1000 + v})
	}
	if len(ws) != historyMax || ws[0].version != 100 || ws[historyMax-1].version != 100-historyMax+1 {
		t.Errorf("after 100 writes a second apart: %d entries, %d to %d; want %d, 100 down", len(ws), ws[0].version, ws[len(ws)-1].version, historyMax)
	}
	old := []write{{3, "b", 500}, {2, "a", 500 - historyAge - 1}}
	if got := pushWrite(old, write{4, "c", 500}); !slices.Equal(got, []write{{4, "c", 500}, {3, "b", 500}}) {
		t.Errorf("pushWrite kept %v; want the new write and the one of the same second", got)
	}
}

// TestParseWrites checks the payload form of recent writes: what
// formatWrites makes parses back, and anything else is refused.
func TestParseWrites(t *testing.T) {
	ws := []write{{7, "abc", 1700000000}, {6, "def", -1}}
	got, ok := parseWrites(formatWrites(ws))
	if !ok || !slices.Equal(got, ws) {
		t.Errorf("parseWrites(formatWrites(%v)) = %v, %v", ws, got, ok)
	}
	if got, ok := parseWrites(""); !ok || got != nil {
		t.Errorf("parseWrites(\"\") = %v, %v; want no writes", got, ok)
	}
	for _, bad := range []string{"7", "7:abc", "x:abc:1", "7::1", "7:abc:x", "7:abc:1;", ";7:abc:1", "7:a:b:1"} {
		if _, ok := parseWrites(bad); ok {
			t.Errorf("parseWrites(%q) accepted it", bad)
		}
	}
}

// TestOutcomeOf checks what a point's recent writes say of a write.
func TestOutcomeOf(t *testing.T) {
	ws := []write{{9, "x", 0}, {8, "mine", 0}, {7, "y", 0}}
	for _, c := range []struct {
		name    string
		ws      []write
		version int64
		want    outcome
	}{
		{"among them, replaced since", ws, 8, applied},
		{"its version another's", []write{{9, "x", 0}, {8, "y", 0}}, 8, lost},
		{"a later version written from the one it replaced", []write{{9, "x", 0}, {7, "y", 0}}, 8, lost},
		{"nothing reached its version", []write{{7, "y", 0}}, 8, lost},
		{"no writes: absent, or written again after a delete", nil, 8, lost},
		{"the writes no longer reach back to it", []write{{12, "x", 0}, {11, "z", 0}}, 8, unknown},
	} {
		if got := outcomeOf(c.ws, c.version, "mine"); got != c.want {
			t.Errorf("%s: outcome %d, want %d", c.name, got, c.want)
		}
	}
}
