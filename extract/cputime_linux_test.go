//go:build linux

package extract_test

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// threadTime runs f on one locked OS thread and returns the CPU time that
// thread spent (CLOCK_THREAD_CPUTIME_ID): unlike the wall clock it leaves
// out the time the thread waited for a core, which on a shared machine is
// most of the noise.
func threadTime(f func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before, after unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &before) != nil {
		return wallTime(f)
	}
	f()
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &after) != nil {
		return wallTime(f)
	}
	return time.Duration(after.Nano() - before.Nano())
}
