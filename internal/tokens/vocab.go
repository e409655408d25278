package tokens

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/bits"
	"strconv"
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
	slots  []uint64 // 0: empty; else hash tag<<32 | rank+1
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
	toks := make([][]byte, 0, lines)
	ranks := make([]int, 0, lines)
	total := 0
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
		tok := make([]byte, base64.StdEncoding.DecodedLen(sp))
		n, err := base64.StdEncoding.Decode(tok, line[:sp])
		if err != nil || n == 0 {
			return nil, fmt.Errorf("line %d: bad token: %v", ln, err)
		}
		r, err := strconv.Atoi(string(line[sp+1:]))
		if err != nil || r < 0 {
			return nil, fmt.Errorf("line %d: bad rank %q", ln, line[sp+1:])
		}
		toks = append(toks, tok[:n])
		ranks = append(ranks, r)
		total += n
	}
	n := len(toks)
	byRank := make([][]byte, n)
	for i, r := range ranks {
		if r >= n || byRank[r] != nil {
			return nil, fmt.Errorf("rank %d is out of range or repeated", r)
		}
		byRank[r] = toks[i]
	}
	v := &vocab{off: make([]uint32, n+1), pair: make([]uint32, 1<<16)}
	arena := make([]byte, 0, total)
	for r, t := range byRank {
		v.off[r] = uint32(len(arena))
		arena = append(arena, t...)
		v.maxLen = max(v.maxLen, len(t))
	}
	v.off[n] = uint32(len(arena))
	v.arena = string(arena)

	size := 1 << bits.Len(uint(2*n)) // load factor at most 1/2
	v.slots = make([]uint64, size)
	v.mask = uint64(size - 1)
	for r := range n {
		t := v.token(uint32(r))
		h := hashString(t)
		i := h & v.mask
		for v.slots[i] != 0 {
			if v.token(uint32(v.slots[i])-1) == t {
				return nil, fmt.Errorf("token %q has two ranks", t)
			}
			i = (i + 1) & v.mask
		}
		v.slots[i] = h>>32<<32 | uint64(r+1)
	}
	for i := range v.pair {
		v.pair[i] = v.rank(string([]byte{byte(i >> 8), byte(i)}))
	}
	for b := range 256 {
		v.byteRank[b] = v.rank(string([]byte{byte(b)}))
		if v.byteRank[b] == noRank {
			return nil, fmt.Errorf("byte %#x is not a token", b)
		}
	}
	return v, nil
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
	tag := h >> 32
	for i := h & v.mask; ; i = (i + 1) & v.mask {
		e := v.slots[i]
		if e == 0 {
			return noRank
		}
		if e>>32 == tag {
			r := uint32(e) - 1
			if v.arena[v.off[r]:v.off[r+1]] == s {
				return r
			}
		}
	}
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
