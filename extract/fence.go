package extract

import "strings"

// fencedBlock returns the text of the first fenced code block of s: from
// just after its opening fence to the start of its closing fence, or to
// the end of s when it has none. A fence is "```" at the start of a line,
// after any spaces or tabs, as in Markdown; "```" within a line (inside a
// JSON string, say) is text, except that a block on one line
// ("```json [...]```") closes at the last "```" of its line. ok is false
// when s has no fence. The text starts with the opening fence's info
// string ("json"), if any.
func fencedBlock(s string) (block string, ok bool) {
	open := lineFence(s, 0)
	if open < 0 {
		return "", false
	}
	block = s[open+3:]
	first, _, _ := strings.Cut(block, "\n")
	if end := strings.LastIndex(first, "```"); end >= 0 {
		return block[:end], true
	}
	if end := lineFence(block, 0); end >= 0 {
		block = block[:end]
	}
	return block, true
}

// lineFence returns the offset of the first "```" at or after from that
// starts a line of s (after any spaces or tabs), or -1.
func lineFence(s string, from int) int {
	for from < len(s) {
		i := strings.Index(s[from:], "```")
		if i < 0 {
			return -1
		}
		i += from
		j := i
		for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
			j--
		}
		if j == 0 || s[j-1] == '\n' || s[j-1] == '\r' {
			return i
		}
		from = i + 3
	}
	return -1
}
