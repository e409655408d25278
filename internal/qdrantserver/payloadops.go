package qdrantserver

import (
	"context"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// SetPayload merges keys into the payload of the selected points.
func (s *pointsService) SetPayload(_ context.Context, req *qdrant.SetPayloadPoints) (*qdrant.PointsOperationResponse, error) {
	return s.editPayload(req.GetCollectionName(), req.GetPointsSelector(), req.Wait, req.Key, func(p *point) {
		for k, v := range req.GetPayload() {
			p.payload[k] = fromValue(v)
		}
	})
}

// OverwritePayload replaces the payload of the selected points.
func (s *pointsService) OverwritePayload(_ context.Context, req *qdrant.SetPayloadPoints) (*qdrant.PointsOperationResponse, error) {
	return s.editPayload(req.GetCollectionName(), req.GetPointsSelector(), req.Wait, req.Key, func(p *point) {
		p.payload = fromMap(req.GetPayload())
	})
}

// DeletePayload removes keys (paths) from the payload of the selected points.
func (s *pointsService) DeletePayload(_ context.Context, req *qdrant.DeletePayloadPoints) (*qdrant.PointsOperationResponse, error) {
	var paths []path
	for _, k := range req.GetKeys() {
		p, err := parsePath(k)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return s.editPayload(req.GetCollectionName(), req.GetPointsSelector(), req.Wait, nil, func(p *point) {
		for _, k := range paths {
			removePath(p.payload, k)
		}
	})
}

// ClearPayload empties the payload of the selected points.
func (s *pointsService) ClearPayload(_ context.Context, req *qdrant.ClearPayloadPoints) (*qdrant.PointsOperationResponse, error) {
	return s.editPayload(req.GetCollectionName(), req.GetPoints(), req.Wait, nil, func(p *point) {
		p.payload = map[string]any{}
	})
}

func (s *pointsService) editPayload(name string, sel *qdrant.PointsSelector, wait *bool, key *string, edit func(*point)) (*qdrant.PointsOperationResponse, error) {
	if key != nil {
		return nil, status.Error(codes.Unimplemented, "qdrantserver: setting payload at a key is not supported")
	}
	var resp *qdrant.PointsOperationResponse
	err := s.db.write(name, func(c *collection) error {
		ps, err := c.selected(sel)
		if err != nil {
			return err
		}
		for _, p := range ps {
			c.untrack(p)
			edit(p)
			c.track(p)
		}
		resp = c.updated(wait)
		return nil
	})
	return resp, err
}

// schemaTypes maps a field index request's type to the schema type
// Collections.Get reports.
var schemaTypes = map[qdrant.FieldType]qdrant.PayloadSchemaType{
	qdrant.FieldType_FieldTypeKeyword:  qdrant.PayloadSchemaType_Keyword,
	qdrant.FieldType_FieldTypeInteger:  qdrant.PayloadSchemaType_Integer,
	qdrant.FieldType_FieldTypeFloat:    qdrant.PayloadSchemaType_Float,
	qdrant.FieldType_FieldTypeGeo:      qdrant.PayloadSchemaType_Geo,
	qdrant.FieldType_FieldTypeText:     qdrant.PayloadSchemaType_Text,
	qdrant.FieldType_FieldTypeBool:     qdrant.PayloadSchemaType_Bool,
	qdrant.FieldType_FieldTypeDatetime: qdrant.PayloadSchemaType_Datetime,
	qdrant.FieldType_FieldTypeUuid:     qdrant.PayloadSchemaType_Uuid,
}

// CreateFieldIndex records a payload index (its type and parameters, such
// as a keyword index's is_tenant); it does not change any result.
func (s *pointsService) CreateFieldIndex(_ context.Context, req *qdrant.CreateFieldIndexCollection) (*qdrant.PointsOperationResponse, error) {
	if _, err := parsePath(req.GetFieldName()); err != nil {
		return nil, err
	}
	if req.FieldType == nil {
		return nil, badInput("field_type is required to create a payload index")
	}
	st, ok := schemaTypes[req.GetFieldType()]
	if !ok {
		return nil, badInput("Unknown field type %v", req.GetFieldType())
	}
	var resp *qdrant.PointsOperationResponse
	err := s.db.write(req.GetCollectionName(), func(c *collection) error {
		info := &qdrant.PayloadSchemaInfo{DataType: st}
		if req.FieldIndexParams != nil {
			info.Params = proto.Clone(req.GetFieldIndexParams()).(*qdrant.PayloadIndexParams)
		}
		c.indexes[req.GetFieldName()] = info
		delete(c.ordered, req.GetFieldName())
		resp = c.updated(req.Wait)
		return nil
	})
	return resp, err
}

// DeleteFieldIndex forgets a payload index.
func (s *pointsService) DeleteFieldIndex(_ context.Context, req *qdrant.DeleteFieldIndexCollection) (*qdrant.PointsOperationResponse, error) {
	var resp *qdrant.PointsOperationResponse
	err := s.db.write(req.GetCollectionName(), func(c *collection) error {
		delete(c.indexes, req.GetFieldName())
		delete(c.ordered, req.GetFieldName())
		resp = c.updated(req.Wait)
		return nil
	})
	return resp, err
}
