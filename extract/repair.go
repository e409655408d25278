package extract

import (
	"unicode/utf8"
)

// maxDepth is the deepest nesting a reply may have. Facts need three
// levels ({"facts":[{"sources":[...]}]}); deeper replies are refused
// before the JSON decoder sees them.
const maxDepth = 16

// repaired is a JSON value copied out of a model's reply by repair.
type repaired struct {
	json     []byte // the value, repaired
	complete bool   // whether the value closed before the text ended
	end      int    // where the value ends in the text: after its close, or the text's end
}

// repair copies the JSON value that opens at s[0] ('{' or '[') and
// mends, in one pass, what models commonly get wrong:
//
//   - a comma before a closing bracket or brace is dropped ("[1,]");
//   - a raw control character inside a string (a line break, a tab) is
//     escaped;
//   - a string delimited by typographic double quotes (“…”) outside any
//     ASCII-quoted string becomes an ASCII-quoted one, an ASCII '"' inside
//     it escaped; within an ASCII-quoted string typographic quotes are
//     text and stay;
//   - white space between tokens is dropped.
//
// Copying stops where the value closes, so prose after it is ignored.
// When the text ends first (a truncated reply) the copy ends there,
// incomplete, without a trailing comma, and the decoder keeps what is
// whole of it. Nesting deeper than maxDepth is refused; nothing else is
// judged here. Every byte of s is read at most once.
func repair(s string) (repaired, error) {
	out := make([]byte, 0, len(s)+16)
	depth := 0
	comma := false // a comma read and not yet written
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == ',':
			if comma {
				out = append(out, ',') // ",," stays invalid
			}
			comma = true
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if comma {
			if c != ']' && c != '}' {
				out = append(out, ',')
			}
			comma = false
		}
		switch {
		case c == '{' || c == '[':
			if depth++; depth > maxDepth {
				return repaired{}, Malformed("the model's reply nests deeper than %d levels", maxDepth)
			}
			out = append(out, c)
			i++
		case c == '}' || c == ']':
			out = append(out, c)
			i++
			if depth--; depth == 0 {
				return repaired{json: out, complete: true, end: i}, nil
			}
		case c == '"':
			var closed bool
			out, i, closed = copyString(out, s, i+1, false)
			if !closed {
				return repaired{json: out, end: len(s)}, nil
			}
		case r == '“' || r == '”':
			var closed bool
			out, i, closed = copyString(out, s, i+n, true)
			if !closed {
				return repaired{json: out, end: len(s)}, nil
			}
		default:
			out = append(out, s[i:i+n]...)
			i += n
		}
	}
	return repaired{json: out, end: len(s)}, nil
}

// copyString appends the string whose text starts at s[i] to out as a
// JSON string, and returns out, the index after the closing quote, and
// whether the string closed before s ended. typographic says the string
// opened with a typographic quote and closes with ”.
func copyString(out []byte, s string, i int, typographic bool) ([]byte, int, bool) {
	out = append(out, '"')
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 == len(s) {
				return out, len(s), false
			}
			out = append(out, c, s[i+1])
			i += 2
			continue
		case c == '"':
			if !typographic {
				return append(out, '"'), i + 1, true
			}
			out = append(out, '\\', '"')
			i++
			continue
		case c < 0x20:
			out = appendControl(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if typographic && r == '”' {
			return append(out, '"'), i + n, true
		}
		out = append(out, s[i:i+n]...)
		i += n
	}
	return out, len(s), false
}

// appendControl appends the JSON escape of control character c.
func appendControl(out []byte, c byte) []byte {
	switch c {
	case '\n':
		return append(out, '\\', 'n')
	case '\r':
		return append(out, '\\', 'r')
	case '\t':
		return append(out, '\\', 't')
	}
	const hex = "0123456789abcdef"
	return append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
}
