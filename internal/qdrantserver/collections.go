package qdrantserver

import (
	"context"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// collectionsService is the Collections gRPC service.
type collectionsService struct {
	qdrant.UnimplementedCollectionsServer
	db *store
}

// Create makes a collection; a name already taken is AlreadyExists
// ("Collection `x` already exists!"), as Qdrant answers.
func (s *collectionsService) Create(_ context.Context, req *qdrant.CreateCollection) (*qdrant.CollectionOperationResponse, error) {
	name := req.GetCollectionName()
	if name == "" || len(name) > 255 {
		return nil, badInput("Collection name must be between 1 and 255 characters")
	}
	c := &collection{
		dense:         map[string]denseParams{},
		sparse:        map[string]bool{},
		points:        map[pointID]*point{},
		indexes:       map[string]*qdrant.PayloadSchemaInfo{},
		vectorsConfig: proto.Clone(req.GetVectorsConfig()).(*qdrant.VectorsConfig),
		sparseConfig:  proto.Clone(req.GetSparseVectorsConfig()).(*qdrant.SparseVectorConfig),
	}
	add := func(vname string, p *qdrant.VectorParams) error {
		if p.GetSize() == 0 {
			return badInput("Vector size must be greater than 0")
		}
		switch p.GetDistance() {
		case qdrant.Distance_Cosine, qdrant.Distance_Dot, qdrant.Distance_Euclid, qdrant.Distance_Manhattan:
		default:
			return badInput("Unknown distance %v", p.GetDistance())
		}
		c.dense[vname] = denseParams{size: int(p.GetSize()), distance: p.GetDistance()}
		return nil
	}
	switch cfg := req.GetVectorsConfig().GetConfig().(type) {
	case *qdrant.VectorsConfig_Params:
		c.unnamed = true
		if err := add("", cfg.Params); err != nil {
			return nil, err
		}
	case *qdrant.VectorsConfig_ParamsMap:
		for vname, p := range cfg.ParamsMap.GetMap() {
			if err := add(vname, p); err != nil {
				return nil, err
			}
		}
	}
	for vname := range req.GetSparseVectorsConfig().GetMap() {
		if _, dup := c.dense[vname]; dup {
			return nil, badInput("Vector name %s is used by both a dense and a sparse vector", vname)
		}
		c.sparse[vname] = true
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	if _, ok := s.db.collections[name]; ok {
		return nil, status.Errorf(codes.AlreadyExists, "Collection `%s` already exists!", name)
	}
	s.db.collections[name] = c
	return &qdrant.CollectionOperationResponse{Result: true}, nil
}

// Delete drops a collection; Result is false when there was none.
func (s *collectionsService) Delete(_ context.Context, req *qdrant.DeleteCollection) (*qdrant.CollectionOperationResponse, error) {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	_, ok := s.db.collections[req.GetCollectionName()]
	delete(s.db.collections, req.GetCollectionName())
	return &qdrant.CollectionOperationResponse{Result: ok}, nil
}

// CollectionExists reports whether a collection exists.
func (s *collectionsService) CollectionExists(_ context.Context, req *qdrant.CollectionExistsRequest) (*qdrant.CollectionExistsResponse, error) {
	s.db.mu.RLock()
	defer s.db.mu.RUnlock()
	_, ok := s.db.collections[req.GetCollectionName()]
	return &qdrant.CollectionExistsResponse{Result: &qdrant.CollectionExists{Exists: ok}}, nil
}

// List names the collections, in name order.
func (s *collectionsService) List(context.Context, *qdrant.ListCollectionsRequest) (*qdrant.ListCollectionsResponse, error) {
	s.db.mu.RLock()
	defer s.db.mu.RUnlock()
	resp := &qdrant.ListCollectionsResponse{}
	for _, name := range sortedKeys(s.db.collections) {
		resp.Collections = append(resp.Collections, &qdrant.CollectionDescription{Name: name})
	}
	return resp, nil
}

// Get describes a collection: status green, its configuration, its points
// count and payload indexes.
func (s *collectionsService) Get(_ context.Context, req *qdrant.GetCollectionInfoRequest) (*qdrant.GetCollectionInfoResponse, error) {
	var info *qdrant.CollectionInfo
	err := s.db.read(req.GetCollectionName(), func(c *collection) error {
		n := uint64(len(c.points))
		zero := uint64(0)
		one := uint32(1)
		schema := map[string]*qdrant.PayloadSchemaInfo{}
		for k, v := range c.indexes {
			si := proto.Clone(v).(*qdrant.PayloadSchemaInfo)
			fp, _ := parsePath(k)
			cnt := uint64(0)
			for _, p := range c.points {
				if len(fp.get(p.payload)) > 0 {
					cnt++
				}
			}
			si.Points = &cnt
			schema[k] = si
		}
		info = &qdrant.CollectionInfo{
			Status:          qdrant.CollectionStatus_Green,
			OptimizerStatus: &qdrant.OptimizerStatus{Ok: true},
			SegmentsCount:   1,
			Config: &qdrant.CollectionConfig{
				Params: &qdrant.CollectionParams{
					ShardNumber:         1,
					ReplicationFactor:   &one,
					VectorsConfig:       c.vectorsConfig,
					SparseVectorsConfig: c.sparseConfig,
				},
				HnswConfig:      &qdrant.HnswConfigDiff{},
				OptimizerConfig: &qdrant.OptimizersConfigDiff{},
				WalConfig:       &qdrant.WalConfigDiff{},
			},
			PayloadSchema:       schema,
			PointsCount:         &n,
			IndexedVectorsCount: &zero,
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &qdrant.GetCollectionInfoResponse{Result: info}, nil
}
