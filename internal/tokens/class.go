package tokens

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// The character classes the encodings' split patterns use, as bits of one
// byte per code point. A code point may carry several. They come from the
// Unicode Character Database of the version tiktoken's regular-expression
// engine uses (unicode_tables.go, made by gen_unicode.mjs), not from the
// unicode package, whose version is the Go release's and older.
const (
	cLetter  = 1 << iota // \p{L}
	cNumber              // \p{N}
	cSpace               // \s: the Unicode White_Space property
	cNewline             // \r or \n (which also carry cSpace)
	cUpper               // o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	cLower               // o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}]
)

// cOther is the class of a code point in none of the sets; in both
// encodings' patterns it is "punctuation", [^\s\p{L}\p{N}].
const cOther = 0

// classRange gives the classes of the code points lo through hi.
type classRange struct {
	lo, hi rune
	class  uint8
}

// asciiClass holds the classes of the ASCII code points.
var asciiClass = func() (t [128]uint8) {
	for _, r := range classRanges {
		for c := r.lo; c <= r.hi && c < 128; c++ {
			t[c] = r.class
		}
	}
	return t
}()

// The classes of all code points, as a two-level table: blockOf maps the
// high bits of a code point to one of the distinct 256-entry blocks. Few
// blocks differ (most of the code space is unassigned or uniform), so the
// table is small; it is built on first use of a non-ASCII code point.
var (
	unicodeOnce sync.Once
	blockOf     []uint16
	blocks      [][256]uint8
)

func buildUnicodeTable() {
	const nBlocks = (unicode.MaxRune + 1) >> 8
	flat := make([]uint8, unicode.MaxRune+1)
	for _, r := range classRanges {
		for c := r.lo; c <= r.hi; c++ {
			flat[c] = r.class
		}
	}

	seen := map[[256]uint8]uint16{}
	blockOf = make([]uint16, nBlocks)
	for b := range nBlocks {
		var blk [256]uint8
		copy(blk[:], flat[b<<8:])
		id, ok := seen[blk]
		if !ok {
			id = uint16(len(blocks))
			seen[blk] = id
			blocks = append(blocks, blk)
		}
		blockOf[b] = id
	}
}

// tableClassOf returns the classes of r from the tables.
func tableClassOf(r rune) uint8 {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	unicodeOnce.Do(buildUnicodeTable)
	return blocks[blockOf[r>>8]][r&0xff]
}

// classAt returns the classes of the code point starting at s[i] and its
// length in bytes. Invalid UTF-8 reads as one byte of class cOther, the
// class of U+FFFD, so that hostile input is still split deterministically.
func classAt(s string, i int) (uint8, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError {
		return cOther, n
	}
	unicodeOnce.Do(buildUnicodeTable)
	return blocks[blockOf[r>>8]][r&0xff], n
}
