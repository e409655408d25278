// Package cputime times a function by the CPU time of the thread that
// runs it, for the growth tests that check an algorithm stays linear on
// hostile input: unlike the wall clock, a thread's CPU time leaves out the
// time it waited for a core, which on a shared machine is most of the
// noise.
package cputime

import (
	"runtime"
	"time"
)

// Thread runs f on one locked OS thread and returns the CPU time that
// thread spent; where the thread's CPU time is not to be had, the time by
// the wall clock.
func Thread(f func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, ok := threadClock()
	if !ok {
		return wall(f)
	}
	f()
	after, ok := threadClock()
	if !ok {
		return wall(f)
	}
	return after - before
}

// wall times f by the wall clock.
func wall(f func()) time.Duration {
	t0 := time.Now()
	f()
	return time.Since(t0)
}
