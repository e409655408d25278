// Package varint reads the values of a binary encoding off a byte slice
// — unsigned and zig-zag varints, counts, length-prefixed bytes — with
// every read bounded by the bytes left, for decoders that must refuse
// hostile input with an error, never a panic or an allocation the input
// does not pay for: a count of items is refused when the bytes left
// cannot hold that many, before the caller allocates for them. Only the
// shortest encoding of a varint is accepted (what encoding/binary's
// Append functions write), so an encoding reads one way only.
package varint

import "encoding/binary"

// Reader reads values off B, the bytes left. Fail makes the errors of
// its reads, from a description of what went wrong.
type Reader struct {
	B    []byte
	Fail func(format string, args ...any) error
}

// canonical reports whether the n-byte varint at the start of b is the
// shortest encoding of its value: a longer one ends in a zero byte.
func canonical(b []byte, n int) bool { return n == 1 || b[n-1] != 0 }

// Uvarint reads an unsigned varint, named what in errors.
func (r *Reader) Uvarint(what string) (uint64, error) {
	v, n := binary.Uvarint(r.B)
	if n <= 0 || !canonical(r.B, n) {
		return 0, r.Fail("%s is cut short or malformed", what)
	}
	r.B = r.B[n:]
	return v, nil
}

// Varint reads a zig-zag varint, named what in errors.
func (r *Reader) Varint(what string) (int64, error) {
	v, n := binary.Varint(r.B)
	if n <= 0 || !canonical(r.B, n) {
		return 0, r.Fail("%s is cut short or malformed", what)
	}
	r.B = r.B[n:]
	return v, nil
}

// Count reads a count of items that take at least size bytes each
// (size >= 1), and refuses one the bytes left cannot hold, so that what
// the caller allocates for the items is bounded by the input's length.
func (r *Reader) Count(size int, what string) (int, error) {
	v, err := r.Uvarint(what)
	if err != nil {
		return 0, err
	}
	if v > uint64(len(r.B)/size) {
		return 0, r.Fail("%d %s in %d bytes", v, what, len(r.B))
	}
	return int(v), nil
}

// Bytes reads a length and that many bytes, which alias B.
func (r *Reader) Bytes(what string) ([]byte, error) {
	n, err := r.Count(1, what)
	if err != nil {
		return nil, err
	}
	b := r.B[:n]
	r.B = r.B[n:]
	return b, nil
}

// String reads a length and that many bytes, as a string of its own.
func (r *Reader) String(what string) (string, error) {
	b, err := r.Bytes(what)
	return string(b), err
}

// AppendString appends s, as String reads it, to dst.
func AppendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}
