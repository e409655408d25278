package tokens

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The generated inputs of the exactness tests. They are built here, from
// fixed seeds, rather than stored; testdata/golden.json holds the counts
// OpenAI's tiktoken gives for them (see golden_test.go) and a hash of each
// input, so a change to a generator shows as such rather than as a wrong
// count.

// rng is a SplitMix64 generator: tiny, and its output is fixed by its
// definition, so the generated inputs never change with the Go release.
type rng uint64

func (r *rng) next() uint64 {
	*r += 0x9E3779B97F4A7C15
	z := uint64(*r)
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// interesting are code points at the edges of the patterns' classes.
var interesting = []rune{
	' ', '\t', '\n', '\r', '\v', '\f', 0x85, 0xA0, 0x1680, 0x2000, 0x2028, 0x2029, 0x202F, 0x3000, // whitespace
	0x1C, 0x1F, 0x200B, 0x200D, 0xFEFF, 0x00AD, // not whitespace
	'\'', '"', '/', '!', '.', ',', '-', '_', '<', '|', '>', '@', '#', 0xFFFD, 0x2019, // punctuation
	's', 'S', 't', 'T', 'r', 'R', 'e', 'E', 'v', 'V', 'm', 'M', 'l', 'L', 'd', 'D', 'k', 'K',
	0x017F, 0x212A, 0x212B, 0x0130, 0x0131, 0x1E9E, 0x00DF, // ſ, Kelvin, Ångström, İ, ı, ẞ, ß
	'0', '5', '9', 0x0660, 0x0669, 0x06F5, 0x0966, 0xFF11, 0x2167, 0x216B, 0x00B2, 0x00BD, 0x3007, 0x1D7CE, // numbers
	0x01C5, 0x01C8, 0x1F88, // title case
	0x02B0, 0x3005, 0x3041, 0x4E2D, 0x0627, 0x05D0, 0x0E01, 0xAC00, // Lm, Lo
	0x0301, 0x0308, 0x0951, 0x093E, 0x20DD, 0x0E31, 0x302A, 0xFE0F, // marks (Mn, Mc, Me)
	0x00E9, 0x00C9, 0x0416, 0x0436, 0x03A3, 0x03C3, 0x03C2, 0x10400, 0x10428, // cased letters
	0x1F600, 0x1F44D, 0x1F3FD, 0x2764, 0xE000, 0xF8FF, 0x10FFFD, 0xFFFF, 0xFDD0, // symbols, private use, noncharacters
}

// randomRune returns a code point from a mix of ranges: mostly the
// interesting ones and ASCII, some anywhere in the BMP or beyond.
func (r *rng) randomRune() rune {
	for {
		var c rune
		switch k := r.intn(16); {
		case k < 6:
			c = interesting[r.intn(len(interesting))]
		case k < 10:
			c = rune(0x20 + r.intn(0x5F))
		case k < 12:
			c = rune(0x80 + r.intn(0x780)) // Latin, Greek, Cyrillic, Hebrew, Arabic
		case k < 15:
			c = rune(r.intn(0x10000))
		default:
			c = rune(0x10000 + r.intn(0x100000))
		}
		if utf8.ValidRune(c) {
			return c
		}
	}
}

// randomText returns up to max code points of random text.
func (r *rng) randomText(max int) string {
	var b strings.Builder
	for n := r.intn(max) + 1; n > 0; n-- {
		b.WriteRune(r.randomRune())
	}
	return b.String()
}

// genCase is one generated input.
type genCase struct {
	name string
	text string
}

// randomCases returns n random texts of up to max code points each.
func randomCases(seed uint64, n, max int) []genCase {
	r := rng(seed)
	out := make([]genCase, n)
	for i := range out {
		out[i] = genCase{fmt.Sprintf("random-%d-%d", seed, i), r.randomText(max)}
	}
	return out
}

// adversarialCases returns long runs and edge cases: single words of many
// scripts, runs of digits, spaces, line breaks and punctuation, and the
// contractions and case-folding edges, at the given length in code points.
func adversarialCases(n int) []genCase {
	rep := func(s string) string { return strings.Repeat(s, max(1, n/utf8.RuneCountInString(s))) }
	var out []genCase
	add := func(name, text string) { out = append(out, genCase{fmt.Sprintf("%s-%d", name, n), text}) }
	for _, w := range []string{"a", "e", "A", "é", "Я", "ж", "中", "あ", "ا", "א", "ก", "가", "ǅ", "ß", "ſ", "K", "😀", "👍🏽"} {
		add("run "+w, rep(w))
		add("spaced run "+w, " "+rep(w))
	}
	for _, w := range []string{"ab", "abc", "Ab", "aB", "aA", "é́", "a\u0301", "\u0301", "\u0301A", "A\u0301", "ᵃA", "Aᵃ", "ʰA", "日本", "ёЁ"} {
		add("run "+w, rep(w))
	}
	for _, w := range []string{"0", "12", "١", "½", "Ⅻ", "0a", "a0", " 0"} {
		add("digits "+w, rep(w))
	}
	for _, w := range []string{" ", "  a", "\n", "\r\n", "\t", " \n", "\n ", "\u00a0", "\u3000", "\u2028", " \t\n\v\f\r", "\n\n a"} {
		add("space "+w, rep(w))
		add("space end "+w, "x"+rep(w))
		add("space then word "+w, rep(w)+"word")
	}
	for _, w := range []string{"!", "...", "/", "'", "''", "!\n", "!\n/", "//\n", " !", "<|endoftext|>", "\u0301!", "😀!"} {
		add("punct "+w, rep(w))
	}
	for _, w := range []string{"'s", "'S", "'ſ", "'t", "'re", "'RE", "'Re", "'ve", "'m", "'ll", "'LL", "'d", "'x", "a's", "A'S", "a'ſ", "A'LL", "'sa", "'K", "'K"} {
		add("contraction "+w, rep(w))
	}
	return out
}
