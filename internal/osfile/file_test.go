package osfile_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/osfile"
)

// writeString returns a write function for WriteTemp and Replace that
// writes s.
func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

// names lists dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestReplace checks that Replace puts the new contents in place with
// the permissions asked for, replacing an old file, and that a failed
// write keeps the old contents and leaves no temporary file behind.
func TestReplace(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "data")
	for _, contents := range []string{"first", "second, longer than the first"} {
		if err := osfile.Replace(path, tmp, "data-", 0o600, writeString(contents)); err != nil {
			t.Fatalf("Replace with %q: %v", contents, err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != contents {
			t.Fatalf("after Replace with %q the file holds %q (%v)", contents, got, err)
		}
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("the replaced file has permissions %v, want 0600", perm)
		}
	}
	failed := errors.New("the writer gave up")
	err := osfile.Replace(path, tmp, "data-", 0o600, func(w io.Writer) error {
		_, _ = io.WriteString(w, "half")
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("Replace with a failing writer = %v, want its error", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "second, longer than the first" {
		t.Fatalf("a failed Replace changed the file to %q", got)
	}
	if left := names(t, tmp); len(left) != 0 {
		t.Fatalf("a failed Replace left %v in the temporary directory", left)
	}
	if err := osfile.Replace(filepath.Join(dir, "missing", "data"), tmp, "", 0o600, writeString("x")); !errors.Is(err, iofs.ErrNotExist) {
		t.Fatalf("Replace into a missing directory = %v, want fs.ErrNotExist", err)
	}
	if left := names(t, tmp); len(left) != 0 {
		t.Fatalf("a Replace that could not rename left %v in the temporary directory", left)
	}
}

// TestWriteTempAndRename checks the two halves of Replace on their own:
// WriteTemp's files carry the prefix, never collide, and hold what was
// written; Rename moves one over another file.
func TestWriteTempAndRename(t *testing.T) {
	dir := t.TempDir()
	seen := map[string]bool{}
	for i := range 20 {
		p, err := osfile.WriteTemp(dir, "entry-", 0o640, writeString(fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] || filepath.Dir(p) != dir || filepath.Base(p)[:6] != "entry-" {
			t.Fatalf("WriteTemp made %s (seen before: %v)", p, seen[p])
		}
		seen[p] = true
		if got, _ := os.ReadFile(p); string(got) != fmt.Sprint(i) {
			t.Fatalf("%s holds %q, want %d", p, got, i)
		}
	}
	if _, err := osfile.WriteTemp(filepath.Join(dir, "missing"), "", 0o640, writeString("x")); !errors.Is(err, iofs.ErrNotExist) {
		t.Fatalf("WriteTemp in a missing directory = %v, want fs.ErrNotExist", err)
	}
	a, _ := osfile.WriteTemp(dir, "", 0o640, writeString("a"))
	b, _ := osfile.WriteTemp(dir, "", 0o640, writeString("b"))
	if err := osfile.Rename(a, b); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(b); string(got) != "a" {
		t.Fatalf("after Rename the target holds %q, want a", got)
	}
	if _, err := os.Stat(a); !errors.Is(err, iofs.ErrNotExist) {
		t.Fatalf("after Rename the source still exists (%v)", err)
	}
	if err := osfile.SyncDir(dir); err != nil {
		t.Fatalf("SyncDir: %v", err)
	}
}

// TestClassify checks the sentinel each kind of file-system error gets,
// that the native error stays reachable, and what passes unchanged.
func TestClassify(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, missing := os.Open(filepath.Join(dir, "missing"))
	_, notDir := os.Open(filepath.Join(file, "below"))
	type errorCase struct {
		name string
		err  error
		want error
	}
	cases := []errorCase{
		{"a missing file", missing, memory.ErrNotFound},
		{"a refusal", &os.PathError{Op: "open", Path: file, Err: iofs.ErrPermission}, memory.ErrPermissionDenied},
		{"anything else", &os.PathError{Op: "write", Path: file, Err: iofs.ErrClosed}, memory.ErrClosed},
	}
	// Windows reports a path through a file as a missing path.
	if runtime.GOOS != "windows" {
		cases = append(cases, errorCase{"a file where a directory belongs", notDir, memory.ErrInvalidArgument})
	}
	for _, c := range cases {
		err := osfile.Classify(c.err, "doing it")
		if !errors.Is(err, c.want) {
			t.Errorf("%s: Classify = %v, want %v", c.name, err, c.want)
		}
		var pe *os.PathError
		if !errors.As(err, &pe) {
			t.Errorf("%s: the *os.PathError is not reachable in %v", c.name, err)
		}
	}
	classified := memory.Errorf(memory.ErrConflict, "already")
	for _, err := range []error{nil, context.Canceled, context.DeadlineExceeded, classified} {
		if got := osfile.Classify(err, "doing it"); got != err {
			t.Errorf("Classify(%v) = %v, want it unchanged", err, got)
		}
	}
}
