package extract

import (
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"
)

// abbreviations are the words whose full stop does not end a sentence
// ("Dr. Lee", "Main St. 4"). A single letter before a full stop never
// ends one either: initials ("J. Smith") and "e.g.", "i.e.", "a.m.".
var abbreviations = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "st": true,
	"jr": true, "sr": true, "vs": true, "etc": true, "approx": true, "dept": true,
	"inc": true, "ltd": true, "mt": true, "ft": true, "no": true, "nr": true,
}

// sentences returns the sentences of text, in order, each on one line
// (see oneLine) and without a leading list marker. A sentence ends at a
// line break, and at a run of '.', '!', '?' or '…' (with any closing
// quotes or brackets after it) that is followed by white space or the
// end of the text, except a lone full stop after an abbreviation or a
// single letter. It reads text once, and only as far as its caller takes
// sentences, so its cost is linear.
func sentences(text string) iter.Seq[string] {
	return func(yield func(string) bool) {
		start := 0
		wordStart := 0 // where the letters just before i begin
		emit := func(end, next int) bool {
			s := cleanSentence(text[start:end])
			start, wordStart = next, next
			return s == "" || yield(s)
		}
		for i := 0; i < len(text); {
			r, n := utf8.DecodeRuneInString(text[i:])
			switch {
			case r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029':
				if !emit(i, i+n) {
					return
				}
				i += n
				continue
			case terminal(r):
				j, dots, others := i, 0, 0
				for j < len(text) {
					r2, n2 := utf8.DecodeRuneInString(text[j:])
					if !terminal(r2) {
						break
					}
					if r2 == '.' {
						dots++
					} else {
						others++
					}
					j += n2
				}
				for j < len(text) {
					r2, n2 := utf8.DecodeRuneInString(text[j:])
					if !strings.ContainsRune(`"')]”’»`, r2) {
						break
					}
					j += n2
				}
				next, _ := utf8.DecodeRuneInString(text[j:])
				ends := j == len(text) || unicode.IsSpace(next)
				if ends && dots == 1 && others == 0 && abbreviated(text[wordStart:i]) {
					ends = false
				}
				if ends && !emit(j, j) {
					return
				}
				i, wordStart = j, j
				continue
			}
			if !unicode.IsLetter(r) {
				wordStart = i + n
			}
			i += n
		}
		emit(len(text), len(text))
	}
}

func terminal(r rune) bool { return r == '.' || r == '!' || r == '?' || r == '…' }

// abbreviated reports whether word, the letters just before a full stop,
// is an initial or a known abbreviation.
func abbreviated(word string) bool {
	if word == "" {
		return false
	}
	if utf8.RuneCountInString(word) == 1 {
		return true
	}
	return len(word) <= 8 && abbreviations[strings.ToLower(word)]
}

// cleanSentence makes s one line and drops a leading list marker: "- ",
// "* ", "• ", "> ", "– " or "— ". (A numbered item's "1." ends a sentence
// of its own, which every caller drops as too short.)
func cleanSentence(s string) string {
	s = oneLine(s)
	for _, marker := range []string{"- ", "* ", "• ", "> ", "– ", "— "} {
		if rest, ok := strings.CutPrefix(s, marker); ok {
			return rest
		}
	}
	return s
}
