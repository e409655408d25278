// Package embeddingtest is a deterministic memory.Embedder for tests: no
// model, no network, the same vector for the same text on every machine.
// It is not a language model and knows no synonyms; do not use it to
// embed data anyone will search.
//
// Each word of a text (a run of letters and digits, lower-cased) is
// hashed (64-bit FNV-1a, then mixed) to one of the vector's dimensions with a sign, and the sum is
// scaled to unit length, so texts that share words get vectors of high
// cosine similarity and texts that share none get vectors near
// orthogonal.
package embeddingtest

import (
	"context"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/agentmem/memory"
)

// DefaultDims is the dimension of an Embedder whose Dims is zero.
const DefaultDims = 64

// Embedder is the deterministic embedder. The zero value embeds into
// DefaultDims dimensions. It is safe for concurrent use; do not copy it
// after first use.
type Embedder struct {
	// Dims is the dimension of the vectors, 1 to memory.MaxVectorDims;
	// zero means DefaultDims. Another value makes Embed fail with
	// memory.ErrInvalidArgument.
	Dims int

	calls, texts atomic.Int64
}

var _ memory.Embedder = (*Embedder)(nil)

func (e *Embedder) dims() int {
	if e.Dims == 0 {
		return DefaultDims
	}
	return e.Dims
}

// Model returns "embeddingtest-words-v1/" followed by the dimension.
func (e *Embedder) Model() string {
	return "embeddingtest-words-v1/" + strconv.Itoa(e.dims())
}

// Embed returns the vector of each text. A text without words gets the
// first unit vector, so every vector is valid for memory.CheckVector.
// Calls and Texts count what it was asked.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d := e.dims()
	if d < 1 || d > memory.MaxVectorDims {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "embeddingtest: Dims is %d; it must be between 1 and %d", d, memory.MaxVectorDims)
	}
	e.calls.Add(1)
	e.texts.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = Vector(t, d)
	}
	return out, nil
}

// Calls returns how many times Embed has run.
func (e *Embedder) Calls() int64 { return e.calls.Load() }

// Texts returns how many texts Embed has embedded, in all calls.
func (e *Embedder) Texts() int64 { return e.texts.Load() }

// Vector returns the unit vector of text in dims dimensions (1 to
// memory.MaxVectorDims), as Embed computes it.
func Vector(text string, dims int) []float32 {
	v := make([]float32, dims)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, w := range words {
		h := fnv.New64a()
		h.Write([]byte(w))
		x := mix(h.Sum64())
		i := int(x % uint64(dims))
		if x>>63 == 1 {
			v[i]--
		} else {
			v[i]++
		}
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		// No words, or words whose signs cancel out: still a valid vector.
		clear(v)
		v[0] = 1
		return v
	}
	s := float32(1 / math.Sqrt(norm))
	for i := range v {
		v[i] *= s
	}
	return v
}

// mix spreads every bit of x over all others (the finaliser of
// MurmurHash3), so dimensions do not follow FNV's weak low bits.
func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
