//go:build !windows

package osfile

import "os"

// SyncDir syncs the directory dir, making the renames and removals in it
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
