//go:build linux

package tokens

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// threadTime runs f on one locked OS thread and returns the CPU time that
// thread spent (CLOCK_THREAD_CPUTIME_ID, to the nanosecond): unlike the
// wall clock it leaves out the time the thread waited for a core, which
// on a shared machine is most of the noise.
func threadTime(f func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, ok := threadClock()
	if !ok {
		return wallTime(f)
	}
	f()
	after, ok := threadClock()
	if !ok {
		return wallTime(f)
	}
	return after - before
}

func threadClock() (time.Duration, bool) {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
