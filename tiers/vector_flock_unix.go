//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package tiers

import (
	"errors"
	"os"
	"syscall"
)

// Lock modes for lockFile.
const (
	lockShared    = syscall.LOCK_SH
	lockExclusive = syscall.LOCK_EX
)

// tryLock takes an flock on f without blocking; busy reports that another
// open file holds a conflicting lock.
func tryLock(f *os.File, how int) (busy bool, err error) {
	for {
		err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return true, nil
		}
		return false, err
	}
}

// unlock releases f's flock.
func unlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
