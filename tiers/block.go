package tiers

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/memory"
)

// The words of the two delimiters, case-folded and without spaces: what a
// bracketed span must reduce to for RecalledLine to neutralise it.
const (
	headerWords = "previousexecutioncontext"
	footerWords = "currenttaskfollows"
)

// RecalledLine returns text as a line of the recalled block, the way
// Summary.Recall and Vector.Recall render each record, so that recalled
// text can neither close the block nor open another:
//
//   - It is made one line: every control character (line feed, carriage
//     return, tab, ...) and the Unicode line and paragraph separators
//     become a space, a CR LF pair one space. Lines saved by Summary and
//     Vector are one line already.
//   - Every bracketed span that reads as a delimiter has its brackets
//     replaced by parentheses: "[Current task follows]" becomes
//     "(Current task follows)". A span reads as a delimiter when the text
//     between an ASCII '[' and the next ']' — once white space and
//     invisible formatting characters (Unicode category Cf, such as
//     U+200B) are removed — equals "Previousexecutioncontext" or
//     "Currenttaskfollows" ignoring case (Unicode case folding), so
//     "[ current  TASK follows ]" and "[Previous\u00a0execution context]"
//     are neutralised too.
//   - Invalid UTF-8, which no saved line holds, becomes U+FFFD.
//
// Nothing else changes, so the text stays readable, and the result holds
// neither delimiter in any of those spellings. A step's "[<workflow>/<step>]"
// prefix never reads as a delimiter: Step.Validate keeps brackets out of the
// names, and the key holds a '/'.
func RecalledLine(text string) string {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	text = flatten(text)
	if !strings.Contains(text, "[") {
		return text
	}
	var out []byte // a copy, made at the first span to neutralise
	open := -1
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '[':
			open = i
		case ']':
			if open >= 0 && delimiterWords(text[open+1:i]) {
				if out == nil {
					out = []byte(text)
				}
				out[open], out[i] = '(', ')'
			}
			open = -1
		}
	}
	if out == nil {
		return text
	}
	return string(out)
}

// delimiterWords reports whether inner, the text between a span's
// brackets, reads as the words of a delimiter; see RecalledLine.
func delimiterWords(inner string) bool {
	if len(inner) < len(footerWords) {
		return false
	}
	var b strings.Builder
	for _, r := range inner {
		if unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) {
			continue
		}
		b.WriteRune(r)
		if b.Len() > 4*len(headerWords) { // longer than any folding of the words
			return false
		}
	}
	w := b.String()
	return strings.EqualFold(w, headerWords) || strings.EqualFold(w, footerWords)
}

// flatten makes s one line as RecalledLine describes.
func flatten(s string) string {
	if strings.IndexFunc(s, lineBreaking) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for r := range lineRunes(s) {
		b.WriteRune(r)
	}
	return b.String()
}

// renderBlock returns the recalled block for lines, oldest first, each
// already rendered by RecalledLine:
//
//	[Previous execution context]
//	<line>
//	...
//
//	[Current task follows]
//
// followed by a line break. It returns "" when there are no lines.
func renderBlock(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(ContextHeader)
	b.WriteByte('\n')
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(ContextFooter)
	b.WriteByte('\n')
	return b.String()
}

// recollection returns recs and their lines (oldest first, each already
// rendered by RecalledLine) as a Recollection: the block renderBlock makes
// and its token count by counter. It is empty when there are no lines.
func recollection(ctx context.Context, counter memory.TokenCounter, recs []memory.Record, lines []string) (memory.Recollection, error) {
	text := renderBlock(lines)
	if text == "" {
		return memory.Recollection{}, nil
	}
	n, err := counter.CountTokens(ctx, text)
	if err != nil {
		return memory.Recollection{}, err
	}
	return memory.Recollection{Records: recs, Text: text, Tokens: max(0, n)}, nil
}

// frameText is the block's text without any lines; its token count is the
// framing's share of a recall budget.
const frameText = ContextHeader + "\n\n" + ContextFooter + "\n"
