package lexical

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Query is a query's distinct words, prepared for counting them in texts.
// The zero Query has no words and counts nothing.
type Query struct {
	terms []string
	lens  uint64 // bit n set: a term is n bytes long (n < 64)
	long  bool   // a term is 64 bytes long or more
}

// NewQuery returns the query of terms: distinct, lower-case words, as
// Terms returns them.
func NewQuery(terms []string) Query {
	q := Query{terms: terms}
	for _, t := range terms {
		if len(t) < 64 {
			q.lens |= 1 << len(t)
		} else {
			q.long = true
		}
	}
	return q
}

// Terms returns the query's words.
func (q *Query) Terms() []string { return q.terms }

// Byte classes of Count, bits to or together.
const (
	byteSep   = 0 // an ASCII byte that is not a letter or digit
	byteWord  = 1 // an ASCII letter or digit
	byteUpper = 2 | byteWord
	byteMulti = 4 // a byte of a multi-byte rune, or an invalid one
)

// byteClass classifies every byte value for Count.
var byteClass = func() (c [256]uint8) {
	for b := range 256 {
		switch {
		case b >= utf8.RuneSelf:
			c[b] = byteMulti
		case b >= 'A' && b <= 'Z':
			c[b] = byteUpper
		case b >= 'a' && b <= 'z' || b >= '0' && b <= '9':
			c[b] = byteWord
		}
	}
	return c
}()

// Count returns how many words of text (as Words yields them) are words
// of the query: the text's term-frequency score. It builds no index and
// allocates nothing for ASCII words, and compares a word only with the
// query's words of its length, so scanning many texts once is cheaper
// than indexing them.
func (q *Query) Count(text string) int {
	n := 0
	i := 0
	for i < len(text) {
		// Skip to the start of a word.
		for i < len(text) && byteClass[text[i]] == byteSep {
			i++
		}
		start := i
		var seen uint8 // the classes of the word's bytes, or-ed
		for i < len(text) {
			class := byteClass[text[i]]
			if class == byteMulti {
				r, size := utf8.DecodeRuneInString(text[i:])
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					if i == start {
						i += size // a separator: the word has not started
						start = i
						continue
					}
					break
				}
				i += size
			} else if class == byteSep {
				break
			} else {
				i++
			}
			seen |= class
		}
		if i > start {
			n += q.match(text[start:i], seen)
		}
	}
	return n
}

// match returns 1 when word, lower-cased, is one of the terms, else 0.
// seen is the or of the classes of word's bytes.
func (q *Query) match(word string, seen uint8) int {
	if seen&byteMulti != 0 {
		// Lower-casing may change the length (the Kelvin sign K becomes
		// "k"), so compare with every term.
		w := strings.ToLower(word)
		for _, t := range q.terms {
			if w == t {
				return 1
			}
		}
		return 0
	}
	if len(word) < 64 && q.lens&(1<<len(word)) == 0 || len(word) >= 64 && !q.long {
		return 0
	}
	upper := seen&byteUpper == byteUpper
	for _, t := range q.terms {
		if len(t) == len(word) && (!upper && word == t || upper && equalFoldLowerASCII(word, t)) {
			return 1
		}
	}
	return 0
}

// equalFoldLowerASCII reports whether the ASCII word, lower-cased, equals
// t.
func equalFoldLowerASCII(word, t string) bool {
	for i := 0; i < len(word); i++ {
		b := word[i]
		if b >= 'A' && b <= 'Z' {
			b += 'a' - 'A'
		}
		if b != t[i] {
			return false
		}
	}
	return true
}
