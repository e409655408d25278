// Package osfile holds the file operations whose implementation depends
// on the operating system, for the storage that keeps its data in plain
// files (backend/fs and the vector memory type): advisory locks that
// honour a context, writes made durable before they are published, and
// the classification of file-system errors with memory's sentinels.
//
// Locks are flock(2) locks on the Unix systems that have it and
// LockFileEx locks on Windows; both belong to one open file, so two opens
// of a lock file in one process exclude each other as two processes do,
// and the operating system drops them when the holding process dies.
// Elsewhere Lock fails with memory.ErrUnimplemented.
//
// Durability follows the usual recipe: a new file is written under a
// temporary name and synced, then renamed into place, then its directory
// is synced so that the rename survives a crash too. Windows cannot open
// a directory for syncing; there the rename itself is written through
// (MOVEFILE_WRITE_THROUGH) and SyncDir has nothing to do.
package osfile

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agentmem/memory"
)

// Mode is the kind of lock Lock takes.
type Mode int

const (
	// Shared locks coexist with each other and exclude Exclusive ones.
	Shared Mode = iota + 1
	// Exclusive locks exclude every other lock on the file.
	Exclusive
)

// While another open file holds a conflicting lock and the context can
// end, Lock polls, doubling its pause from lockPollMin up to lockPollMax:
// the first retries come quickly, since locks are usually held briefly,
// and a long wait costs little.
const (
	lockPollMin = 50 * time.Microsecond
	lockPollMax = 2 * time.Millisecond
)

// Lock takes an advisory lock of mode m on f, waiting while another open
// file (in this process or another) holds a conflicting one, until ctx is
// done; then it returns ctx.Err(). With a context that is never done it
// waits in the kernel. An open file holds one lock at a time: Unlock it
// before locking it again. On Windows the lock also keeps other handles
// from reading or writing the file, so lock a file kept for locking
// only, as both users do.
func Lock(ctx context.Context, f *os.File, m Mode) error {
	if m != Shared && m != Exclusive {
		return memory.Errorf(memory.ErrInvalidArgument, "osfile: lock mode %d is neither Shared nor Exclusive", m)
	}
	ok, err := tryLock(f, m)
	if ok || err != nil {
		return err
	}
	if ctx.Done() == nil {
		return lockWait(f, m)
	}
	pause := lockPollMin
	for {
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if ok, err := tryLock(f, m); ok || err != nil {
			return err
		}
		pause = min(2*pause, lockPollMax)
	}
}

// Unlock releases the lock Lock took on f. Closing f releases it too.
func Unlock(f *os.File) error { return unlock(f) }

// WriteTemp creates a new file in dir whose name is prefix followed by
// random characters, with permissions perm (before the umask), fills it
// through write (buffered), syncs and closes it, and returns its path. On
// failure it removes the file and returns write's error or the file
// system's.
func WriteTemp(dir, prefix string, perm os.FileMode, write func(w io.Writer) error) (string, error) {
	var f *os.File
	for {
		var err error
		f, err = os.OpenFile(filepath.Join(dir, prefix+rand.Text()), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			break
		}
		if !errors.Is(err, iofs.ErrExist) {
			return "", err
		}
	}
	err := fill(f, write)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// fill writes f's contents through write and syncs them.
func fill(f *os.File, write func(w io.Writer) error) error {
	w := bufio.NewWriterSize(f, 1<<20)
	if err := write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Sync()
}

// Replace puts a new file at path atomically: WriteTemp writes it in
// tmpDir (which must be on path's file system) and Rename moves it over
// path, so that after a crash path holds its old contents or its new
// ones, never part of either. On failure the temporary file is removed.
func Replace(path, tmpDir, prefix string, perm os.FileMode, write func(w io.Writer) error) error {
	tmp, err := WriteTemp(tmpDir, prefix, perm, write)
	if err != nil {
		return err
	}
	if err := Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// Rename renames oldpath to newpath, replacing any file there, and makes
// the rename durable before it returns: it syncs newpath's directory, or
// on Windows writes the move through.
func Rename(oldpath, newpath string) error {
	if err := rename(oldpath, newpath); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(newpath))
}

// Classify wraps a file-system error with the memory sentinel it belongs
// to, keeping the native error reachable with errors.As: a missing file is
// memory.ErrNotFound; a file where a directory belongs, or the reverse,
// memory.ErrInvalidArgument; a refusal or a read-only file system
// memory.ErrPermissionDenied; a full disk, quota or file size limit
// memory.ErrTooLarge; every other failure (an I/O error, a closed file)
// memory.ErrClosed, since it leaves the storage unusable for the call.
// Errors already classified and context errors are returned unchanged.
func Classify(err error, msg string) error {
	var me *memory.Error
	if err == nil || errors.As(err, &me) {
		return err
	}
	kind := memory.ErrClosed
	switch {
	case matches(err, wrongType):
		kind = memory.ErrInvalidArgument
	case errors.Is(err, iofs.ErrNotExist):
		kind = memory.ErrNotFound
	case errors.Is(err, iofs.ErrPermission), matches(err, readOnly):
		kind = memory.ErrPermissionDenied
	case matches(err, noSpace):
		kind = memory.ErrTooLarge
	}
	return memory.Wrap(kind, err, msg)
}

// matches reports whether err is one of targets.
func matches(err error, targets []error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
