package vecindex

import (
	"encoding/binary"
	"math"

	"github.com/agentmem/memory/internal/varint"
)

// A Set's encoding (Encode) is what a search needs of it, as it is in
// memory, so that DecodeSet only copies: the dimension and the row count
// (uvarints), then the rows' unit vectors (dims float32 values a row),
// their 8-bit codes (dims bytes a row), their scales and their error
// bounds (a float32 a row each), float32 values little-endian. The Refs
// are not encoded: the caller encodes what its Refs stand for, in row
// order (Encode returns the Refs in that order), and DecodeSet tags the
// rows with consecutive Refs.

// rowBytes is the encoded size of a row of dims dimensions.
func rowBytes(dims int) int { return 5*dims + 8 }

// EncodedLen returns how many bytes Encode appends.
func (s *Set) EncodedLen() int {
	n := len(s.refs)
	return uvarintLen(uint64(s.dims)) + uvarintLen(uint64(n)) + n*rowBytes(s.dims)
}

// uvarintLen returns how many bytes binary.AppendUvarint appends for v.
func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// Encode appends the Set's encoding to dst and returns it, with the Refs
// of its rows in the order they are encoded. It only reads the Set.
func (s *Set) Encode(dst []byte) ([]byte, []Ref) {
	n := len(s.refs)
	dst = binary.AppendUvarint(dst, uint64(s.dims))
	dst = binary.AppendUvarint(dst, uint64(n))
	dst = appendFloats(dst, s.data)
	dst = append(dst, s.codes...)
	dst = appendFloats(dst, s.scales)
	dst = appendFloats(dst, s.errs)
	return dst, s.refs
}

// appendFloats appends xs to dst as little-endian float32 values.
func appendFloats(dst []byte, xs []float32) []byte {
	for _, x := range xs {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
	}
	return dst
}

// DecodeSet reads a Set's encoding (Encode) off r and returns the Set,
// its rows tagged first, first+1, and so on, in the order they were
// encoded. It refuses, with r's Fail, a dimension out of range, a row
// count the bytes left cannot hold, and values a Set cannot hold: a
// vector value, scale or error bound that is not finite, a scale that
// is not positive, an error bound that is negative. It does not check
// that the vectors are of unit length or that the codes quantise them,
// which would cost what decoding saves: the caller checks the bytes it
// decodes whole (the drivers store a checksum with them). Whatever the
// input, it allocates in proportion to the bytes read, and never panics.
func DecodeSet(r *varint.Reader, first Ref) (*Set, error) {
	dims, err := r.Uvarint("the dimension")
	if err != nil {
		return nil, err
	}
	if dims < 1 || dims > MaxDims {
		return nil, r.Fail("a set of %d dimensions", dims)
	}
	d := int(dims)
	n, err := r.Count(rowBytes(d), "rows")
	if err != nil {
		return nil, err
	}
	s := NewSet(d)
	if n == 0 {
		return s, nil
	}
	s.realloc(n)
	s.data = s.data[:n*d]
	if err := readFloats(r, s.data, "the vectors", false); err != nil {
		return nil, err
	}
	codes, err := r.Next(n*d, "the codes")
	if err != nil {
		return nil, err
	}
	s.codes = s.codes[:n*d]
	copy(s.codes, codes)
	s.scales = s.scales[:n]
	if err := readFloats(r, s.scales, "the scales", true); err != nil {
		return nil, err
	}
	s.errs = s.errs[:n]
	if err := readFloats(r, s.errs, "the error bounds", false); err != nil {
		return nil, err
	}
	for _, e := range s.errs {
		if e < 0 {
			return nil, r.Fail("a negative error bound")
		}
	}
	s.refs = s.refs[:n]
	s.rows = make(map[Ref]int, n)
	for i := range s.refs {
		ref := first + Ref(i)
		s.refs[i] = ref
		s.rows[ref] = i
	}
	return s, nil
}

// readFloats fills xs with little-endian float32 values read off r, a
// chunk at a time (so that a Reader of a stream waits for a chunk, not
// for the whole), refusing a value that is not finite, or, when
// positive, one that is not above zero.
func readFloats(r *varint.Reader, xs []float32, what string, positive bool) error {
	const chunk = 1 << 14
	for len(xs) > 0 {
		m := min(len(xs), chunk)
		b, err := r.Next(4*m, what)
		if err != nil {
			return err
		}
		// NaN and the infinities have every exponent bit set; a
		// finite value is below them in magnitude.
		bad := false
		for i := range m {
			bits := binary.LittleEndian.Uint32(b[4*i:])
			xs[i] = math.Float32frombits(bits)
			bad = bad || bits&0x7f800000 == 0x7f800000 || positive && (bits&0x7fffffff == 0 || bits>>31 != 0)
		}
		switch {
		case bad && positive:
			return r.Fail("%s hold a value that is not finite and positive", what)
		case bad:
			return r.Fail("%s hold a value that is not finite", what)
		}
		xs = xs[m:]
	}
	return nil
}
