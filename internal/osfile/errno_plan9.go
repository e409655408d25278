//go:build plan9

package osfile

import "syscall"

// The errors Classify sorts beyond what io/fs already names: Plan 9 names
// no errors for a read-only file system or a full disk.
var (
	wrongType = []error{syscall.ENOTDIR, syscall.EISDIR}
	readOnly  []error
	noSpace   []error
)
