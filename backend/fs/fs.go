package fs

import (
	"context"
	"errors"
	"io"
	iofs "io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/osfile"
)

// Default option values.
const (
	// DefaultCompactBytes is the log size below which the driver never
	// compacts.
	DefaultCompactBytes = 4 << 20
)

// compactChunk is the payload size compaction aims for per frame.
const compactChunk = 4 << 20

// Options configure a Driver. The zero value is the documented default.
type Options struct {
	// Clock decides expiry: List never returns a record whose Expires is
	// at or before Clock's reading, and Sweep deletes those records. Nil
	// means time.Now.
	Clock memory.Clock
	// Logger receives debug records of opening, reloading and compacting
	// the log, and warnings about torn tails cut off and failed
	// compactions. Nil discards them.
	Logger *slog.Logger
	// CompactBytes is the log size from which the driver compacts the
	// log once the records it still holds take less than half of it;
	// zero means DefaultCompactBytes.
	CompactBytes int64
}

// Driver is a driver.Driver, driver.Sweeper and driver.Swapper over one
// directory, shared safely by every Driver and process that opens it. It
// is safe for concurrent use.
type Driver struct {
	dir     string
	path    string
	clock   memory.Clock
	log     *slog.Logger
	compact int64

	// writing admits one writer of this Driver at a time; a writer waiting
	// its turn still honours its context.
	writing chan struct{}

	// mu guards everything below. Readers hold it shared while the log
	// is unchanged; catching up, and writing, hold it exclusively.
	mu     sync.RWMutex
	closed bool
	lock   *os.File    // the lock file, locked by writers
	file   *os.File    // the log, open for reading and appending
	info   os.FileInfo // file's identity, to notice a compaction elsewhere
	gen    uint64      // file's generation
	end    int64       // the offset after the last frame applied to idx
	idx    *index
}

var (
	_ driver.Driver  = (*Driver)(nil)
	_ driver.Sweeper = (*Driver)(nil)
	_ driver.Swapper = (*Driver)(nil)
)

// Open opens the store in dir, creating the directory and an empty log
// when they do not exist, and loads the log, cutting off a torn tail that
// a crash left. Several Drivers, in one process or many, may open one
// directory at once.
func Open(dir string, opt Options) (*Driver, error) {
	if dir == "" {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "fs: empty directory name")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, classify(err, "creating "+dir)
	}
	d := &Driver{dir: dir, path: filepath.Join(dir, logName), clock: opt.Clock, log: opt.Logger,
		compact: opt.CompactBytes, writing: make(chan struct{}, 1)}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.compact <= 0 {
		d.compact = DefaultCompactBytes
	}
	lock, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, classify(err, "opening "+lockName)
	}
	d.lock = lock
	if err := d.openLocked(); err != nil {
		_ = lock.Close()
		if d.file != nil {
			_ = d.file.Close()
		}
		return nil, err
	}
	d.log.Debug("fs: opened", "dir", dir, "generation", d.gen, "bytes", d.end, "records", d.idx.recs.Len())
	return d, nil
}

// openLocked does Open's work under the write lock: removes leftovers of
// crashed compactions, creates the log if there is none, loads it and
// cuts off a torn tail.
func (d *Driver) openLocked() error {
	if err := osfile.Lock(context.Background(), d.lock, osfile.Exclusive); err != nil {
		return classify(err, "locking "+lockName)
	}
	defer func() { _ = osfile.Unlock(d.lock) }()
	if err := removeTemps(d.dir); err != nil {
		return err
	}
	if _, err := os.Stat(d.path); errors.Is(err, iofs.ErrNotExist) {
		if err := writeLog(d.dir, logHeader{generation: 1}, nil); err != nil {
			return err
		}
	} else if err != nil {
		return classify(err, "reading "+logName)
	}
	if err := d.catchUp(true); err != nil {
		return err
	}
	return d.upgrade()
}

