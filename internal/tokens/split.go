package tokens

// The pre-tokenizers: each returns the end of the piece that starts at
// s[i], the piece the encoding's split pattern matches there. They are
// hand-written scanners rather than a regular-expression engine because
// the patterns need backtracking (a look-ahead, and alternatives that give
// characters back), which the engines that offer it pay for with time
// that grows faster than the input; each scanner here reads every byte a
// bounded number of times.
//
// The patterns, as OpenAI's tiktoken defines them (alternatives are tried
// left to right, each quantifier greedy with backtracking):
//
// cl100k_base:
//
//	'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s
//
// That is tiktoken's current form; the original form, which the npm and
// Go ports use, ends \s*[\r\n]+|\s+(?!\S)|\s+ instead of \s++$|\s*[\r\n]|
// \s+(?!\S)|\s. They split identically except for whitespace at the very
// end of the text that holds a line break followed by other whitespace:
// the current form keeps it as one piece, the original splits it after
// the last line break. No cl100k_base token holds a byte other than \r or
// \n after a line break (TestNoTokenContinuesPastNewline checks), so no
// merge crosses that point and both forms give the same tokens; these
// scanners follow the original form.
//
// o200k_base:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// Every position of any text starts a match of either pattern, so the
// pieces tile the text.

// contraction returns the length of the case-insensitive contraction
// ('s, 't, 're, 've, 'm, 'll, 'd) at s[i:], or 0. Case-insensitive
// matching uses Unicode simple case folding, as tiktoken's regex engine
// does: besides S and s, U+017F (ſ, long s) folds to s; no other code
// point folds to any of the letters d, e, l, m, r, t, v.
func contraction(s string, i int) int {
	if i >= len(s) || s[i] != '\'' || i+1 >= len(s) {
		return 0
	}
	c := s[i+1] | 0x20 // ASCII lower case; other bytes never match below
	switch c {
	case 's', 't', 'm', 'd':
		if s[i+1] < 0x80 {
			return 2
		}
	case 'r', 'v':
		if s[i+1] < 0x80 && i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return 3
		}
	case 'l':
		if s[i+1] < 0x80 && i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return 3
		}
	}
	if s[i+1] == 0xC5 && i+2 < len(s) && s[i+2] == 0xBF { // ſ
		return 3
	}
	return 0
}

// run returns the end of the longest run of code points from s[i] whose
// classes all meet want.
func run(s string, i int, want uint8) int {
	for i < len(s) {
		c, n := classAt(s, i)
		if c&want == 0 {
			break
		}
		i += n
	}
	return i
}

// punctRun returns the end of the longest run of [^\s\p{L}\p{N}] from s[i].
func punctRun(s string, i int) int {
	for i < len(s) {
		c, n := classAt(s, i)
		if c&(cSpace|cLetter|cNumber) != 0 {
			break
		}
		i += n
	}
	return i
}

// numbers returns the end of up to three \p{N} code points from s[i].
func numbers(s string, i int) int {
	for k := 0; k < 3 && i < len(s); k++ {
		c, n := classAt(s, i)
		if c&cNumber == 0 {
			break
		}
		i += n
	}
	return i
}

// spaces splits the whitespace that starts at s[i] as the patterns' last
// alternatives do: \s*[\r\n]+ takes the run through its last line break,
// if it has one; else \s+(?!\S) takes the whole run at the end of the
// text and all but its last code point before anything else; else \s+
// takes the one code point.
func spaces(s string, i int) int {
	end, lastNL, last := i, -1, i
	for end < len(s) {
		c, n := classAt(s, end)
		if c&cSpace == 0 {
			break
		}
		if c&cNewline != 0 {
			lastNL = end
		}
		last = end
		end += n
	}
	switch {
	case lastNL >= 0:
		return lastNL + 1
	case end == len(s) || last == i:
		return end
	default:
		return last
	}
}

