package memory_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/agentmem/memory"
)

func TestCheckEmbeddings(t *testing.T) {
	ok := [][]float32{{1, 0}, {0, 1}}
	if err := memory.CheckEmbeddings(2, ok); err != nil {
		t.Errorf("valid output: %v", err)
	}
	if err := memory.CheckEmbeddings(0, nil); err != nil {
		t.Errorf("no texts, no vectors: %v", err)
	}
	big := make([]float32, memory.MaxVectorDims+1)
	big[0] = 1
	for _, c := range []struct {
		name string
		n    int
		vecs [][]float32
		kind error
	}{
		{"count", 3, ok, memory.ErrInvalidArgument},
		{"dims", 2, [][]float32{{1, 0}, {1}}, memory.ErrInvalidArgument},
		{"NaN", 1, [][]float32{{float32(math.NaN())}}, memory.ErrInvalidArgument},
		{"zero", 1, [][]float32{{0}}, memory.ErrInvalidArgument},
		{"nil vector", 1, [][]float32{nil}, memory.ErrInvalidArgument},
		{"too large", 1, [][]float32{big}, memory.ErrTooLarge},
	} {
		if err := memory.CheckEmbeddings(c.n, c.vecs); !errors.Is(err, c.kind) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.kind)
		}
	}
}

func ExampleCheckEmbeddings() {
	err := memory.CheckEmbeddings(2, [][]float32{{0.6, 0.8}})
	fmt.Println(errors.Is(err, memory.ErrInvalidArgument), err)
	// Output: true memory: invalid argument: the embedder returned 1 vectors for 2 texts
}
