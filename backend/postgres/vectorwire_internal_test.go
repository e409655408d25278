package postgres

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"
)

// encodeVector is the test's own encoder of array_send's format.
func encodeVector(v []float32) []byte {
	be := binary.BigEndian
	b := be.AppendUint32(nil, 1)
	b = be.AppendUint32(b, 0)
	b = be.AppendUint32(b, float4OID)
	b = be.AppendUint32(b, uint32(len(v)))
	b = be.AppendUint32(b, 1)
	for _, x := range v {
		b = be.AppendUint32(b, 4)
		b = be.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func TestDecodeVector(t *testing.T) {
	v := []float32{1.5, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, math.MaxFloat32, -3e-38}
	got, err := decodeVector(encodeVector(v))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, v, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
		t.Errorf("decodeVector = %v, want %v", got, v)
	}

	good := encodeVector([]float32{1, 2})
	set := func(off int, val uint32) []byte {
		b := slices.Clone(good)
		binary.BigEndian.PutUint32(b[off:], val)
		return b
	}
	bad := map[string][]byte{
		"shorter than its header": good[:19],
		"0 dimensions":            set(0, 0),
		"2 dimensions":            set(0, 2),
		"NULL elements":           set(4, 1),
		"element type 701":        set(8, 701),
		"3 elements has 16 bytes": set(12, 3),
		"0 elements has 16 bytes": set(12, 0),
		"has 15 bytes":            good[:len(good)-1],
		"element 1 is 8 bytes":    set(28, 8),
		"starts at index 0":       set(16, 0),
		"element 0 is -1 bytes":   set(20, math.MaxUint32),
	}
	for want, b := range bad {
		if _, err := decodeVector(b); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("decodeVector(%s) = %v, want an error mentioning %q", want, err, want)
		}
	}
}

// FuzzDecodeVector checks that decodeVector never panics and that what
// it accepts encodes back to the same bytes.
func FuzzDecodeVector(f *testing.F) {
	f.Add(encodeVector([]float32{1, -2, 3.5}))
	f.Add(encodeVector([]float32{float32(math.NaN())}))
	f.Add([]byte{0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeVector(b)
		if err != nil {
			return
		}
		if again := encodeVector(v); !slices.Equal(again, b) {
			t.Fatalf("decodeVector(%x) = %v, which encodes as %x", b, v, again)
		}
	})
}
