//go:build windows

package osfile

import "golang.org/x/sys/windows"

// The Windows errors Classify sorts beyond what io/fs already names.
var (
	wrongType = []error{windows.ERROR_DIRECTORY}
	readOnly  = []error{windows.ERROR_WRITE_PROTECT}
	noSpace   = []error{windows.ERROR_DISK_FULL, windows.ERROR_HANDLE_DISK_FULL}
)
