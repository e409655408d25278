//go:build windows

package osfile

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// wholeRange is the length, in both halves of LockFileEx's 64-bit byte
// count, of the range every lock covers: all of the file, and beyond.
const wholeRange = ^uint32(0)

// lockFlags are LockFileEx's flags for mode m.
func lockFlags(m Mode) uint32 {
	if m == Exclusive {
		return windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	return 0
}

// tryLock takes the lock without waiting; false without an error means
// another handle holds a conflicting one.
func tryLock(f *os.File, m Mode) (bool, error) {
	err := lockFileEx(f, lockFlags(m)|windows.LOCKFILE_FAIL_IMMEDIATELY)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION):
		return false, nil
	}
	return false, &os.PathError{Op: "LockFileEx", Path: f.Name(), Err: err}
}

// lockWait takes the lock, waiting in the kernel for as long as it takes.
func lockWait(f *os.File, m Mode) error {
	if err := lockFileEx(f, lockFlags(m)); err != nil {
		return &os.PathError{Op: "LockFileEx", Path: f.Name(), Err: err}
	}
	return nil
}

func lockFileEx(f *os.File, flags uint32) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, wholeRange, wholeRange, new(windows.Overlapped))
}

func unlock(f *os.File) error {
	if err := windows.UnlockFileEx(windows.Handle(f.Fd()), 0, wholeRange, wholeRange, new(windows.Overlapped)); err != nil {
		return &os.PathError{Op: "UnlockFileEx", Path: f.Name(), Err: err}
	}
	return nil
}
