package varint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
)

var errBad = errors.New("bad")

func reader(b []byte) *Reader {
	return &Reader{B: b, Fail: func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{errBad}, args...)...)
	}}
}

// TestReads checks every read on good input and its refusals: bytes cut
// short, a longer varint than its value needs, a count the bytes left
// cannot hold.
func TestReads(t *testing.T) {
	b := binary.AppendUvarint(nil, 300)
	b = binary.AppendVarint(b, -5)
	b = binary.AppendUvarint(b, 2) // a count of 2 items of 1 byte
	b = append(b, 'x', 'y')
	b = AppendString(b, "hello")
	r := reader(b)
	if v, err := r.Uvarint("u"); v != 300 || err != nil {
		t.Errorf("Uvarint = %d, %v", v, err)
	}
	if v, err := r.Varint("v"); v != -5 || err != nil {
		t.Errorf("Varint = %d, %v", v, err)
	}
	if n, err := r.Count(1, "items"); n != 2 || err != nil {
		t.Errorf("Count = %d, %v", n, err)
	}
	r.B = r.B[2:]
	if s, err := r.String("s"); s != "hello" || err != nil || len(r.B) != 0 {
		t.Errorf("String = %q, %v, %d bytes left", s, err, len(r.B))
	}
	for name, read := range map[string]func(*Reader) error{
		"an empty uvarint":       func(r *Reader) error { _, err := r.Uvarint("u"); return err },
		"an overlong uvarint":    func(r *Reader) error { r.B = []byte{0x80, 0x00}; _, err := r.Uvarint("u"); return err },
		"an overlong varint":     func(r *Reader) error { r.B = []byte{0x81, 0x00}; _, err := r.Varint("v"); return err },
		"a count beyond the end": func(r *Reader) error { r.B = []byte{3, 0, 0}; _, err := r.Count(1, "c"); return err },
		"2^62 items of 8 bytes": func(r *Reader) error {
			r.B = binary.AppendUvarint(nil, 1<<62)
			_, err := r.Count(8, "c")
			return err
		},
		"bytes cut short": func(r *Reader) error { r.B = []byte{5, 'a'}; _, err := r.Bytes("b"); return err },
	} {
		if err := read(reader(nil)); !errors.Is(err, errBad) {
			t.Errorf("%s: %v, want the Fail error", name, err)
		}
	}
}
