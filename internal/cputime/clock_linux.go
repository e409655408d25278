//go:build linux

package cputime

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadClock reads the calling thread's CPU clock
// (CLOCK_THREAD_CPUTIME_ID, to the nanosecond).
func threadClock() (time.Duration, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
