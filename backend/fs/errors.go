package fs

import (
	"strconv"

	"github.com/agentmem/memory/internal/osfile"
)

// classify wraps an operating-system error with the memory sentinel it
// belongs to; see osfile.Classify.
func classify(err error, msg string) error { return osfile.Classify(err, msg) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
