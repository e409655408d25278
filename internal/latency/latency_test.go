package latency_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/memory/internal/latency"
)

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	before := slices.Clone(ds)
	for p, want := range map[float64]time.Duration{50: 50 * time.Millisecond, 95: 95 * time.Millisecond, 100: 100 * time.Millisecond, 1: time.Millisecond, 0.5: time.Millisecond, 0: time.Millisecond} {
		if got := latency.Percentile(ds, p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if !slices.Equal(ds, before) {
		t.Error("Percentile reordered its input")
	}
	three := []time.Duration{3, 1, 2}
	if latency.Percentile(three, 50) != 2 || latency.Percentile(three, 95) != 3 {
		t.Errorf("p50, p95 of 1, 2, 3: %v, %v", latency.Percentile(three, 50), latency.Percentile(three, 95))
	}
	if latency.Percentile(nil, 50) != 0 {
		t.Error("the percentile of nothing is not 0")
	}
	twenty := make([]time.Duration, 20)
	for i := range twenty {
		twenty[i] = time.Duration(i + 1)
	}
	if got := latency.Percentile(twenty, 95); got != 19 {
		t.Errorf("p95 of 1..20 = %v, want 19 (0.95 * 20 rounds above 19 in floating point)", got)
	}
}

func ExamplePercentile() {
	ds := []time.Duration{4 * time.Millisecond, time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond}
	fmt.Println(latency.Percentile(ds, 50), latency.Percentile(ds, 99))
	// Output: 2ms 4ms
}
