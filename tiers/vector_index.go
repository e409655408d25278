package tiers

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/osfile"
)

// The files vector memory keeps beside its entries. They start with a dot,
// so they never look like entries.
const (
	// vectorIndexFile lists the entries in the order they were written: a
	// magic line, then one "+" line per entry written and one "-" line per
	// entry pruned. It is only ever appended to, under the exclusive lock,
	// and replaced whole (temporary file, fsync, rename) when compacted or
	// rebuilt.
	vectorIndexFile = ".index"
	// vectorLockFile is locked: shared to read the index, exclusive to
	// write entries or the index. It is never replaced.
	vectorLockFile = ".lock"
	// vectorTempDir holds files being written. It sits inside the
	// directory, so renames out of it are atomic, and only writers holding
	// the exclusive lock put files there: whatever a holder of that lock
	// finds in it was left by a crash.
	vectorTempDir = ".tmp"
	// indexMagic starts the index's header line, which goes on with 64
	// random bits that tell one index file from its replacement even when
	// the file system reuses the inode.
	indexMagic = "agentmem-vector-index 1"
	headerLen  = len(indexMagic) + 1 + 16 + 1
)

// newHeader returns a fresh header line for an index file.
func newHeader() string { return indexMagic + " " + tempName()[:16] + "\n" }

// readHeader returns the header line of the index r, and false when r does
// not start with one.
func readHeader(r io.ReaderAt) (string, bool) {
	head := make([]byte, headerLen)
	if n, err := r.ReadAt(head, 0); n != headerLen || err != nil && !errors.Is(err, io.EOF) {
		return "", false
	}
	h := string(head)
	if !strings.HasPrefix(h, indexMagic+" ") || h[headerLen-1] != '\n' {
		return "", false
	}
	for _, c := range h[len(indexMagic)+1 : headerLen-1] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", false
		}
	}
	return h, true
}

// addLine returns the index line recording e: tab-separated, since neither
// identity fields, step names nor a step's one-line text hold control
// characters. The text is there so a new process can build its search
// index from this one file instead of opening every entry.
func addLine(e vectorEntry) string {
	var b strings.Builder
	b.WriteString("+\t")
	b.WriteString(e.name)
	b.WriteByte('\t')
	b.WriteString(strconv.Itoa(e.tokens))
	for _, f := range entryFields {
		b.WriteByte('\t')
		b.WriteString(e.who.Get(f.f))
	}
	b.WriteByte('\t')
	b.WriteString(e.key)
	b.WriteByte('\t')
	b.WriteString(e.text)
	b.WriteByte('\n')
	return b.String()
}

// delLine returns the index line recording that name was pruned.
func delLine(name string) string { return "-\t" + name + "\n" }

// parseLine parses one index line without its line break. ok is false for
// a line that is not well formed (a writer that crashed mid-append leaves
// one); readers skip such lines.
func parseLine(line []byte) (add bool, e vectorEntry, ok bool) {
	return parseLineString(string(line))
}

// lineFields is how many tab-separated fields follow the "+" of an index
// line: the name, the token count, the identity fields, the key and the
// text.
const lineFields = 4 + 6

