package varint_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/agentmem/memory/internal/varint"
	"github.com/agentmem/memory/internal/varint/varinttest"
)

var errBad = errors.New("bad")

func fail(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errBad}, args...)...)
}

// feed is varinttest.Feed in pieces below 7 bytes.
func feed(rnd *rand.Rand, data []byte, n int) *varint.Stream {
	return varinttest.Feed(rnd, data, n, 7)
}

// encoded is a sample of every value a Reader reads: a uvarint, a zig-zag
// varint, a string, and a section holding a uvarint and a string.
func encoded() []byte {
	b := binary.AppendUvarint(nil, 1<<40)
	b = binary.AppendVarint(b, -77777)
	b = varint.AppendString(b, "a string of some length")
	sec := binary.AppendUvarint(nil, 300)
	sec = varint.AppendString(sec, "inside")
	b = binary.AppendUvarint(b, uint64(len(sec)))
	b = append(b, sec...)
	return binary.AppendUvarint(b, 9)
}

// readAll reads what encoded wrote, the section on a goroutine of its own
// while the rest is read.
func readAll(r varint.Reader) ([]any, error) {
	var out []any
	u, err := r.Uvarint("u")
	if err != nil {
		return nil, err
	}
	v, err := r.Varint("v")
	if err != nil {
		return nil, err
	}
	s, err := r.String("s")
	if err != nil {
		return nil, err
	}
	sec, err := r.Section("section")
	if err != nil {
		return nil, err
	}
	type result struct {
		u   uint64
		s   string
		err error
	}
	inner := make(chan result, 1)
	go func() {
		var res result
		if res.u, res.err = sec.Uvarint("inner u"); res.err == nil {
			res.s, res.err = sec.String("inner s")
		}
		if res.err == nil && sec.Left() != 0 {
			res.err = fail("%d bytes after the section", sec.Left())
		}
		inner <- res
	}()
	last, err := r.Uvarint("last")
	in := <-inner
	if err != nil {
		return nil, err
	}
	if in.err != nil {
		return nil, in.err
	}
	if r.Left() != 0 {
		return nil, fail("%d bytes left", r.Left())
	}
	return append(out, u, v, s, in.u, in.s, last), nil
}

// TestStreamReads checks that a Reader of a stream fed in pieces reads
// what a Reader of the whole bytes does, its section on another
// goroutine.
func TestStreamReads(t *testing.T) {
	data := encoded()
	want, err := readAll(varint.Reader{B: data, Fail: fail})
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		got, err := readAll(feed(rnd, data, len(data)).Reader(fail))
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("read %v off a stream, want %v", got, want)
		}
	}
}

// TestStreamCutShort checks that a stream that ends before its length
// fails every read past what arrived, waiting for nothing more, and that
// counts are bounded by the stream's length.
func TestStreamCutShort(t *testing.T) {
	data := encoded()
	rnd := rand.New(rand.NewPCG(3, 4))
	for cut := range len(data) {
		_, err := readAll(feed(rnd, data[:cut], len(data)).Reader(fail))
		if !errors.Is(err, errBad) {
			t.Fatalf("cut after %d of %d bytes: %v, want the Fail error", cut, len(data), err)
		}
	}
	b := binary.AppendUvarint(nil, 100) // 100 items in a stream of 50 bytes
	r := feed(rnd, b, 50).Reader(fail)
	if _, err := r.Count(1, "items"); !errors.Is(err, errBad) {
		t.Errorf("a count beyond the stream's length: %v", err)
	}
}

// TestStreamWrite checks Write's bounds and what Written returns.
func TestStreamWrite(t *testing.T) {
	s := varint.NewStream(make([]byte, 4))
	if _, err := s.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte("de")); !errors.Is(err, varint.ErrStreamFull) {
		t.Errorf("writing past the length: %v", err)
	}
	if _, err := s.Write([]byte("d")); err != nil {
		t.Fatal(err)
	}
	s.End()
	if got := s.Written(); !bytes.Equal(got, []byte("abcd")) || s.Len() != 4 {
		t.Errorf("Written = %q, Len = %d", got, s.Len())
	}
}

// TestStreamFill checks that Fill hands over exactly the next n bytes of
// the buffer, refuses bytes past the length without calling fill, and
// that a failed fill lets readers see none of its bytes.
func TestStreamFill(t *testing.T) {
	s := varint.NewStream(make([]byte, 6))
	if err := s.Fill(2, func(dst []byte) error {
		if len(dst) != 2 || cap(dst) != 2 {
			t.Errorf("fill got %d bytes of room (cap %d), want 2", len(dst), cap(dst))
		}
		copy(dst, "ab")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	called := false
	if err := s.Fill(5, func([]byte) error { called = true; return nil }); !errors.Is(err, varint.ErrStreamFull) || called {
		t.Errorf("filling past the length: %v, fill called: %v", err, called)
	}
	if err := s.Fill(-1, func([]byte) error { called = true; return nil }); !errors.Is(err, varint.ErrStreamFull) || called {
		t.Errorf("filling a negative length: %v, fill called: %v", err, called)
	}
	if err := s.Fill(3, func(dst []byte) error {
		copy(dst, "xyz")
		return errBad
	}); !errors.Is(err, errBad) {
		t.Fatalf("a failed fill: %v", err)
	}
	s.End()
	if got := s.Written(); !bytes.Equal(got, []byte("ab")) {
		t.Errorf("Written after a failed fill = %q, want \"ab\"", got)
	}
	r := s.Reader(fail)
	if got, err := r.Next(3, "three bytes"); !errors.Is(err, errBad) {
		t.Errorf("a reader read %q (%v) of a failed fill's bytes", got, err)
	}
}
