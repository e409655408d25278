package lexical

import (
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// MaxWordBytes is the longest word the analyzer keeps, in bytes of the
// text before folding. A longer run of letters and digits is cut to its
// longest prefix of at most MaxWordBytes bytes that ends on a rune
// boundary, and the rest of the run is skipped: it is not a word of its
// own. Queries are cut alike, so a long identifier still matches itself.
// 64 bytes holds a SHA-256 in hex; the cut bounds what one word costs to
// fold, stem and store, however long the run.
const MaxWordBytes = 64

// Words yields the words of text in order, folded: a word is a run of
// letters and digits (unicode.IsLetter, unicode.IsDigit), cut to
// MaxWordBytes; everything else, an invalid byte included, separates
// words. Folding maps every rune to the lower case of its upper case
// (unicode.ToUpper, then unicode.ToLower), so all case variants of a
// letter fold alike: K, k and the Kelvin sign; σ, ς and Σ. Words neither
// drops stopwords nor stems; Analyze does.
func Words(text string) iter.Seq[string] {
	return func(yield func(string) bool) {
		eachWord(text, func(w string) bool { return yield(fold(w)) })
	}
}

// eachWord calls fn with each word of text, cut but not folded, until fn
// returns false. It costs time linear in len(text) and allocates nothing.
func eachWord(text string, fn func(string) bool) {
	i := 0
	for i < len(text) {
		// Skip to the start of a word.
		for i < len(text) {
			if b := text[i]; b < utf8.RuneSelf {
				if asciiWord[b] {
					break
				}
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(text[i:])
			if r != utf8.RuneError && isWordRune(r) {
				break
			}
			i += size
		}
		if i == len(text) {
			return
		}
		start, end := i, -1 // end: where the cut falls, once past MaxWordBytes
		for i < len(text) {
			size := 1
			if b := text[i]; b < utf8.RuneSelf {
				if !asciiWord[b] {
					break
				}
			} else {
				var r rune
				r, size = utf8.DecodeRuneInString(text[i:])
				if r == utf8.RuneError || !isWordRune(r) {
					break
				}
			}
			if end < 0 && i+size-start > MaxWordBytes {
				end = i
			}
			i += size
		}
		if end < 0 {
			end = i
		}
		if !fn(text[start:end]) {
			return
		}
	}
}

// isWordRune reports whether r belongs to words.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// asciiWord tells the ASCII letters and digits.
var asciiWord = func() (t [utf8.RuneSelf]bool) {
	for b := range utf8.RuneSelf {
		t[b] = b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
	}
	return t
}()

// fold returns w folded (see Words). It allocates only when w holds an
// upper-case ASCII letter or a rune beyond ASCII.
func fold(w string) string {
	i := 0
	for i < len(w) && w[i] < utf8.RuneSelf && (w[i] < 'A' || w[i] > 'Z') {
		i++
	}
	if i == len(w) {
		return w
	}
	var b strings.Builder
	b.Grow(len(w))
	b.WriteString(w[:i])
	for _, r := range w[i:] {
		if r < utf8.RuneSelf {
			if r >= 'A' && r <= 'Z' {
				r += 'a' - 'A'
			}
			b.WriteByte(byte(r))
			continue
		}
		b.WriteRune(unicode.ToLower(unicode.ToUpper(r)))
	}
	return b.String()
}

// Analyze yields the terms of text in order, repeats included: its Words,
// less the stopwords (IsStopword), each stemmed (Stem); a word whose stem
// is a stopword is dropped too ("ans" stems to "an"), so no term is one. It defines the
// terms of every other function of the package: the terms an Index
// holds, a Query's terms and a document's length (how many terms it
// has). Its cost is linear in len(text).
func Analyze(text string) iter.Seq[string] {
	return func(yield func(string) bool) {
		eachWord(text, func(w string) bool {
			if t, ok := cachedTerm(w); ok {
				return yield(t)
			}
			return true
		})
	}
}

// term returns the term of the word w, as eachWord cuts it, and false
// for a stopword.
func term(w string) (string, bool) {
	w = fold(w)
	if IsStopword(w) {
		return "", false
	}
	t := Stem(w)
	if IsStopword(t) {
		return "", false
	}
	return t, true
}

// Stem returns the English stem of a folded word: the Porter2 (Snowball
// English) stemmer of github.com/kljensen/snowball for words of three or
// more ASCII letters, so "connected", "connecting" and "connection" all
// stem to "connect". Words with digits, letters beyond ASCII, or fewer
// than three letters are their own stem.
func Stem(w string) string {
	if len(w) < 3 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	return english.Stem(w, true)
}

// Terms returns the distinct terms of text (Analyze), in the order they
// first occur.
func Terms(text string) []string {
	var terms []string
	for t := range Analyze(text) {
		if !contains(terms, t) {
			terms = append(terms, t)
		}
	}
	return terms
}

func contains(terms []string, t string) bool {
	for _, s := range terms {
		if s == t {
			return true
		}
	}
	return false
}