// upgrade rewrites a format-1 log in the current format, whose tombstones
// name tenants, before anything is appended to it. The caller holds the
// write lock and d.mu (or owns d, in Open).
func (d *Driver) upgrade() error {
	if d.idx.format == logFormat {
		return nil
	}
	if err := d.compactLog(); err != nil {
		return err
	}
	d.idx.format, d.idx.tenantOf = logFormat, nil
	d.log.Info("fs: rewrote the log in format 2 (ids unique per tenant)", "dir", d.dir, "generation", d.gen)
	return nil
}

// Close releases the driver's files. It is idempotent.
func (d *Driver) Close() error {
	d.writing <- struct{}{}
	defer func() { <-d.writing }()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	d.idx = nil
	err := d.file.Close()
	if lerr := d.lock.Close(); err == nil {
		err = lerr
	}
	return classify(err, "closing the store")
}

// errClosed is the error of a call on a closed driver.
func errClosed() error { return memory.Errorf(memory.ErrClosed, "fs driver is closed") }

// read runs fn with the index caught up with the log, holding d.mu shared
// when nothing changed and exclusively when it had to catch up.
func (d *Driver) read(ctx context.Context, fn func(x *index) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.RLock()
	if d.closed {
		d.mu.RUnlock()
		return errClosed()
	}
	fi, err := os.Stat(d.path)
	if err == nil && os.SameFile(fi, d.info) && fi.Size() == d.end {
		defer d.mu.RUnlock()
		return fn(d.idx)
	}
	d.mu.RUnlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errClosed()
	}
	if err := d.catchUp(false); err != nil {
		return err
	}
	return fn(d.idx)
}

// write runs fn holding this driver's writer slot, the directory's write
// lock and d.mu, with the index caught up with the log and its torn tail
// cut off, and then compacts the log if it is due.
func (d *Driver) write(ctx context.Context, fn func(x *index) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case d.writing <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-d.writing }()
	d.mu.RLock()
	closed := d.closed
	d.mu.RUnlock()
	if closed {
		return errClosed()
	}
	if err := osfile.Lock(ctx, d.lock, osfile.Exclusive); err != nil {
		return classify(err, "locking "+lockName)
	}
	defer func() { _ = osfile.Unlock(d.lock) }()
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.catchUp(true); err != nil {
		return err
	}
	if err := d.upgrade(); err != nil {
		return err
	}
	if err := fn(d.idx); err != nil {
		return err
	}
	d.maybeCompact()
	return nil
}

// catchUp brings the index up to date with the log: it reloads from
// scratch when the log file is no longer the one d has open (another
// driver compacted it), and otherwise applies the frames appended since.
// With repair (the caller holds the write lock, so no write is in
// progress) it cuts off a torn tail and reports a corrupt one. The caller
// holds d.mu exclusively.
func (d *Driver) catchUp(repair bool) error {
	fi, err := os.Stat(d.path)
	if err != nil {
		return classify(err, "reading "+logName)
	}
	// A log smaller than what was applied lost frames this driver read
	// before they were synced (an append that failed in another
	// process): start again from scratch.
	if d.file == nil || !os.SameFile(fi, d.info) || fi.Size() < d.end {
		if err := d.reload(); err != nil {
			return err
		}
		if fi, err = d.file.Stat(); err != nil {
			return classify(err, "reading "+logName)
		}
	}
	end, t, err := readFrames(d.file, d.end, fi.Size(), d.idx)
	d.end = end
	if err != nil || !repair {
		return err
	}
	switch t {
	case tailTorn:
		d.log.Warn("fs: cutting off a torn write at the end of the log", "dir", d.dir, "offset", end, "bytes", fi.Size()-end)
		if err := d.file.Truncate(end); err != nil {
			return classify(err, "cutting off a torn write")
		}
		if err := d.file.Sync(); err != nil {
			return classify(err, "syncing "+logName)
		}
	case tailCorrupt:
		return memory.Errorf(memory.ErrInvalidArgument, "%s is damaged at offset %d: a frame fails its checksum and more data follows", d.path, end)
	}
	return nil
}

