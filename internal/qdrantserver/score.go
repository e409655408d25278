package qdrantserver

import (
	"math"
	"sort"

	"github.com/qdrant/go-client/qdrant"
)

// normalize scales v to unit length, as Qdrant stores Cosine vectors and
// Cosine queries; a zero vector is left as it is.
func normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if sum < 1e-30 {
		copy(out, v)
		return out
	}
	n := math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

// distanceOf scores a stored vector against a query the way Qdrant reports
// it: the dot product for Cosine (both sides normalised) and Dot, the
// Euclidean distance for Euclid and the sum of absolute differences for
// Manhattan.
func distanceOf(d qdrant.Distance, stored, query []float32) float32 {
	var s float64
	switch d {
	case qdrant.Distance_Euclid:
		for i := range stored {
			x := float64(stored[i]) - float64(query[i])
			s += x * x
		}
		return float32(math.Sqrt(s))
	case qdrant.Distance_Manhattan:
		for i := range stored {
			s += math.Abs(float64(stored[i]) - float64(query[i]))
		}
		return float32(s)
	}
	for i := range stored {
		s += float64(stored[i]) * float64(query[i])
	}
	return float32(s)
}

// smallerBetter reports whether lower scores rank first: distances.
func smallerBetter(d qdrant.Distance) bool {
	return d == qdrant.Distance_Euclid || d == qdrant.Distance_Manhattan
}

// sparseDot is the dot product over shared indices, and whether any index
// is shared: Qdrant's SparseVector::score, which returns "None if the
// vectors do not overlap", so such points are not found.
func sparseDot(a, b sparseVec) (float32, bool) {
	var s float32
	overlap := false
	i, j := 0, 0
	for i < len(a.indices) && j < len(b.indices) {
		switch {
		case a.indices[i] < b.indices[j]:
			i++
		case a.indices[i] > b.indices[j]:
			j++
		default:
			overlap = true
			s += a.values[i] * b.values[j]
			i++
			j++
		}
	}
	return s, overlap
}

// newSparse checks and sorts a sparse vector: as many values as indices,
// and no index twice.
func newSparse(indices []uint32, values []float32) (sparseVec, error) {
	if len(indices) != len(values) {
		return sparseVec{}, badInput("Sparse vector indices and values must have the same length: %d != %d", len(indices), len(values))
	}
	sv := sparseVec{indices: append([]uint32(nil), indices...), values: append([]float32(nil), values...)}
	sort.Sort(bySparseIndex(sv))
	for i := 1; i < len(sv.indices); i++ {
		if sv.indices[i] == sv.indices[i-1] {
			return sparseVec{}, badInput("Sparse vector indices must be unique")
		}
	}
	return sv, nil
}

type bySparseIndex sparseVec

func (s bySparseIndex) Len() int           { return len(s.indices) }
func (s bySparseIndex) Less(i, j int) bool { return s.indices[i] < s.indices[j] }
func (s bySparseIndex) Swap(i, j int) {
	s.indices[i], s.indices[j] = s.indices[j], s.indices[i]
	s.values[i], s.values[j] = s.values[j], s.values[i]
}

// hit is one scored point of a search or query.
type hit struct {
	p     *point
	score float32
}

// sortHits orders hits best first; equal scores by point id, so results
// are deterministic (Qdrant leaves the order of ties unspecified).
func sortHits(hs []hit, smaller bool) {
	sort.SliceStable(hs, func(i, j int) bool {
		a, b := hs[i].score, hs[j].score
		if a != b {
			if smaller {
				return a < b
			}
			return a > b
		}
		return hs[i].p.id.less(hs[j].p.id)
	})
}
