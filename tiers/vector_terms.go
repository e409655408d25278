package tiers

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/memory"
)

// queryTerms checks a query and k and returns the query's distinct words.
func queryTerms(query string, k int) ([]string, error) {
	switch {
	case k < 1 || k > MaxSearchResults:
		return nil, memory.Errorf(memory.ErrInvalidArgument, "search k is %d; it must be between 1 and %d", k, MaxSearchResults)
	case len(query) > MaxSearchQueryBytes:
		return nil, memory.Errorf(memory.ErrTooLarge, "search query is %d bytes, the limit is %d", len(query), MaxSearchQueryBytes)
	case !utf8.ValidString(query):
		return nil, memory.Errorf(memory.ErrInvalidArgument, "search query is not valid UTF-8")
	}
	var terms []string
	forEachWord(query, func(w string) {
		if !slices.Contains(terms, w) {
			terms = append(terms, w)
		}
	})
	if len(terms) == 0 {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "search query %q has no words", query)
	}
	return terms, nil
}

// forEachWord calls fn with each word of text, lower-cased: a word is a
// run of letters and digits. It defines the words of search;
// termCounter.score counts them the same way, faster.
func forEachWord(text string, fn func(word string)) {
	start := -1
	for i, r := range text {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			fn(strings.ToLower(text[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		fn(strings.ToLower(text[start:]))
	}
}

// Byte classes of termCounter.score, bits to or together.
const (
	byteSep   = 0 // an ASCII byte that is not a letter or digit
	byteWord  = 1 // an ASCII letter or digit
	byteUpper = 2 | byteWord
	byteMulti = 4 // a byte of a multi-byte rune, or an invalid one
)

// byteClass classifies every byte value for termCounter.score.
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

// termCounter scores texts against a query's distinct words without
// building an index: score(text) equals the sum, over the terms, of how
// often forEachWord yields each from text, but it allocates nothing for
// ASCII words and compares a word only with the terms of its length.
type termCounter struct {
	terms []string
	lens  uint64 // bit n set: a term is n bytes long (n < 64)
	long  bool   // a term is 64 bytes long or more
}

// newTermCounter returns the counter of terms, distinct lower-case words
// as queryTerms returns them.
func newTermCounter(terms []string) termCounter {
	c := termCounter{terms: terms}
	for _, t := range terms {
		if len(t) < 64 {
			c.lens |= 1 << len(t)
		} else {
			c.long = true
		}
	}
	return c
}

// score returns how many words of text are one of the terms.
func (c *termCounter) score(text string) int {
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
			n += c.match(text[start:i], seen)
		}
	}
	return n
}

// match returns 1 when word, lower-cased, is one of the terms, else 0.
// seen is the or of the classes of word's bytes.
func (c *termCounter) match(word string, seen uint8) int {
	if seen&byteMulti != 0 {
		// Lower-casing may change the length (the Kelvin sign K becomes
		// "k"), so compare with every term.
		w := strings.ToLower(word)
		for _, t := range c.terms {
			if w == t {
				return 1
			}
		}
		return 0
	}
	if len(word) < 64 && c.lens&(1<<len(word)) == 0 || len(word) >= 64 && !c.long {
		return 0
	}
	upper := seen&byteUpper == byteUpper
	for _, t := range c.terms {
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
