package vecmath_test

import (
	"fmt"

	"github.com/agentmem/memory/internal/vecmath"
)

func Example() {
	a := []float32{3, 4}
	b := make([]float32, 2)
	if !vecmath.Normalize(b, a) {
		fmt.Println("zero vector")
		return
	}
	fmt.Println(vecmath.Norm(a), b, vecmath.Dot(b, b))

	// Score one query against three rows of two values each.
	rows := []float32{1, 0, 0, 1, 0.6, 0.8}
	scores := make([]float32, 3)
	vecmath.DotBatch(scores, b, rows)
	fmt.Println(scores)

	// Quantised rows (uint8) against a quantised query (int8 in
	// [-64, 64]), summed exactly.
	sums := make([]int32, 2)
	vecmath.DotU8I8Batch(sums, []int8{64, -64, 1}, []uint8{255, 255, 7, 0, 10, 200})
	fmt.Println(sums)
	// Output:
	// 5 [0.6 0.8] 1
	// [0.6 0.8 1]
	// [7 -440]
}
