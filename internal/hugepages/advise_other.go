//go:build !linux

package hugepages

import "unsafe"

// advise does nothing: only Linux takes the advice.
func advise(p unsafe.Pointer, n uintptr) {}
