// Package latency summarises measured durations: the percentiles the
// evaluation, the benchmarks and the service's load test report.
package latency

import (
	"slices"
	"time"
)

// Percentile returns the p-th percentile (0 <= p <= 100) of ds by the
// nearest-rank method: the smallest value at least p percent of the
// values are at or below; p 0 is the smallest value. ds is left as it is.
// It returns 0 for no values.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	// The small addend is a ceiling that float rounding of p/100 cannot
	// push up a rank (0.95 * 20 is 19.000000000000004).
	rank := int(float64(len(s))*p/100 + 0.999999999)
	return s[min(max(rank, 1), len(s))-1]
}