// parseLineString is parseLine for a string; the entry's strings share
// s's memory.
func parseLineString(s string) (add bool, e vectorEntry, ok bool) {
	switch {
	case strings.HasPrefix(s, "-\t"):
		e.name = s[2:]
		e.created, ok = parseEntryName(e.name)
		return false, e, ok
	case !strings.HasPrefix(s, "+\t"):
		return false, e, false
	}
	var parts [lineFields]string
	rest := s[2:]
	for n := range lineFields - 1 {
		i := strings.IndexByte(rest, '\t')
		if i < 0 {
			return false, e, false
		}
		parts[n], rest = rest[:i], rest[i+1:]
	}
	if strings.IndexByte(rest, '\t') >= 0 {
		return false, e, false
	}
	parts[lineFields-1] = rest
	e.name = parts[0]
	if e.created, ok = parseEntryName(e.name); !ok {
		return false, e, false
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n < 0 {
		return false, e, false
	}
	e.tokens = n
	e.who = identityOf(parts[2 : 2+len(entryFields)])
	e.key = parts[2+len(entryFields)]
	e.text = parts[3+len(entryFields)]
	return true, e, true
}

// lock takes the directory's lock in mode how, waiting while another
// process or Vector holds a conflicting one, and returns the function that
// releases it. Each call opens the lock file anew, so goroutines of one
// process exclude each other as separate processes do. A done context
// stops the wait.
func (v *Vector) lock(ctx context.Context, how osfile.Mode) (func(), error) {
	f, err := os.OpenFile(filepath.Join(v.dir, vectorLockFile), os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fsError(err, "opening the vector lock file")
	}
	if err := osfile.Lock(ctx, f, how); err != nil {
		f.Close()
		return nil, fsError(err, "locking the vector directory")
	}
	return func() {
		_ = osfile.Unlock(f)
		_ = f.Close()
	}, nil
}

// openIndex opens the index for reading under a shared lock and returns it
// with its size at that moment: every line before that size is complete
// and stays as it is, because the file is only appended to or replaced
// whole. A missing or unrecognisable index is rebuilt from the directory
// first.
func (v *Vector) openIndex(ctx context.Context) (*os.File, int64, error) {
	for attempt := 0; ; attempt++ {
		f, size, err := v.openIndexShared(ctx)
		if err == nil || attempt == 1 || !errors.Is(err, memory.ErrNotFound) {
			return f, size, err
		}
		if err := v.ensureIndex(ctx); err != nil {
			return nil, 0, err
		}
	}
}

func (v *Vector) openIndexShared(ctx context.Context) (*os.File, int64, error) {
	release, err := v.lock(ctx, osfile.Shared)
	if err != nil {
		return nil, 0, err
	}
	defer release()
	f, err := os.Open(filepath.Join(v.dir, vectorIndexFile))
	if err != nil {
		return nil, 0, fsError(err, "opening the vector index")
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fsError(err, "reading the vector index")
	}
	if _, ok := readHeader(f); !ok {
		f.Close()
		return nil, 0, memory.Errorf(memory.ErrNotFound, "the vector index has no header")
	}
	return f, fi.Size(), nil
}

// ensureIndex takes the exclusive lock, removes what crashed writers left
// in the temporary directory, and rebuilds the index from the directory
// when it is missing or unrecognisable.
func (v *Vector) ensureIndex(ctx context.Context) error {
	release, err := v.lock(ctx, osfile.Exclusive)
	if err != nil {
		return err
	}
	defer release()
	if err := v.cleanTemp(); err != nil {
		return err
	}
	return v.ensureIndexLocked(ctx)
}

// ensureIndexLocked rebuilds the index when it is missing or
// unrecognisable. The caller holds the exclusive lock.
func (v *Vector) ensureIndexLocked(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Join(v.dir, vectorTempDir), 0o750); err != nil {
		return fsError(err, "creating the vector temporary directory")
	}
	f, err := os.Open(filepath.Join(v.dir, vectorIndexFile))
	if err == nil {
		_, ok := readHeader(f)
		f.Close()
		if ok {
			return nil
		}
	} else if !os.IsNotExist(err) {
		return fsError(err, "opening the vector index")
	}
	return v.rebuildLocked(ctx)
}

// cleanTemp empties the temporary directory. The caller holds the
// exclusive lock, so no writer is using it.
func (v *Vector) cleanTemp() error {
	tmp := filepath.Join(v.dir, vectorTempDir)
	names, err := os.ReadDir(tmp)
	if err != nil && !os.IsNotExist(err) {
		return fsError(err, "reading the vector temporary directory")
	}
	for _, n := range names {
		if err := os.RemoveAll(filepath.Join(tmp, n.Name())); err != nil {
			return fsError(err, "removing a leftover vector temporary file")
		}
	}
	if err := os.MkdirAll(tmp, 0o750); err != nil {
		return fsError(err, "creating the vector temporary directory")
	}
	return nil
}

