//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package tiers

import (
	"os"

	"github.com/agentmem/memory"
)

// Lock modes for lockFile.
const (
	lockShared    = 1
	lockExclusive = 2
)

// tryLock reports memory.ErrUnimplemented: vector memory needs flock(2),
// which this platform lacks.
func tryLock(f *os.File, how int) (busy bool, err error) {
	return false, memory.Errorf(memory.ErrUnimplemented, "vector memory needs flock(2), which this platform lacks")
}

// unlock does nothing: tryLock never succeeds here.
func unlock(f *os.File) error { return nil }
