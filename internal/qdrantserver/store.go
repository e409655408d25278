package qdrantserver

import (
	"sync"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// store holds the collections; one lock guards them all.
type store struct {
	mu          sync.RWMutex
	collections map[string]*collection
}

// denseParams is one dense vector's configuration.
type denseParams struct {
	size     int
	distance qdrant.Distance
}

// sparseVec is a sparse vector, sorted by index.
type sparseVec struct {
	indices []uint32
	values  []float32
}

// point is one stored point.
type point struct {
	id      pointID
	payload map[string]any
	dense   map[string][]float32
	sparse  map[string]sparseVec
}

// collection is one collection: its configuration, points and payload indexes.
type collection struct {
	// unnamed is set when the collection has a single unnamed dense vector,
	// stored under the name "".
	unnamed bool
	dense   map[string]denseParams
	sparse  map[string]bool
	points  map[pointID]*point
	indexes map[string]*qdrant.PayloadSchemaInfo
	// ordered are the order indexes ordered scrolls built, by key; every
	// change of a point goes through untrack and track. Scrolls run under
	// the store's read lock, so orderMu guards the map while one builds an
	// index; the indexes' entries change only under the write lock.
	orderMu sync.Mutex
	ordered map[string]*orderIndex
	// config is the creation request, reported back by Get.
	vectorsConfig *qdrant.VectorsConfig
	sparseConfig  *qdrant.SparseVectorConfig
	opID          uint64
}

// notFound is Qdrant's error for a missing collection.
func notFound(name string) error {
	return status.Errorf(codes.NotFound, "Not found: Collection `%s` doesn't exist!", name)
}

// badInput is Qdrant's error for a request it rejects.
func badInput(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, "Wrong input: "+format, args...)
}

// read runs f on the named collection under the read lock.
func (s *store) read(name string, f func(*collection) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.on(name, f)
}

// write runs f on the named collection under the write lock.
func (s *store) write(name string, f func(*collection) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.on(name, f)
}

// on runs f on the named collection, NotFound when there is none; the
// caller holds s.mu.
func (s *store) on(name string, f func(*collection) error) error {
	c, ok := s.collections[name]
	if !ok {
		return notFound(name)
	}
	return f(c)
}

// updated is the result of a points update: Completed when the caller
// waited, Acknowledged otherwise, as Qdrant reports it.
func (c *collection) updated(wait *bool) *qdrant.PointsOperationResponse {
	c.opID++
	st := qdrant.UpdateStatus_Acknowledged
	if wait != nil && *wait {
		st = qdrant.UpdateStatus_Completed
	}
	id := c.opID
	return &qdrant.PointsOperationResponse{Result: &qdrant.UpdateResult{OperationId: &id, Status: st}}
}
