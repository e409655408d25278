package rowcodec

import (
	"errors"
	"fmt"
	"testing"
	"unsafe"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/varint"
)

var errFail = errors.New("decode")

func fail(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errFail}, args...)...)
}

// TestRoundTrip checks that rows read back as written, that kinds and
// speakers are kept once, and that the smallest row takes MinBytes.
func TestRoundTrip(t *testing.T) {
	rows := []Fields{
		{ID: "a", Kind: memory.KindFact, Key: "k", Created: -5, Expires: 1 << 62, Speaker: "Caroline", Asks: true},
		{ID: "b", Kind: memory.KindFact, Created: 7, Speaker: "Caroline"},
		{ID: "c"},
	}
	var data []byte
	for i := range rows {
		data = Append(data, &rows[i])
	}
	if n := len(Append(nil, &Fields{})); n != MinBytes {
		t.Errorf("the smallest row takes %d bytes, MinBytes is %d", n, MinBytes)
	}
	r := varint.Reader{B: data, Fail: fail}
	var d Decoder
	got := make([]Fields, len(rows))
	for i := range got {
		if err := d.Read(&r, &got[i]); err != nil {
			t.Fatal(err)
		}
		if got[i] != rows[i] {
			t.Errorf("row %d read back as %+v, written %+v", i, got[i], rows[i])
		}
	}
	if r.Left() != 0 {
		t.Errorf("%d bytes left", r.Left())
	}
	if unsafe.StringData(got[0].Speaker) != unsafe.StringData(got[1].Speaker) ||
		unsafe.StringData(string(got[0].Kind)) != unsafe.StringData(string(got[1].Kind)) {
		t.Error("a speaker or kind read twice is held twice")
	}
}

// TestRefuses checks that a row cut anywhere, and unknown flags, are
// Fail errors.
func TestRefuses(t *testing.T) {
	row := Append(nil, &Fields{ID: "id", Kind: memory.KindTurn, Key: "k", Created: 300, Expires: 9, Speaker: "Mel"})
	for n := range len(row) {
		r := varint.Reader{B: row[:n], Fail: fail}
		var f Fields
		if err := new(Decoder).Read(&r, &f); !errors.Is(err, errFail) {
			t.Errorf("cut after %d bytes: %v", n, err)
		}
	}
	bad := append([]byte(nil), row...)
	bad[len(bad)-1] = 2
	r := varint.Reader{B: bad, Fail: fail}
	var f Fields
	if err := new(Decoder).Read(&r, &f); !errors.Is(err, errFail) {
		t.Errorf("unknown flags: %v", err)
	}
}

// TestIdentity checks that an identity reads back as written, and that
// one cut short is a Fail error.
func TestIdentity(t *testing.T) {
	w := memory.Identity{Tenant: "t", User: "u", Agent: "", Instance: "i", Squad: "sq", Session: "s"}
	data := AppendIdentity(nil, w)
	r := varint.Reader{B: data, Fail: fail}
	if got, err := ReadIdentity(&r); err != nil || got != w || r.Left() != 0 {
		t.Fatalf("ReadIdentity = %+v, %v (%d bytes left); wrote %+v", got, err, r.Left(), w)
	}
	for n := range len(data) {
		r := varint.Reader{B: data[:n], Fail: fail}
		if _, err := ReadIdentity(&r); !errors.Is(err, errFail) {
			t.Errorf("cut after %d bytes: %v", n, err)
		}
	}
}
