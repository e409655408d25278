package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestThreadCountsWorkNotWaiting checks that Thread measures work (a
// spin of about 20 ms counts) and, on Linux, leaves out sleeping.
func TestThreadCountsWorkNotWaiting(t *testing.T) {
	spin := Thread(func() {
		for t0 := time.Now(); time.Since(t0) < 20*time.Millisecond; {
		}
	})
	if spin < 5*time.Millisecond {
		t.Errorf("a 20 ms spin measured %v", spin)
	}
	if runtime.GOOS != "linux" {
		return
	}
	if slept := Thread(func() { time.Sleep(50 * time.Millisecond) }); slept > 25*time.Millisecond {
		t.Errorf("a 50 ms sleep measured %v of CPU time", slept)
	}
}
