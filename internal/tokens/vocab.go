package tokens

import (
	"bytes"
	"fmt"
	"math/bits"
)

// noRank marks a byte sequence that is not a token.
const noRank = ^uint32(0)

// vocab maps the byte sequences of an encoding's mergeable tokens to their
// ranks. It is an open-addressing hash table over one string holding every
// token's bytes, built once and read-only after, so lookups need no locks
// and allocate nothing.
type vocab struct {
	arena  string   // the tokens' bytes, concatenated in rank order
	off    []uint32 // token r is arena[off[r]:off[r+1]]
	slots  []uint64 // 0: empty; else a token's slotEntry
	mask   uint64
	maxLen int // the longest token, in bytes; longer sequences are never looked up
	// pair holds the rank of every two-byte token (noRank for the rest),
	// so the first round of a merge needs no hashing.
	pair []uint32
	// byteRank holds the rank of every single byte.
	byteRank [256]uint32
}

// parseTiktoken reads a .tiktoken rank file: one token a line, its bytes in
// standard base64, a space, and its rank. Ranks must be 0..n-1, each once,
// and every single byte must be a token (as in every OpenAI encoding), so
// that any input can be encoded.
func parseTiktoken(data []byte) (*vocab, error) {
	lines := bytes.Count(data, []byte{'\n'}) + 1
	// Decoded tokens are 3/4 of their base64; the file is an upper bound.
	arena := make([]byte, 0, len(data)*3/4)
	starts := make([]uint32, 0, lines) // of each line's token in arena, in file order
	ranks := make([]uint32, 0, lines)
	for ln := 1; len(data) > 0; ln++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 {
			continue
		}
		sp := bytes.IndexByte(line, ' ')
		if sp < 0 {
			return nil, fmt.Errorf("line %d: no space", ln)
		}
		at := len(arena)
		var ok bool
		if arena, ok = appendBase64(arena, line[:sp]); !ok || len(arena) == at {
			return nil, fmt.Errorf("line %d: bad token %q", ln, line[:sp])
		}
		r, ok := parseRank(line[sp+1:])
		if !ok {
			return nil, fmt.Errorf("line %d: bad rank %q", ln, line[sp+1:])
		}
		starts = append(starts, uint32(at))
		ranks = append(ranks, r)
	}
	starts = append(starts, uint32(len(arena)))
	n := len(ranks)
	v := &vocab{off: make([]uint32, n+1), pair: make([]uint32, 1<<16)}
	inOrder := true
	for i, r := range ranks {
		inOrder = inOrder && r == uint32(i)
	}
	if inOrder { // as OpenAI's files are: the arena is already in rank order
		copy(v.off, starts)
		v.arena = string(arena)
	} else {
		line := make([]int32, n) // the line of each rank
		for i := range line {
			line[i] = -1
		}
		for i, r := range ranks {
			if int(r) >= n || line[r] >= 0 {
				return nil, fmt.Errorf("rank %d is out of range or repeated", r)
			}
			line[r] = int32(i)
		}
		sorted := make([]byte, 0, len(arena))
		for r, i := range line {
			v.off[r] = uint32(len(sorted))
			sorted = append(sorted, arena[starts[i]:starts[i+1]]...)
		}
		v.off[n] = uint32(len(sorted))
		v.arena = string(sorted)
	}

	size := 1 << bits.Len(uint(2*n)) // load factor at most 1/2
	v.slots = make([]uint64, size)
	v.mask = uint64(size - 1)
	for i := range v.pair {
		v.pair[i] = noRank
	}
	for i := range v.byteRank {
		v.byteRank[i] = noRank
	}
	for r := range uint32(n) {
		t := v.token(r)
		v.maxLen = max(v.maxLen, len(t))
		h := hashString(t)
		i := h & v.mask
		for v.slots[i] != 0 {
			if v.token(uint32(v.slots[i]&slotRankMask)) == t {
				return nil, fmt.Errorf("token %q has two ranks", t)
			}
			i = (i + 1) & v.mask
		}
		if len(t) > 0xFF || v.off[r] >= 1<<22 || r > slotRankMask {
			return nil, fmt.Errorf("token %d (%d bytes at %d) does not fit a slot", r, len(t), v.off[r])
		}
		v.slots[i] = slotEntry(h, len(t), v.off[r], r)
		switch len(t) {
		case 1:
			v.byteRank[t[0]] = r
		case 2:
			v.pair[uint16(t[0])<<8|uint16(t[1])] = r
		}
	}
	for b, r := range v.byteRank {
		if r == noRank {
			return nil, fmt.Errorf("byte %#x is not a token", b)
		}
	}
	return v, nil
}

