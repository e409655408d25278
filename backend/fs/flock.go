package fs

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// Waiting for another process's write lock polls with a growing pause, so
// that a waiting call still honours its context.
const (
	lockPollMin = 50 * time.Microsecond
	lockPollMax = 2 * time.Millisecond
)

// lockFile takes the exclusive advisory lock (flock) on f, waiting until
// ctx is done. flock locks belong to an open file description, so two
// Drivers in one process exclude each other as two processes do. With a
// context that is never done it blocks in the kernel.
func lockFile(ctx context.Context, f *os.File) error {
	fd := int(f.Fd())
	if ctx.Done() == nil {
		for {
			err := syscall.Flock(fd, syscall.LOCK_EX)
			if !errors.Is(err, syscall.EINTR) {
				return classify(err, "locking "+lockName)
			}
		}
	}
	pause := lockPollMin
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EWOULDBLOCK), errors.Is(err, syscall.EINTR):
		default:
			return classify(err, "locking "+lockName)
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, lockPollMax)
	}
}

// unlockFile releases the lock lockFile took.
func unlockFile(f *os.File) error {
	return classify(syscall.Flock(int(f.Fd()), syscall.LOCK_UN), "unlocking "+lockName)
}
