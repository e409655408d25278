package vecindex

import (
	"fmt"

	"github.com/agentmem/memory/internal/hugepages"
	"github.com/agentmem/memory/internal/vecmath"
)

// Ref identifies a row of a Set; the caller chooses it and maps it back to
// its record. Refs must be unique within a Set, and should be unique
// across the Sets searched together, since Search reports each row it
// keeps separately.
type Ref uint64

// Set holds vectors of one dimension, each tagged with a Ref, for Search.
// Create Sets with NewSet; the zero Set is not usable.
//
// A Set is not safe for concurrent mutation: Add, Grow and Remove must not
// run concurrently with each other or with a Search over the Set. Any
// number of Searches, and calls to Len, Dims and Has, may run
// concurrently. The drivers hold a sync.RWMutex: searches under the read
// lock, mutations under the write lock.
//
// Each vector takes 5*Dims()+16 bytes in the Set's slices (its float32
// values, an int8 copy the search streams through, and their bookkeeping)
// plus an entry in a map from Ref to row.
type Set struct {
	dims int
	// data holds the rows, each dims float32s of unit length, back to
	// back: row i is data[i*dims : (i+1)*dims]. Scores are computed
	// from these.
	data []float32
	// codes holds the rows quantised to 8 bits, a quarter of the bytes
	// of data, which the search streams through to rule rows out before
	// scoring them (see quant.go): row i is approximately scales[i]
	// times codes[i*dims:(i+1)*dims] less 128, and errs[i] is at least
	// the Euclidean length of the difference.
	codes  []uint8
	scales []float32
	errs   []float32
	// refs[i] tags row i.
	refs []Ref
	// rows maps each Ref to its row.
	rows map[Ref]int
}

// MaxDims is the largest number of dimensions a Set can hold.
const MaxDims = 1 << 16

// NewSet returns an empty Set for vectors of dims dimensions. dims must be
// from 1 to MaxDims; NewSet panics otherwise.
func NewSet(dims int) *Set {
	if dims < 1 || dims > MaxDims {
		panic(fmt.Sprintf("vecindex: NewSet with %d dimensions", dims))
	}
	return &Set{dims: dims, rows: make(map[Ref]int)}
}

// Dims returns the number of dimensions of the Set's vectors.
func (s *Set) Dims() int { return s.dims }

// Len returns the number of vectors in the Set.
func (s *Set) Len() int { return len(s.refs) }

// Has reports whether the Set holds a vector tagged ref.
func (s *Set) Has(ref Ref) bool {
	_, ok := s.rows[ref]
	return ok
}

// Grow makes room for n more vectors without further allocation, as when
// loading a known number of rows. It is an optimisation only.
func (s *Set) Grow(n int) {
	if n > 0 && len(s.refs) == 0 && len(s.rows) == 0 {
		s.rows = make(map[Ref]int, n)
	}
	if n > 0 && len(s.refs)+n > cap(s.refs) {
		s.realloc(len(s.refs) + n)
	}
}

// realloc moves the rows into new slices with room for c rows in all.
// Every slice then has room for exactly c rows, which Add relies on.
func (s *Set) realloc(c int) {
	d := s.dims
	s.data = moveTo(s.data, c*d)
	s.codes = moveTo(s.codes, c*d)
	s.scales = moveTo(s.scales, c)
	s.errs = moveTo(s.errs, c)
	s.refs = moveTo(s.refs, c)
}

// moveTo returns a copy of x with capacity c, in huge pages where the
// array is large enough (see internal/hugepages): a set's vectors are
// scanned whole by every search, and written whole by a load.
func moveTo[T any](x []T, c int) []T {
	y := hugepages.Make[T](len(x), c)
	copy(y, x)
	return y
}

// Add stores vec, normalised to unit length, tagged ref, and reports
// whether it did. If the Set already holds ref, its vector is replaced.
// Add returns false, leaving the Set unchanged, when len(vec) is not
// Dims() or vec is the zero vector or holds a NaN or an infinity. The Set
// keeps its own copy; vec is not retained.
func (s *Set) Add(ref Ref, vec []float32) bool {
	d := s.dims
	if len(vec) != d {
		return false
	}
	if i, ok := s.rows[ref]; ok {
		// Normalize leaves the row untouched when it fails.
		row := s.data[i*d : (i+1)*d]
		if !vecmath.Normalize(row, vec) {
			return false
		}
		s.scales[i], s.errs[i] = quantizeRow(s.codes[i*d:(i+1)*d], row)
		return true
	}
	n := len(s.refs)
	if n == cap(s.refs) {
		s.realloc(n + n/2 + 8)
	}
	row := s.data[n*d : (n+1)*d]
	if !vecmath.Normalize(row, vec) {
		return false
	}
	s.data = s.data[:(n+1)*d]
	s.codes = s.codes[:(n+1)*d]
	scale, err := quantizeRow(s.codes[n*d:(n+1)*d], row)
	s.scales = append(s.scales, scale)
	s.errs = append(s.errs, err)
	s.refs = append(s.refs, ref)
	s.rows[ref] = n
	return true
}

// Remove deletes the vector tagged ref and reports whether the Set held
// it. It takes constant time: the last row moves into the hole, so the
// order of rows changes (which Search does not depend on).
func (s *Set) Remove(ref Ref) bool {
	i, ok := s.rows[ref]
	if !ok {
		return false
	}
	delete(s.rows, ref)
	d := s.dims
	last := len(s.refs) - 1
	if i != last {
		copy(s.data[i*d:(i+1)*d], s.data[last*d:(last+1)*d])
		copy(s.codes[i*d:(i+1)*d], s.codes[last*d:(last+1)*d])
		s.scales[i], s.errs[i] = s.scales[last], s.errs[last]
		moved := s.refs[last]
		s.refs[i] = moved
		s.rows[moved] = i
	}
	s.data = s.data[:last*d]
	s.codes = s.codes[:last*d]
	s.scales = s.scales[:last]
	s.errs = s.errs[:last]
	s.refs = s.refs[:last]
	s.shrink()
	return true
}

// minShrinkRows is the capacity, in rows, below which a Set never gives
// memory back.
const minShrinkRows = 64

// shrink reallocates the Set's slices at twice its length once removals
// have left them at most a quarter full, so that a Set that held many
// vectors once does not keep their memory for ever.
func (s *Set) shrink() {
	n := len(s.refs)
	if c := cap(s.refs); c < minShrinkRows || n > c/4 {
		return
	}
	s.realloc(max(2*n, minShrinkRows/2))
}
