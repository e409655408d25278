package tokens

import (
	"testing"
	"unicode"
)

// goClassOf computes the classes of r from Go's unicode package, for
// comparison with the tables.
func goClassOf(r rune) uint8 {
	var c uint8
	switch {
	case unicode.In(r, unicode.Lu, unicode.Lt):
		c = cLetter | cUpper
	case unicode.Is(unicode.Ll, r):
		c = cLetter | cLower
	case unicode.In(r, unicode.Lm, unicode.Lo):
		c = cLetter | cUpper | cLower
	case unicode.Is(unicode.M, r):
		c = cUpper | cLower
	case unicode.Is(unicode.N, r):
		c = cNumber
	}
	if unicode.Is(unicode.White_Space, r) {
		c |= cSpace
	}
	if r == '\r' || r == '\n' {
		c |= cNewline
	}
	return c
}

// The tables must agree with Go's unicode package on every code point
// that Unicode has not reclassified since Go's version: on all of ASCII
// and Latin-1, and on nearly all of the rest.
func TestClassTables(t *testing.T) {
	differ := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if got, want := tableClassOf(r), goClassOf(r); got != want {
			if r < 0x100 {
				t.Errorf("U+%04X: classes %06b, Go's unicode %06b", r, got, want)
			}
			differ++
		}
	}
	// Unicode 15.1 and 16.0 added about 5,800 letters, marks and numbers
	// to Go 1.26's 15.0; a much larger difference means broken tables.
	if differ > 8000 {
		t.Errorf("%d code points differ from Go's unicode package (%s); tables are %s", differ, unicode.Version, unicodeVersion)
	}
	t.Logf("%d code points classed differently from Go's unicode package %s (tables: %s)", differ, unicode.Version, unicodeVersion)
}