// cl100kNext returns the end of the cl100k_base piece that starts at s[i].
func cl100kNext(s string, i int) int {
	if n := contraction(s, i); n > 0 {
		return i + n
	}
	c0, n0 := classAt(s, i)
	switch {
	case c0&cLetter != 0:
		return run(s, i+n0, cLetter)
	case c0&cNumber != 0:
		return numbers(s, i)
	}
	var c1 uint8 = cSpace // what follows the last code point: not a letter, not punctuation
	if i+n0 < len(s) {
		c1, _ = classAt(s, i+n0)
	}
	if c0&cNewline == 0 && c1&cLetter != 0 {
		return run(s, i+n0, cLetter) // [^\r\n\p{L}\p{N}]\p{L}+
	}
	if c0&cSpace == 0 {
		return crlfRun(s, punctRun(s, i))
	}
	if s[i] == ' ' && c1&(cSpace|cLetter|cNumber) == 0 {
		return crlfRun(s, punctRun(s, i+1))
	}
	return spaces(s, i)
}

// crlfRun returns the end of the run of \r and \n from s[i].
func crlfRun(s string, i int) int {
	for i < len(s) && (s[i] == '\r' || s[i] == '\n') {
		i++
	}
	return i
}

// crlfSlashRun returns the end of the run of \r, \n and / from s[i].
func crlfSlashRun(s string, i int) int {
	for i < len(s) && (s[i] == '\r' || s[i] == '\n' || s[i] == '/') {
		i++
	}
	return i
}

// o200kNext returns the end of the o200k_base piece that starts at s[i].
func o200kNext(s string, i int) int {
	c0, n0 := classAt(s, i)
	// The two word alternatives may start with one code point of
	// [^\r\n\p{L}\p{N}]; with it (tried first) the word proper starts
	// after it, without it at s[i], which can start a word only if it is
	// a mark (in [^\r\n\p{L}\p{N}] and in both letter classes).
	prefix := c0&(cLetter|cNumber|cNewline) == 0
	if prefix {
		if e := lowerWord(s, i+n0); e >= 0 {
			return e
		}
	}
	if e := lowerWord(s, i); e >= 0 {
		return e
	}
	if prefix {
		if e := upperWord(s, i+n0); e >= 0 {
			return e
		}
	}
	if e := upperWord(s, i); e >= 0 {
		return e
	}
	if c0&cNumber != 0 {
		return numbers(s, i)
	}
	if c0&cSpace == 0 {
		return crlfSlashRun(s, punctRun(s, i))
	}
	if s[i] == ' ' && i+1 < len(s) {
		if c1, _ := classAt(s, i+1); c1&(cSpace|cLetter|cNumber) == 0 {
			return crlfSlashRun(s, punctRun(s, i+1))
		}
	}
	return spaces(s, i)
}

// lowerWord matches [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+
// and an optional contraction at s[i:], returning the end or -1.
//
// The first class is greedy and the second must follow it, so the match
// is: the run of the first class, then the run of the second that
// follows it if it is not empty (its first code point is then \p{Ll});
// otherwise the first class gives back code points until one it gave back
// is in the second class (\p{Lm}, \p{Lo} or \p{M}), which alone then
// matches the second, since every code point after it in the run is in
// the first class only.
func lowerWord(s string, i int) int {
	j, lastBoth := i, -1
	for j < len(s) {
		c, n := classAt(s, j)
		if c&cUpper == 0 {
			break
		}
		if c&cLower != 0 {
			lastBoth = j
		}
		j += n
	}
	var end int
	if k := run(s, j, cLower); k > j {
		end = k
	} else if lastBoth >= 0 {
		_, n := classAt(s, lastBoth)
		end = lastBoth + n
	} else {
		return -1
	}
	return end + contraction(s, end)
}

// upperWord matches [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*
// and an optional contraction at s[i:], returning the end or -1.
func upperWord(s string, i int) int {
	j := run(s, i, cUpper)
	if j == i {
		return -1
	}
	end := run(s, j, cLower)
	return end + contraction(s, end)
}
