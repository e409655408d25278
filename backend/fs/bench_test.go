package fs_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/fs"
)

// million is the directory holding backendtest's 1,000,000-record data
// set, written once per process, and a driver that reopened it; TestMain
// closes and removes them.
var million struct {
	once           sync.Once
	dir            string
	d              *fs.Driver
	filled, reopen time.Duration
	err            error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if million.d != nil {
		_ = million.d.Close()
	}
	if million.dir != "" {
		_ = os.RemoveAll(million.dir)
	}
	os.Exit(code)
}

// keepOpen lets benchmarks close the shared 1M-record driver harmlessly.
type keepOpen struct{ driver.Driver }

func (keepOpen) Close() error { return nil }

// millionDriver returns a driver on the 1M-record directory: written with
// backendtest.Fill by one driver, then reopened by another, so reads run
// on an index loaded from the log.
func millionDriver(b *testing.B) driver.Driver {
	million.once.Do(func() {
		dir, err := os.MkdirTemp("", "agentmem-fs-bench-")
		if err != nil {
			million.err = err
			return
		}
		million.dir = dir
		start := time.Now()
		w, err := fs.Open(filepath.Join(dir, "million"), fs.Options{})
		if err != nil {
			million.err = err
			return
		}
		if err := backendtest.Fill(context.Background(), w, backendtest.BenchMillion); err != nil {
			million.err = err
			_ = w.Close()
			return
		}
		if million.err = w.Close(); million.err != nil {
			return
		}
		million.filled = time.Since(start)
		start = time.Now()
		million.d, million.err = fs.Open(filepath.Join(dir, "million"), fs.Options{})
		million.reopen = time.Since(start)
	})
	if million.err != nil {
		b.Fatalf("building the 1M-record directory: %v", million.err)
	}
	b.Logf("writing 1M records took %s; reopening them %s", million.filled, million.reopen)
	return keepOpen{million.d}
}

var benchConfig = backendtest.BenchConfig{
	NewDriver: func(b *testing.B) driver.Driver {
		d, err := fs.Open(b.TempDir(), fs.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return d
	},
	Million: millionDriver,
}

func BenchmarkAppend(b *testing.B) { backendtest.BenchmarkAppend(b, benchConfig) }

// BenchmarkStoreAppend measures one turn appended through a Store, its
// tokens counted.
func BenchmarkStoreAppend(b *testing.B) { backendtest.BenchmarkStoreAppend(b, benchConfig) }
func BenchmarkIngest(b *testing.B)      { backendtest.BenchmarkIngest(b, benchConfig) }
func BenchmarkNewest50(b *testing.B)    { backendtest.BenchmarkNewest50(b, benchConfig) }
