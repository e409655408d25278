//go:build !linux

package cputime

import "time"

// threadClock has no thread CPU clock to read here.
func threadClock() (time.Duration, bool) { return 0, false }
