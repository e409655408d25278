package driver

import (
	"context"

	"github.com/agentmem/memory"
)

// Swapper is the optional capability of compare-and-swap on versioned
// records: a write that succeeds only if nobody wrote the record since the
// caller read it. Of several writers racing with the same expected
// version, exactly one wins; the others get memory.ErrConflict and nothing
// of theirs is stored.
//
// Every driver keeps memory.Record.Version: Put stores a new id at version
// 1 and a replacement at the stored version plus one, so a plain Put
// between a read and a Swap also makes the Swap fail.
type Swapper interface {
	// Swap stores rec if the record stored under rec.ID has version
	// expect, and returns the version rec was stored at (the stored
	// version plus one). expect 0 means no live record has the id: none
	// is stored, or the stored one has expired; an expired record's
	// version still counts up, so versions of an id never repeat while it
	// is stored.
	//
	// The record is the one rec's tenant holds under rec.ID (ids are
	// unique per tenant; see Driver.Put). Swap fails with
	// memory.ErrConflict when the stored version is not expect, and with
	// HeldByAnother's memory.ErrPermissionDenied when the tenant holds the
	// id with another identity; rec is checked as Put checks records.
	// rec.Version is ignored.
	Swap(ctx context.Context, rec memory.Record, expect int64) (int64, error)
}

// CheckSwap validates the arguments of a Swap: the record as Put checks
// it and a non-negative expected version.
func CheckSwap(rec memory.Record, expect int64) error {
	if expect < 0 {
		return memory.Errorf(memory.ErrInvalidArgument, "negative expected version %d", expect)
	}
	return rec.Validate()
}

// VersionConflict returns the error of a Swap that expected version expect
// of id and found current (0: no live record).
func VersionConflict(id string, expect, current int64) error {
	if current == 0 {
		return memory.Errorf(memory.ErrConflict, "record %q: expected version %d, but no live record has the id", id, expect)
	}
	return memory.Errorf(memory.ErrConflict, "record %q: expected version %d, but version %d is stored", id, expect, current)
}
