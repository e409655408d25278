//go:build !(plan9 || windows)

package osfile

import "syscall"

// The errno values Classify sorts beyond what io/fs already names.
var (
	wrongType = []error{syscall.ENOTDIR, syscall.EISDIR}
	readOnly  = []error{syscall.EROFS}
	noSpace   = []error{syscall.ENOSPC, syscall.EFBIG, syscall.EDQUOT}
)