// base64Value maps standard base64 digits to their values, and every
// other byte to 0xFF.
var base64Value = func() (t [256]uint8) {
	for i := range t {
		t[i] = 0xFF
	}
	for i, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/" {
		t[c] = uint8(i)
	}
	return t
}()

// appendBase64 appends the bytes that the padded standard base64 src
// encodes. It is encoding/base64's decoding, specialized to the short,
// strictly padded tokens of a rank file, where the general decoder's
// set-up per call costs more than the decoding.
func appendBase64(dst, src []byte) ([]byte, bool) {
	if len(src)%4 != 0 {
		return dst, false
	}
	for i := 0; i < len(src); i += 4 {
		a, b := base64Value[src[i]], base64Value[src[i+1]]
		if a|b == 0xFF {
			return dst, false
		}
		dst = append(dst, a<<2|b>>4)
		c, d := src[i+2], src[i+3]
		if i+4 == len(src) && c == '=' && d == '=' {
			return dst, b&0x0F == 0
		}
		cv := base64Value[c]
		if cv == 0xFF {
			return dst, false
		}
		dst = append(dst, b<<4|cv>>2)
		if i+4 == len(src) && d == '=' {
			return dst, cv&0x03 == 0
		}
		dv := base64Value[d]
		if dv == 0xFF {
			return dst, false
		}
		dst = append(dst, cv<<6|dv)
	}
	return dst, true
}

// parseRank parses a rank: decimal digits, below 2^31.
func parseRank(b []byte) (uint32, bool) {
	if len(b) == 0 || len(b) > 10 {
		return 0, false
	}
	var r uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		r = r*10 + uint64(c-'0')
	}
	return uint32(r), r < 1<<31
}

// size returns the number of tokens.
func (v *vocab) size() int { return len(v.off) - 1 }

// token returns the bytes of the token with rank r.
func (v *vocab) token(r uint32) string { return v.arena[v.off[r]:v.off[r+1]] }

// rank returns the rank of the token whose bytes are s, or noRank.
func (v *vocab) rank(s string) uint32 {
	if len(s) > v.maxLen {
		return noRank
	}
	h := hashString(s)
	want := slotEntry(h, len(s), 0, 0) // the tag and length to match
	for i := h & v.mask; ; i = (i + 1) & v.mask {
		e := v.slots[i]
		if e == 0 {
			return noRank
		}
		if e&^slotPlaceMask == want {
			off := uint32(e>>18) & (1<<22 - 1)
			if v.arena[off:off+uint32(len(s))] == s {
				return uint32(e & slotRankMask)
			}
		}
	}
}

// A slot packs what a lookup needs into one word, so that a lookup reads
// the table and then the token's bytes, nothing else: from the top, 16
// bits of the hash (to skip most mismatches unread), the token's length
// (8 bits), its offset in the arena (22 bits) and its rank (18 bits). The
// OpenAI encodings fit: tokens of at most 128 bytes, arenas under 2 MB,
// fewer than 2^18 tokens.
const (
	slotRankMask  = 1<<18 - 1
	slotPlaceMask = 1<<40 - 1 // offset and rank
)

func slotEntry(h uint64, n int, off, rank uint32) uint64 {
	return h>>48<<48 | uint64(n)<<40 | uint64(off)<<18 | uint64(rank)
}

// hashString hashes s for the vocab table. The table is fixed, so the
// hash needs no seed: input can only look keys up, never add colliding
// ones, and the longest probe sequence is a property of the table.
func hashString(s string) uint64 {
	const k0, k1 = 0x9E3779B97F4A7C15, 0xD6E8FEB86659FD93
	h := uint64(len(s)) ^ k0
	for len(s) >= 8 {
		h = mix(h^load64(s), k1)
		s = s[8:]
	}
	var t uint64
	for i := len(s) - 1; i >= 0; i-- {
		t = t<<8 | uint64(s[i])
	}
	return mix(h^t, k1)
}

// mix multiplies a by b as 128-bit numbers and folds the halves together.
func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// load64 reads the first eight bytes of s as a little-endian number.
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
