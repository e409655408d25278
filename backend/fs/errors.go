package fs

import (
	"errors"
	iofs "io/fs"
	"strconv"
	"syscall"

	"github.com/agentmem/memory"
)

// classify wraps an operating-system error with the memory sentinel it
// belongs to, keeping the native error reachable with errors.As: missing
// files are memory.ErrNotFound, a file where a directory belongs (or the
// reverse) memory.ErrInvalidArgument, permissions
// memory.ErrPermissionDenied, a full disk or an oversized file
// memory.ErrTooLarge, and every other
// failure (I/O errors, a closed descriptor) memory.ErrClosed, since it
// leaves the storage unusable for this call.
func classify(err error, msg string) error {
	if err == nil {
		return nil
	}
	var me *memory.Error
	if errors.As(err, &me) {
		return err
	}
	kind := memory.ErrClosed
	switch {
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR):
		kind = memory.ErrInvalidArgument
	case errors.Is(err, iofs.ErrNotExist):
		kind = memory.ErrNotFound
	case errors.Is(err, iofs.ErrPermission), errors.Is(err, syscall.EROFS):
		kind = memory.ErrPermissionDenied
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EFBIG), errors.Is(err, syscall.EDQUOT):
		kind = memory.ErrTooLarge
	}
	return memory.Wrap(kind, err, msg)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
