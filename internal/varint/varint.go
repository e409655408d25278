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
// its reads, from a description of what went wrong. A Reader of a Stream
// (Stream.Reader) has in B the bytes that have arrived, and waits for
// more when a read needs them: its caller reads B directly only for as
// many bytes as Next returned.
type Reader struct {
	B    []byte
	Fail func(format string, args ...any) error
	// src is the stream read, if any: B is then a slice of src.all
	// reaching to its end (cap), so cap(src.all)-cap(B) is where B
	// starts, and end is where what the Reader may read ends.
	src *Stream
	end int
}

// offset returns where B starts in the stream read.
func (r *Reader) offset() int { return cap(r.src.all) - cap(r.B) }

// Left returns how many bytes are left to read: of a stream, those that
// have not arrived too.
func (r *Reader) Left() int {
	if r.src == nil {
		return len(r.B)
	}
	return r.end - r.offset()
}

// need makes B hold n bytes or more, waiting for a stream's to arrive,
// and reports whether it does.
func (r *Reader) need(n int) bool {
	if len(r.B) >= n {
		return true
	}
	if r.src == nil || n > r.Left() {
		return false
	}
	off := r.offset()
	// A stream that ended short may end before off, which a Section
	// skipped to.
	avail := max(off, min(r.src.wait(off+n), r.end))
	r.B = r.src.all[off:avail:cap(r.src.all)]
	return len(r.B) >= n
}

// canonical reports whether the n-byte varint at the start of b is the
// shortest encoding of its value: a longer one ends in a zero byte.
func canonical(b []byte, n int) bool { return n == 1 || b[n-1] != 0 }

// Uvarint reads an unsigned varint, named what in errors.
func (r *Reader) Uvarint(what string) (uint64, error) {
	v, n := binary.Uvarint(r.B)
	if n <= 0 && r.src != nil && r.need(min(binary.MaxVarintLen64, r.Left())) {
		v, n = binary.Uvarint(r.B)
	}
	if n <= 0 || !canonical(r.B, n) {
		return 0, r.Fail("%s is cut short or malformed", what)
	}
	r.B = r.B[n:]
	return v, nil
}

// Varint reads a zig-zag varint, named what in errors.
func (r *Reader) Varint(what string) (int64, error) {
	v, n := binary.Varint(r.B)
	if n <= 0 && r.src != nil && r.need(min(binary.MaxVarintLen64, r.Left())) {
		v, n = binary.Varint(r.B)
	}
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
	if left := r.Left(); v > uint64(left/size) {
		return 0, r.Fail("%d %s in %d bytes", v, what, left)
	}
	return int(v), nil
}

// Next returns the next n bytes (n <= Left()), which alias B, named what
// in errors.
func (r *Reader) Next(n int, what string) ([]byte, error) {
	if n < 0 || !r.need(n) {
		return nil, r.Fail("%s is cut short", what)
	}
	b := r.B[:n:n]
	r.B = r.B[n:]
	return b, nil
}

// Bytes reads a length and that many bytes, which alias B.
func (r *Reader) Bytes(what string) ([]byte, error) {
	n, err := r.Count(1, what)
	if err != nil {
		return nil, err
	}
	return r.Next(n, what)
}

// String reads a length and that many bytes, as a string of its own.
func (r *Reader) String(what string) (string, error) {
	b, err := r.Bytes(what)
	return string(b), err
}

// Section reads a length and returns a Reader of that many bytes, which
// this one skips, waiting for none of them: of a stream, the two may
// then read on different goroutines.
func (r *Reader) Section(what string) (Reader, error) {
	n, err := r.Count(1, what)
	if err != nil {
		return Reader{}, err
	}
	sub := *r
	if r.src == nil {
		sub.B, r.B = r.B[:n:n], r.B[n:]
		return sub, nil
	}
	sub.end = r.offset() + n
	sub.B = r.B[:min(n, len(r.B))]
	r.B = r.B[n:max(n, len(r.B))] // n <= Left() <= cap(r.B)
	return sub, nil
}

// AppendString appends s, as String reads it, to dst.
func AppendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// Header reads an encoding's header, the bytes magic and a format byte,
// and refuses, with Fail, one that is not magic (what names the
// encoding in the error) or of another format.
func (r *Reader) Header(magic string, format byte, what string) error {
	head, err := r.Next(min(len(magic)+1, r.Left()), "the header")
	if err != nil {
		return err
	}
	if len(head) < len(magic)+1 || string(head[:len(magic)]) != magic {
		return r.Fail("not %s", what)
	}
	if head[len(magic)] != format {
		return r.Fail("format %d, this code reads %d", head[len(magic)], format)
	}
	return nil
}
