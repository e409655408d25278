package hugepages

import (
	"syscall"
	"unsafe"
)

// advise asks the kernel to back the whole huge pages in the n bytes at p
// by huge pages (madvise MADV_HUGEPAGE). An error is ignored: the kernel
// may have no transparent huge pages.
func advise(p unsafe.Pointer, n uintptr) {
	off, size := inside(uintptr(p), n)
	if size == 0 {
		return
	}
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, off)), size), syscall.MADV_HUGEPAGE)
}
