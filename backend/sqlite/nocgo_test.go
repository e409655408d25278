//go:build !cgo

package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/sqlite"
)

// TestWithoutCgo checks that a build without cgo says so: Open and New
// fail with memory.ErrUnimplemented, and so does every call on a Driver.
func TestWithoutCgo(t *testing.T) {
	if _, err := sqlite.Open(filepath.Join(t.TempDir(), "memory.db"), sqlite.Options{}); !errors.Is(err, memory.ErrUnimplemented) {
		t.Errorf("Open = %v, want memory.ErrUnimplemented", err)
	}
	if _, err := sqlite.New(nil, sqlite.Options{}); !errors.Is(err, memory.ErrUnimplemented) {
		t.Errorf("New = %v, want memory.ErrUnimplemented", err)
	}
	ctx := context.Background()
	var d sqlite.Driver
	if err := d.Put(ctx, nil); !errors.Is(err, memory.ErrUnimplemented) {
		t.Errorf("Put = %v, want memory.ErrUnimplemented", err)
	}
	if _, err := d.List(ctx, driver.Query{}); !errors.Is(err, memory.ErrUnimplemented) {
		t.Errorf("List = %v, want memory.ErrUnimplemented", err)
	}
	if _, err := d.SearchText(ctx, driver.Query{}, "x", 1); !errors.Is(err, memory.ErrUnimplemented) {
		t.Errorf("SearchText = %v, want memory.ErrUnimplemented", err)
	}
	if _, err := d.RankVector(ctx, driver.Query{}, []float32{1}, 1); !errors.Is(err, memory.ErrUnimplemented) {
		t.Errorf("RankVector = %v, want memory.ErrUnimplemented", err)
	}
	if _, err := d.RankText(ctx, driver.Query{}, "x", 1); !errors.Is(err, memory.ErrUnimplemented) {
		t.Errorf("RankText = %v, want memory.ErrUnimplemented", err)
	}
	if _, err := d.WriterRefs(ctx, driver.Query{}, nil); !errors.Is(err, memory.ErrUnimplemented) {
		t.Errorf("WriterRefs = %v, want memory.ErrUnimplemented", err)
	}
	if _, err := d.EraseWork(ctx, "q", memory.Filter{}); !errors.Is(err, memory.ErrUnimplemented) {
		t.Errorf("EraseWork = %v, want memory.ErrUnimplemented", err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("Close = %v, want nil", err)
	}
}
