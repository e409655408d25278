package vecindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/agentmem/memory/internal/varint"
	"github.com/agentmem/memory/internal/varint/varinttest"
)

var errDecode = errors.New("decode")

func failTest(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errDecode}, args...)...)
}

// TestEncodeRoundTrip checks that a decoded Set searches exactly as the
// Set encoded, its Refs renumbered from first in the order Encode
// returned them, after adds, replacements and removals; read whole and
// as a stream in random pieces.
func TestEncodeRoundTrip(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, dims := range []int{1, 3, 64, 97} {
		s := NewSet(dims)
		vecs := map[Ref][]float32{}
		for i := range 700 {
			ref := Ref(rnd.IntN(500))
			switch {
			case i%7 == 3:
				s.Remove(ref)
				delete(vecs, ref)
			default:
				v := randVec(rnd, dims)
				if s.Add(ref, v) {
					vecs[ref] = v
				}
			}
		}
		data, refs := s.Encode(nil)
		if len(data) != s.EncodedLen() {
			t.Fatalf("%d dims: Encode appended %d bytes, EncodedLen says %d", dims, len(data), s.EncodedLen())
		}
		if len(refs) != s.Len() {
			t.Fatalf("%d dims: Encode returned %d Refs for %d rows", dims, len(refs), s.Len())
		}
		const first = 1000
		renamed := map[Ref][]float32{}
		back := map[Ref]Ref{}
		for i, ref := range refs {
			renamed[first+Ref(i)] = vecs[ref]
			back[first+Ref(i)] = ref
		}
		for _, stream := range []bool{false, true} {
			r := varint.Reader{B: data, Fail: failTest}
			if stream {
				r = varinttest.Feed(rnd, data, len(data), 300).Reader(failTest)
			}
			got, err := DecodeSet(&r, first)
			if err != nil {
				t.Fatalf("%d dims: DecodeSet: %v", dims, err)
			}
			if r.Left() != 0 {
				t.Fatalf("%d dims: %d bytes left after the set", dims, r.Left())
			}
			if got.Len() != s.Len() || got.Dims() != dims {
				t.Fatalf("%d dims: decoded %d rows of %d dims, want %d of %d", dims, got.Len(), got.Dims(), s.Len(), dims)
			}
			again, _ := got.Encode(nil)
			if !bytes.Equal(again, data) {
				t.Fatalf("%d dims: a decoded set encodes differently", dims)
			}
			for range 20 {
				q := randVec(rnd, dims)
				k := 1 + rnd.IntN(40)
				want, err := Search([]*Set{s}, q, k, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				hits, err := Search([]*Set{got}, q, k, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				checkHits(t, fmt.Sprintf("%d dims, stream %v", dims, stream), hits, want2(want, back), renamed, q)
			}
			// The decoded set is an ordinary one: it takes adds and removals.
			if !got.Remove(first) || got.Has(first) || !got.Add(first, randVec(rnd, dims)) || got.Len() != s.Len() {
				t.Fatalf("%d dims: a decoded set does not take a removal and an add", dims)
			}
		}
	}
}

// want2 renames the Refs of hits of the encoded set to those DecodeSet
// gave the same rows (back maps new to old).
func want2(hits []Hit, back map[Ref]Ref) []Hit {
	fwd := map[Ref]Ref{}
	for n, o := range back {
		fwd[o] = n
	}
	out := slices.Clone(hits)
	for i := range out {
		out[i].Ref = fwd[out[i].Ref]
	}
	return out
}

// TestDecodeSetRefuses checks the refusals DecodeSet promises, each a
// Fail error, and that no cut of an encoding decodes.
func TestDecodeSetRefuses(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	s := NewSet(4)
	for i := range 5 {
		s.Add(Ref(i), randVec(rnd, 4))
	}
	good, _ := s.Encode(nil)
	header := 2 // two one-byte uvarints: 4 dimensions, 5 rows
	floatAt := func(section, i int) int {
		off := header
		sizes := []int{4 * 5 * 4, 5 * 4, 5 * 4, 5 * 4} // vectors, codes, scales, errors
		for _, n := range sizes[:section] {
			off += n
		}
		return off + 4*i
	}
	put := func(at int, x float32) []byte {
		b := slices.Clone(good)
		binary.LittleEndian.PutUint32(b[at:], math.Float32bits(x))
		return b
	}
	cases := map[string][]byte{
		"no dimension":       binary.AppendUvarint(nil, 0),
		"too many dims":      binary.AppendUvarint(nil, MaxDims+1),
		"more rows than fit": append(binary.AppendUvarint(binary.AppendUvarint(nil, 4), 6), good[header:]...),
		"a NaN vector value": put(floatAt(0, 7), float32(math.NaN())),
		"an infinite value":  put(floatAt(0, 0), float32(math.Inf(-1))),
		"a zero scale":       put(floatAt(2, 3), 0),
		"a negative scale":   put(floatAt(2, 0), -1),
		"a NaN error bound":  put(floatAt(3, 4), float32(math.NaN())),
		"a negative error":   put(floatAt(3, 1), -0.5),
	}
	for cut := range len(good) {
		cases[fmt.Sprintf("cut at %d", cut)] = good[:cut]
	}
	for name, data := range cases {
		r := varint.Reader{B: data, Fail: failTest}
		if got, err := DecodeSet(&r, 0); !errors.Is(err, errDecode) {
			t.Errorf("%s: DecodeSet = %v, %v; want a Fail error", name, got, err)
		}
	}
	// An empty set decodes, and takes vectors.
	r := varint.Reader{B: binary.AppendUvarint(binary.AppendUvarint(nil, 3), 0), Fail: failTest}
	empty, err := DecodeSet(&r, 0)
	if err != nil || empty.Len() != 0 || !empty.Add(1, []float32{1, 2, 3}) {
		t.Fatalf("an empty set: %v, %v", empty, err)
	}
}

// FuzzDecodeSet checks that DecodeSet refuses or accepts any input
// without panicking, that what it accepts encodes back to the bytes it
// read, and that a search over it does not panic.
func FuzzDecodeSet(f *testing.F) {
	rnd := rand.New(rand.NewPCG(7, 8))
	for _, dims := range []int{1, 2, 8} {
		s := NewSet(dims)
		for i := range 3 {
			s.Add(Ref(i), randVec(rnd, dims))
		}
		data, _ := s.Encode(nil)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := varint.Reader{B: data, Fail: failTest}
		s, err := DecodeSet(&r, 0)
		if err != nil {
			if !errors.Is(err, errDecode) {
				t.Fatalf("an error not made by Fail: %v", err)
			}
			return
		}
		again, _ := s.Encode(nil)
		if read := data[:len(data)-r.Left()]; !bytes.Equal(again, read) {
			t.Fatalf("decoded %x, which encodes as %x", read, again)
		}
		q := make([]float32, s.Dims())
		q[0] = 1
		if _, err := Search([]*Set{s}, q, 3, nil, nil); err != nil {
			t.Fatalf("Search over a decoded set: %v", err)
		}
	})
}

func TestUvarintLen(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 16383, 16384, MaxDims, 1<<32 - 1, 1 << 63, math.MaxUint64} {
		if got, want := uvarintLen(v), len(binary.AppendUvarint(nil, v)); got != want {
			t.Errorf("uvarintLen(%d) = %d, want %d", v, got, want)
		}
	}
}
