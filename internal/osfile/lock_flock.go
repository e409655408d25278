//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package osfile

import (
	"errors"
	"os"
	"syscall"
)

// flockHow is flock(2)'s operation for mode m.
func flockHow(m Mode) int {
	if m == Exclusive {
		return syscall.LOCK_EX
	}
	return syscall.LOCK_SH
}

// tryLock takes the lock without waiting; false without an error means
// another open file holds a conflicting one.
func tryLock(f *os.File, m Mode) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), flockHow(m)|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case !errors.Is(err, syscall.EINTR):
			return false, &os.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
	}
}

// lockWait takes the lock, waiting in the kernel for as long as it takes.
func lockWait(f *os.File, m Mode) error {
	for {
		err := syscall.Flock(int(f.Fd()), flockHow(m))
		if !errors.Is(err, syscall.EINTR) {
			if err != nil {
				return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}

func unlock(f *os.File) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
	}
	return nil
}
