//go:build windows

package osfile

import (
	"os"

	"golang.org/x/sys/windows"
)

// SyncDir makes the renames and removals in dir durable. Windows cannot
// open a directory for syncing (FlushFileBuffers needs a handle opened for
// writing, which a directory does not give), and NTFS journals directory
// changes itself, so it does nothing here; Rename writes its move through
// instead.
func SyncDir(dir string) error { return nil }

// rename moves oldpath over newpath and returns only once the move is on
// disk (MOVEFILE_WRITE_THROUGH).
func rename(oldpath, newpath string) error {
	from, err := windows.UTF16PtrFromString(oldpath)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	to, err := windows.UTF16PtrFromString(newpath)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	if err := windows.MoveFileEx(from, to, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}
