package lexical

import (
	"iter"
	"slices"
	"strings"
	"unicode"
)

// Words yields the words of text in order, lower-cased: a word is a run of
// letters and digits (unicode.IsLetter, unicode.IsDigit); everything else
// separates words. An invalid byte is a separator. Words defines the words
// of every other function of the package.
func Words(text string) iter.Seq[string] {
	return func(yield func(string) bool) {
		start := -1
		for i, r := range text {
			word := unicode.IsLetter(r) || unicode.IsDigit(r)
			switch {
			case word && start < 0:
				start = i
			case !word && start >= 0:
				if !yield(strings.ToLower(text[start:i])) {
					return
				}
				start = -1
			}
		}
		if start >= 0 {
			yield(strings.ToLower(text[start:]))
		}
	}
}

// Terms returns the distinct words of text, in the order they first occur.
func Terms(text string) []string {
	var terms []string
	for w := range Words(text) {
		if !slices.Contains(terms, w) {
			terms = append(terms, w)
		}
	}
	return terms
}
