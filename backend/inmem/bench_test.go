package inmem_test

import (
	"context"
	"sync"
	"testing"

	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/inmem"
)

// million is the in-memory driver holding the benchmark data set, built
// once per process; closing it through the benchmark is a no-op wrapper.
var million struct {
	once sync.Once
	d    *inmem.Driver
	err  error
}

type keepOpen struct{ backend.Driver }

func (keepOpen) Close() error { return nil }

var benchConfig = backendtest.BenchConfig{
	NewDriver: func(b *testing.B) backend.Driver { return inmem.New(inmem.Options{}) },
	Million: func(b *testing.B) backend.Driver {
		million.once.Do(func() {
			million.d = inmem.New(inmem.Options{})
			million.err = backendtest.Fill(context.Background(), million.d, backendtest.BenchMillion)
		})
		if million.err != nil {
			b.Fatal(million.err)
		}
		return keepOpen{million.d}
	},
}

func BenchmarkAppend(b *testing.B)   { backendtest.BenchmarkAppend(b, benchConfig) }
func BenchmarkIngest(b *testing.B)   { backendtest.BenchmarkIngest(b, benchConfig) }
func BenchmarkNewest50(b *testing.B) { backendtest.BenchmarkNewest50(b, benchConfig) }
