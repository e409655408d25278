// Package hugepages allocates the few large arrays a process fills at once
// on loading a cache, asking the system to back them with huge pages.
//
// Filling memory a process has never touched costs a page fault per page
// (4 KiB), and on a virtual machine whose host backs guest memory lazily
// a fault can cost tens of microseconds: a new process decoding the text
// cache of 100,000 facts spends more time faulting than decoding. Where
// transparent huge pages are enabled "madvise" (the default of many Linux
// distributions), the Go heap gets none; asking for them on an array
// turns 512 faults into one. See BENCHMARKS.md for what it saves.
//
// The advice is only advice: it changes no content and is ignored where
// the system has no huge pages. Go's own switch for its heap,
// GODEBUG=disablethp=1, turns it off here too.
package hugepages

import (
	"os"
	"strings"
	"unsafe"
)

// Size is the huge page size asked for: 2 MiB, that of x86-64 and of
// arm64 with 4 KiB pages.
const Size = 2 << 20

// MinBytes is the smallest array Make advises: a smaller one holds at most
// one whole aligned huge page, often none.
const MinBytes = 2 * Size

// disabled reports whether GODEBUG holds disablethp=1 (the last setting
// of it wins, as in the runtime).
var disabled = func() bool {
	off := false
	for _, kv := range strings.Split(os.Getenv("GODEBUG"), ",") {
		if v, ok := strings.CutPrefix(kv, "disablethp="); ok {
			off = v == "1"
		}
	}
	return off
}()

// Make returns make([]T, n, capacity), advised to be backed by huge pages
// when its array takes MinBytes or more. Only the huge pages wholly
// inside the array are advised, so no other allocation is affected. It
// must be called before the array is first written: memory already
// touched keeps its pages.
func Make[T any](n, capacity int) []T {
	s := make([]T, n, capacity)
	var zero T
	if size := uintptr(capacity) * unsafe.Sizeof(zero); size >= MinBytes && !disabled {
		advise(unsafe.Pointer(unsafe.SliceData(s)), size)
	}
	return s
}

// inside returns where the whole huge pages in the n bytes at address p
// start, as an offset from p, and how many bytes they take (0: none).
func inside(p, n uintptr) (off, size uintptr) {
	beg := (p + Size - 1) &^ (Size - 1)
	end := (p + n) &^ (Size - 1)
	if beg >= end {
		return 0, 0
	}
	return beg - p, end - beg
}
