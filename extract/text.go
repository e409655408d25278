package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// space reports whether r separates words on one line: white space,
// control characters and the Unicode line and paragraph separators.
func space(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

// oneLine returns s with every run of white space and control characters
// made one space, and none at either end. Invalid bytes become U+FFFD;
// callers check UTF-8 first, so none of their output holds one.
func oneLine(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for _, r := range s {
		if space(r) {
			pending = b.Len() > 0
			continue
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// cutText returns s cut to at most max bytes: whole when it fits,
// otherwise at the last space within the limit followed by "…" (at a rune
// boundary when there is no space in its second half), so a cut never
// splits a character and never exceeds max.
func cutText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const ellipsis = "…"
	limit := max - len(ellipsis)
	if limit <= 0 {
		return ""
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if sp := strings.LastIndexByte(s[:cut], ' '); sp >= limit/2 {
		cut = sp
	}
	return strings.TrimRight(s[:cut], " ") + ellipsis
}

// words returns the lower-case words of s: runs of letters, digits and
// apostrophes (the typographic apostrophe read as '), without
// apostrophes at either end. "I'm" gives "i'm", "2024-05-03" gives
// "2024", "05" and "03".
func words(s string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if w := strings.Trim(b.String(), "'"); w != "" {
			out = append(out, w)
		}
		b.Reset()
	}
	for _, r := range s {
		switch {
		case r == '\'' || r == '’':
			b.WriteByte('\'')
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	return out
}

// normKey is what two texts must share to be one fact: their words, in
// order, lower-case, without punctuation. "I like tea." and "i like TEA"
// have one key.
func normKey(text string) string { return strings.Join(words(text), " ") }

// upperFirst returns s with its first letter in upper case.
func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError || !unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
