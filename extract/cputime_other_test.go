//go:build !linux

package extract_test

import "time"

// threadTime times f by the wall clock where the thread's CPU time is not
// to be had.
func threadTime(f func()) time.Duration { return wallTime(f) }
