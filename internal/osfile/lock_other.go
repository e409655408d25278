//go:build !(darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd || windows)

package osfile

import (
	"os"
	"runtime"

	"github.com/agentmem/memory"
)

// errNoLocks is what locking fails with here: the per-open-file locks the
// users of this package rely on are flock(2)'s or LockFileEx's, and this
// platform has neither.
func errNoLocks() error {
	return memory.Errorf(memory.ErrUnimplemented, "osfile: file locks are not implemented on %s", runtime.GOOS)
}

func tryLock(*os.File, Mode) (bool, error) { return false, errNoLocks() }

func lockWait(*os.File, Mode) error { return errNoLocks() }

func unlock(*os.File) error { return errNoLocks() }