// reload opens the log file afresh and starts a new, empty index for it.
func (d *Driver) reload() error {
	f, info, h, err := openLog(d.path)
	if err != nil {
		return err
	}
	if d.file != nil {
		_ = d.file.Close()
		d.log.Debug("fs: reloading a log compacted elsewhere", "dir", d.dir, "generation", h.generation)
	}
	d.file, d.info, d.gen, d.end, d.idx = f, info, h.generation, logHeaderBytes, newIndex(h)
	return nil
}

// openLog opens the log file at path and reads its header.
func openLog(path string) (*os.File, os.FileInfo, logHeader, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, logHeader{}, classify(err, "opening "+logName)
	}
	hdr := make([]byte, logHeaderBytes)
	if _, err := io.ReadFull(f, hdr); err != nil {
		_ = f.Close()
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, nil, logHeader{}, memory.Errorf(memory.ErrInvalidArgument, "%s is too short to be a memory log", path)
		}
		return nil, nil, logHeader{}, classify(err, "reading "+logName)
	}
	h, err := decodeHeader(hdr)
	if err != nil {
		_ = f.Close()
		return nil, nil, logHeader{}, err
	}
	info, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil, logHeader{}, classify(err, "reading "+logName)
	}
	return f, info, h, nil
}

// appendFrame appends a frame to the log and syncs it. On failure it cuts
// the log back to where it was, so no partial frame stays behind. The
// caller holds the write lock and d.mu.
func (d *Driver) appendFrame(frame []byte) error {
	if _, err := d.file.WriteAt(frame, d.end); err != nil {
		d.undoAppend()
		return classify(err, "appending to "+logName)
	}
	if err := d.file.Sync(); err != nil {
		d.undoAppend()
		return classify(err, "syncing "+logName)
	}
	d.end += int64(len(frame))
	return nil
}

// undoAppend cuts off what a failed append may have left; if that fails
// too, the next writer finds a torn tail and cuts it off.
func (d *Driver) undoAppend() {
	if err := d.file.Truncate(d.end); err != nil {
		d.log.Warn("fs: could not cut off a failed append", "dir", d.dir, "error", err)
	}
}

// maybeCompact rewrites the log when it has reached the compaction size
// and the live records take less than half of it. A failed compaction is
// logged and leaves the log as it was. The caller holds the write lock and
// d.mu.
func (d *Driver) maybeCompact() {
	if d.end < d.compact || 2*d.idx.live >= d.end {
		return
	}
	if err := d.compactLog(); err != nil {
		d.log.Warn("fs: compaction failed; the log is unchanged", "dir", d.dir, "error", err)
	}
}

// compactLog writes the live records to a new log of the next generation
// and renames it over the old one. Other drivers notice the new file and
// reload it. The caller holds the write lock and d.mu.
func (d *Driver) compactLog() error {
	before := d.end
	// Oldest first, so that loading the new log appends to every posting
	// list.
	entries := slices.Collect(d.idx.recs.All())
	slices.SortFunc(entries, func(a, b *entry) int { return b.Compare(a) })
	h := logHeader{generation: d.gen + 1, dims: d.idx.dims}
	err := writeLog(d.dir, h, func(w io.Writer) error {
		for len(entries) > 0 {
			n, bytes := 0, int64(0)
			for n < len(entries) && (n == 0 || bytes+entries[n].Extra.size <= compactChunk) {
				bytes += entries[n].Extra.size
				n++
			}
			enc := newEncoder(opPut, n)
			for _, e := range entries[:n] {
				enc.record(e.Record(), e.Version)
			}
			if _, err := w.Write(enc.frame()); err != nil {
				return classify(err, "writing a compacted "+logName)
			}
			entries = entries[n:]
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The new file holds exactly what the index holds, encoded alike:
	// keep the index and switch to the file.
	f, info, nh, err := openLog(d.path)
	if err != nil {
		return err
	}
	_ = d.file.Close()
	d.file, d.info, d.gen, d.end = f, info, nh.generation, info.Size()
	d.log.Debug("fs: compacted the log", "dir", d.dir, "generation", d.gen, "bytes before", before, "bytes after", d.end)
	return nil
}
