package tiers

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parseLineSplit is the obvious index line parser, the reference for
// parseLineString.
func parseLineSplit(line []byte) (add bool, e vectorEntry, ok bool) {
	s := string(line)
	switch {
	case strings.HasPrefix(s, "-\t"):
		e.name = s[2:]
		e.created, ok = parseEntryName(e.name)
		return false, e, ok
	case !strings.HasPrefix(s, "+\t"):
		return false, e, false
	}
	parts := strings.Split(s[2:], "\t")
	if len(parts) != 4+len(entryFields) {
		return false, e, false
	}
	e.name = parts[0]
	if e.created, ok = parseEntryName(e.name); !ok {
		return false, e, false
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n < 0 {
		return false, e, false
	}
	e.tokens = n
	e.who = identityOf(parts[2 : 2+len(entryFields)])
	e.key = parts[2+len(entryFields)]
	e.text = parts[3+len(entryFields)]
	return true, e, true
}

// TestParseLineStringMatchesSplit checks the index line parser against the
// obvious one on well-formed and damaged lines.
func TestParseLineStringMatchesSplit(t *testing.T) {
	if lineFields != 4+len(entryFields) {
		t.Fatalf("lineFields is %d, want %d", lineFields, 4+len(entryFields))
	}
	e := vectorEntry{name: "0000000000000000001-00000001-0123456789abcdef.txt", created: 1, who: eqUserA, key: "w/s", tokens: 7, text: "hello world"}
	good := strings.TrimSuffix(addLine(e), "\n")
	del := strings.TrimSuffix(delLine(e.name), "\n")
	lines := []string{good, del, del + "x", good + "\textra", good[:len(good)-3], good[:60], "", "+", "+\t", "-\t", "x\t" + good[2:],
		strings.Replace(good, "\t7\t", "\t-1\t", 1), strings.Replace(good, "\t7\t", "\tx\t", 1), strings.Replace(good, ".txt", ".txx", 1)}
	_, got, ok := parseLineString(good)
	if !ok {
		t.Fatalf("parseLineString(addLine(e)) is not ok")
	}
	if diff := cmp.Diff(e, got, cmp.AllowUnexported(vectorEntry{})); diff != "" {
		t.Fatalf("parseLineString(addLine(e)) (-want +got):\n%s", diff)
	}
	for _, l := range lines {
		add, got, ok := parseLineString(l)
		wantAdd, want, wantOK := parseLineSplit([]byte(l))
		var diff string
		if ok {
			diff = cmp.Diff(want, got, cmp.AllowUnexported(vectorEntry{}))
		}
		if add != wantAdd || ok != wantOK || diff != "" {
			t.Errorf("parseLineString(%q) = add %v, ok %v; want %v, %v; entry (-want +got):\n%s", l, add, ok, wantAdd, wantOK, diff)
		}
	}
}

// FuzzParseLineString checks the index line parser against the obvious
// one on any line.
func FuzzParseLineString(f *testing.F) {
	e := vectorEntry{name: "0000000000000000001-00000001-0123456789abcdef.txt", created: 1, who: eqUserA, key: "w/s", tokens: 7, text: "hello world"}
	f.Add(strings.TrimSuffix(addLine(e), "\n"))
	f.Add(strings.TrimSuffix(delLine(e.name), "\n"))
	f.Fuzz(func(t *testing.T, l string) {
		add, got, ok := parseLineString(l)
		wantAdd, want, wantOK := parseLineSplit([]byte(l))
		if add != wantAdd || ok != wantOK || ok && got != want { // cmp.Diff only on failure: fuzzing speed
			t.Fatalf("parseLineString(%q) = add %v, ok %v; want %v, %v; entry (-want +got):\n%s", l, add, ok, wantAdd, wantOK, cmp.Diff(want, got, cmp.AllowUnexported(vectorEntry{})))
		}
	})
}

// TestParseEntryNameEdges checks the entry name parser at the edges of
// the timestamp's range and on damaged names.
func TestParseEntryNameEdges(t *testing.T) {
	tail := "-0000000a-0123456789abcdef.txt"
	for _, c := range []struct {
		name string
		ns   int64
		ok   bool
	}{
		{"0000000000000000000" + tail, 0, true},
		{"9223372036854775807" + tail, 9223372036854775807, true},
		{"9223372036854775808" + tail, 0, false},
		{"9999999999999999999" + tail, 0, false},
		{"000000000000000000x" + tail, 0, false},
		{"0000000000000000001-0000000A-0123456789abcdef.txt", 0, false},
		{"0000000000000000001-00000000-0123456789abcdeg.txt", 0, false},
		{"0000000000000000001-00000000x0123456789abcdef.txt", 0, false},
		{"0000000000000000001-00000000-0123456789abcdef.txx", 0, false},
		{"0000000000000000001" + tail + "x", 0, false},
	} {
		ns, ok := parseEntryName(c.name)
		if ns != c.ns || ok != c.ok {
			t.Errorf("parseEntryName(%q) = %d, %v; want %d, %v", c.name, ns, ok, c.ns, c.ok)
		}
		if want, err := strconv.ParseInt(c.name[:19], 10, 64); c.ok && (err != nil || want != ns) {
			t.Errorf("parseEntryName(%q) = %d, strconv says %d, %v", c.name, ns, want, err)
		}
	}
}
