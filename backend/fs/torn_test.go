package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

var tornScope = memory.Identity{Tenant: "torn", Session: "s"}

// writeFrames stores n single-record batches in a new store in dir and
// returns the log's size after each frame (ends[0] is the header's end).
func writeFrames(t *testing.T, dir string, n int) (ends []int64) {
	t.Helper()
	d, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ends = append(ends, d.end)
	for i := range n {
		r := memory.NewTurn(tornScope, memory.RoleUser, fmt.Sprintf("frame %d", i), time.Unix(int64(i), 0))
		r.ID = fmt.Sprintf("r-%02d", i)
		if err := d.Put(context.Background(), []memory.Record{r}); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, d.end)
	}
	return ends
}

// storedIDs returns the ids d holds in the torn scope, oldest first.
func storedIDs(t *testing.T, d *Driver) []string {
	t.Helper()
	recs, err := d.List(context.Background(), driver.Query{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldSession, Identity: tornScope}})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		out[len(recs)-1-i] = r.ID
	}
	return out
}

func wantIDs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("r-%02d", i)
	}
	return out
}

// TestTornTail damages the end of the log by hand in the ways a crash can
// — a frame cut short at every length, a last frame with a garbled byte, a
// header with an impossible length, a block of zeros — and checks that
// the store reopens, holds every complete frame, cuts the damage off and
// takes new writes after it.
func TestTornTail(t *testing.T) {
	const frames = 5
	cases := []struct {
		name   string
		damage func(t *testing.T, path string, ends []int64)
		keep   int // frames that survive
	}{
		{"last frame cut after its header", func(t *testing.T, path string, ends []int64) {
			truncate(t, path, ends[frames-1]+frameHeaderBytes)
		}, frames - 1},
		{"last frame cut inside its header", func(t *testing.T, path string, ends []int64) {
			truncate(t, path, ends[frames-1]+5)
		}, frames - 1},
		{"last frame missing its last byte", func(t *testing.T, path string, ends []int64) {
			truncate(t, path, ends[frames]-1)
		}, frames - 1},
		{"last frame with a garbled payload byte", func(t *testing.T, path string, ends []int64) {
			flipByte(t, path, ends[frames]-3)
		}, frames - 1},
		{"last frame with a garbled checksum", func(t *testing.T, path string, ends []int64) {
			flipByte(t, path, ends[frames-1]+9)
		}, frames - 1},
		{"a partial header after the last frame", func(t *testing.T, path string, ends []int64) {
			appendBytes(t, path, []byte{7, 0, 0})
		}, frames},
		{"zeros after the last frame", func(t *testing.T, path string, ends []int64) {
			appendBytes(t, path, make([]byte, 4096))
		}, frames},
		{"a header declaring more than the file holds", func(t *testing.T, path string, ends []int64) {
			appendBytes(t, path, []byte{0xff, 0xff, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 'x'})
		}, frames},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ends := writeFrames(t, dir, frames)
			path := filepath.Join(dir, logName)
			c.damage(t, path, ends)

			d, err := Open(dir, Options{})
			if err != nil {
				t.Fatalf("reopening a log with a torn tail: %v", err)
			}
			defer d.Close()
			if got, want := storedIDs(t, d), wantIDs(c.keep); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("after reopening: stored %v, want %v", got, want)
			}
			if fi, err := os.Stat(path); err != nil || fi.Size() != ends[c.keep] {
				t.Fatalf("the log is %d bytes (%v), want the torn tail cut off at %d", fi.Size(), err, ends[c.keep])
			}
			r := memory.NewTurn(tornScope, memory.RoleUser, "after", time.Unix(100, 0))
			r.ID = "r-99"
			if err := d.Put(context.Background(), []memory.Record{r}); err != nil {
				t.Fatal(err)
			}
			d2, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer d2.Close()
			if got, want := storedIDs(t, d2), append(wantIDs(c.keep), "r-99"); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("after a write past the cut: stored %v, want %v", got, want)
			}
		})
	}
}

// TestTornTailSeenByReader checks that a Driver already open, reading
// without the lock, stops at a torn tail and keeps serving the complete
// frames, and that a writer then cuts the tail off and appends.
func TestTornTailSeenByReader(t *testing.T) {
	dir := t.TempDir()
	ends := writeFrames(t, dir, 3)
	d, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	appendBytes(t, filepath.Join(dir, logName), []byte{50, 0, 0, 0, 0, 0, 0, 0, 9, 9, 9, 9, 'p', 'a', 'r'})
	if got, want := storedIDs(t, d), wantIDs(3); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("a reader facing a torn tail: stored %v, want %v", got, want)
	}
	if d.end != ends[3] {
		t.Fatalf("the reader moved to offset %d, past the last complete frame at %d", d.end, ends[3])
	}
	r := memory.NewTurn(tornScope, memory.RoleUser, "after", time.Unix(100, 0))
	r.ID = "r-03"
	if err := d.Put(context.Background(), []memory.Record{r}); err != nil {
		t.Fatal(err)
	}
	if got, want := storedIDs(t, d), wantIDs(4); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the writer cut the tail: stored %v, want %v", got, want)
	}
}

// TestDamagedMiddle checks that a frame failing its checksum with more
// frames after it is refused as damage, never cut off with what follows.
func TestDamagedMiddle(t *testing.T) {
	dir := t.TempDir()
	ends := writeFrames(t, dir, 4)
	path := filepath.Join(dir, logName)
	flipByte(t, path, ends[2]-2)
	_, err := Open(dir, Options{})
	if !errors.Is(err, memory.ErrInvalidArgument) {
		t.Fatalf("opening a log damaged in the middle: got %v, want ErrInvalidArgument", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != ends[4] {
		t.Fatalf("the damaged log is %d bytes (%v), want it untouched at %d", fi.Size(), err, ends[4])
	}
}

// TestNotALog checks that Open refuses a log it cannot read: another
// file's bytes, a header cut short, a newer format.
func TestNotALog(t *testing.T) {
	for _, c := range []struct {
		name  string
		bytes []byte
		want  error
	}{
		{"another file", []byte("SQLite format 3\x00 and then some more bytes"), memory.ErrInvalidArgument},
		{"a short header", []byte(logMagic), memory.ErrInvalidArgument},
		{"a newer format", func() []byte {
			b := encodeHeader(logHeader{generation: 1})
			b[8] = logFormat + 1
			return resum(b)
		}(), memory.ErrUnimplemented},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, logName), c.bytes, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Open(dir, Options{})
			if !errors.Is(err, c.want) {
				t.Fatalf("Open: got %v, want %v", err, c.want)
			}
		})
	}
}

// resum recomputes a header's checksum after it was edited.
func resum(b []byte) []byte {
	s := frameSum(b[:24], nil)
	b[24], b[25], b[26], b[27] = byte(s), byte(s>>8), byte(s>>16), byte(s>>24)
	return b
}

func truncate(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x5a
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func appendBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}
