package inmem_test

import (
	"context"
	"sync"
	"testing"

	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
)

// million is the in-memory driver holding the benchmark data set, built
// once per process; closing it through the benchmark is a no-op wrapper.
var million struct {
	once sync.Once
	d    *inmem.Driver
	err  error
}

type keepOpen struct{ driver.Driver }

func (keepOpen) Close() error { return nil }

var benchConfig = backendtest.BenchConfig{
	NewDriver: func(b *testing.B) driver.Driver { return inmem.New(inmem.Options{}) },
	Million: func(b *testing.B) driver.Driver {
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

func BenchmarkAppend(b *testing.B) { backendtest.BenchmarkAppend(b, benchConfig) }

// BenchmarkStoreAppend measures one turn appended through a Store, its
// tokens counted.
func BenchmarkStoreAppend(b *testing.B) { backendtest.BenchmarkStoreAppend(b, benchConfig) }
func BenchmarkIngest(b *testing.B)      { backendtest.BenchmarkIngest(b, benchConfig) }
func BenchmarkNewest50(b *testing.B)    { backendtest.BenchmarkNewest50(b, benchConfig) }

// vectorSets holds the vector data sets, built once per shape per process.
var vectorSets struct {
	mu sync.Mutex
	d  map[[2]int]*inmem.Driver
}

var vectorBench = backendtest.VectorBenchConfig{
	Filled: func(b *testing.B, scopes, perScope int) driver.Driver {
		vectorSets.mu.Lock()
		defer vectorSets.mu.Unlock()
		shape := [2]int{scopes, perScope}
		if d := vectorSets.d[shape]; d != nil {
			return d
		}
		d := inmem.New(inmem.Options{})
		if err := backendtest.FillVectors(context.Background(), d, scopes, perScope); err != nil {
			b.Fatal(err)
		}
		if vectorSets.d == nil {
			vectorSets.d = map[[2]int]*inmem.Driver{}
		}
		vectorSets.d[shape] = d
		return d
	},
}

func BenchmarkSearch100k(b *testing.B) { backendtest.BenchmarkSearch100k(b, vectorBench) }
func BenchmarkSearchOneScopeOf1000(b *testing.B) {
	backendtest.BenchmarkSearchOneScopeOf1000(b, vectorBench)
}

// textSets holds the text data sets, built once per shape per process.
var textSets struct {
	mu sync.Mutex
	d  map[[2]int]*inmem.Driver
}

var textBench = backendtest.TextBenchConfig{
	Filled: func(b *testing.B, scopes, perScope int) driver.Driver {
		textSets.mu.Lock()
		defer textSets.mu.Unlock()
		shape := [2]int{scopes, perScope}
		if d := textSets.d[shape]; d != nil {
			return d
		}
		d := inmem.New(inmem.Options{})
		if err := backendtest.FillTexts(context.Background(), d, scopes, perScope); err != nil {
			b.Fatal(err)
		}
		if textSets.d == nil {
			textSets.d = map[[2]int]*inmem.Driver{}
		}
		textSets.d[shape] = d
		return d
	},
}

func BenchmarkSearchText100k(b *testing.B) { backendtest.BenchmarkSearchText100k(b, textBench) }
func BenchmarkSearchTextOneScopeOf1000(b *testing.B) {
	backendtest.BenchmarkSearchTextOneScopeOf1000(b, textBench)
}