// Rebuild rewrites the index from the entry files in the directory,
// oldest first. Vector memory rebuilds it by itself when it is missing or
// unrecognisable; call Rebuild after adding or restoring entry files by
// other means (a backup, say). Files that are not entries this package
// wrote are ignored. It costs one read of every entry file.
func (v *Vector) Rebuild(ctx context.Context) error {
	if err := v.check(ctx); err != nil {
		return err
	}
	release, err := v.lock(ctx, osfile.Exclusive)
	if err != nil {
		return err
	}
	defer release()
	if err := v.cleanTemp(); err != nil {
		return err
	}
	return v.rebuildLocked(ctx)
}

func (v *Vector) rebuildLocked(ctx context.Context) error {
	dirents, err := os.ReadDir(v.dir)
	if err != nil {
		return fsError(err, "reading the vector directory")
	}
	var entries []vectorEntry
	for _, d := range dirents {
		if _, ok := parseEntryName(d.Name()); !ok || !d.Type().IsRegular() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := os.ReadFile(filepath.Join(v.dir, d.Name()))
		if err != nil {
			return fsError(err, "reading vector entry "+d.Name())
		}
		if e, _, ok := decodeEntry(d.Name(), data); ok {
			entries = append(entries, e)
		}
	}
	slices.SortFunc(entries, func(a, b vectorEntry) int { return strings.Compare(a.name, b.name) })
	return v.replaceIndex(entries)
}

// replaceIndex writes a fresh index listing entries, in order, and puts it
// in place atomically. The caller holds the exclusive lock.
func (v *Vector) replaceIndex(entries []vectorEntry) error {
	var b bytes.Buffer
	b.WriteString(newHeader())
	for _, e := range entries {
		b.WriteString(addLine(e))
	}
	err := osfile.Replace(filepath.Join(v.dir, vectorIndexFile), filepath.Join(v.dir, vectorTempDir), "", 0o640, func(w io.Writer) error {
		_, err := b.WriteTo(w)
		return err
	})
	return fsError(err, "replacing the vector index")
}

// appendIndex appends lines to the index and fsyncs it. The caller holds
// the exclusive lock. If a writer crashed mid-append the file does not end
// with a line break; one is added first, so the torn line stays a line of
// its own that readers skip.
func (v *Vector) appendIndex(lines string) error {
	f, err := os.OpenFile(filepath.Join(v.dir, vectorIndexFile), os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return fsError(err, "opening the vector index")
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fsError(err, "reading the vector index")
	}
	if fi.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, fi.Size()-1); err != nil {
			return fsError(err, "reading the vector index")
		}
		if last[0] != '\n' {
			lines = "\n" + lines
		}
	}
	if _, err := f.WriteString(lines); err != nil {
		return fsError(err, "appending to the vector index")
	}
	return fsError(f.Sync(), "syncing the vector index")
}

// readBackward calls fn with each complete line of r between start and
// end, last line first, until fn returns false. An unterminated last line
// (an append in progress) is skipped. It reads 64 KiB at a time, so the
// cost is proportional to the lines visited, not to the file.
func readBackward(r io.ReaderAt, start, end int64, fn func(line []byte) bool) error {
	const chunk = 64 << 10
	pos := end
	var carry []byte // the end of a line whose beginning lies before pos
	trimmed := false
	for pos > start {
		n := min(int64(chunk), pos-start)
		pos -= n
		data := make([]byte, int(n)+len(carry))
		if k, err := r.ReadAt(data[:n], pos); int64(k) != n {
			return fsError(shortRead(err), "reading the vector index")
		}
		copy(data[n:], carry)
		if !trimmed {
			i := bytes.LastIndexByte(data, '\n')
			if i < 0 {
				carry = nil
				continue
			}
			data, trimmed = data[:i+1], true
		}
		for len(data) > 0 {
			j := bytes.LastIndexByte(data[:len(data)-1], '\n')
			if j < 0 {
				break
			}
			if !fn(data[j+1 : len(data)-1]) {
				return nil
			}
			data = data[:j+1]
		}
		carry = data
	}
	if len(carry) > 0 {
		fn(carry[:len(carry)-1])
	}
	return nil
}

// shortRead returns the error of a read that returned too few bytes.
func shortRead(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
