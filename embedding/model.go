package embedding

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
)

// ModelRecordID is the id of the record, in the store's system tenant
// (backend.Store.SystemTenant), that holds the store's embedding model:
// a document (memory.KindDocument) with key ModelRecordKey whose content
// is ModelInfo as JSON, such as {"model":"text-embedding-3-small","dims":1536}.
// Its identity carries the system tenant and nothing else, so no level
// but the platform's store level lists it.
const ModelRecordID = "agentmem-embedding-model"

// ModelRecordKey is the Key of the model record.
const ModelRecordKey = "agentmem/embedding-model"

// ModelInfo is what a store records about the vectors it holds.
type ModelInfo struct {
	// Model names the model the store's vectors come from
	// (memory.Embedder.Model).
	Model string `json:"model"`
	// Dims is their dimension; zero until the first vector is embedded.
	Dims int `json:"dims"`
	// Next, when set, names the model the store is being re-embedded
	// with (Options.Reembed); Indexer.FinishReembed makes it Model.
	Next string `json:"next,omitempty"`
}

// RecordedModel returns the model recorded in s, and false when none is:
// nothing has been embedded or searched by embedding yet.
func RecordedModel(ctx context.Context, s *backend.Store) (ModelInfo, bool, error) {
	info, _, ok, err := readModel(ctx, s)
	return info, ok, err
}

func modelQuery(s *backend.Store) driver.Query {
	return driver.Query{
		Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: s.SystemTenant()}},
		IDs:    []string{ModelRecordID},
	}
}

// readModel reads the model record and its version.
func readModel(ctx context.Context, s *backend.Store) (ModelInfo, memory.Record, bool, error) {
	recs, err := s.Driver().List(ctx, modelQuery(s))
	if err != nil || len(recs) == 0 {
		return ModelInfo{}, memory.Record{}, false, err
	}
	var info ModelInfo
	if err := json.Unmarshal([]byte(recs[0].Content), &info); err != nil || info.Model == "" || info.Dims < 0 {
		return ModelInfo{}, memory.Record{}, false, memory.Wrap(memory.ErrInvalidArgument, errOrEmpty(err),
			"the store's embedding model record "+ModelRecordID+" is malformed: "+recs[0].Content)
	}
	return info, recs[0], true, nil
}

func errOrEmpty(err error) error {
	if err == nil {
		return errors.New("no model name, or a negative dimension")
	}
	return err
}

// writeModel stores info as the model record if the stored one still has
// version expect (0: none). The record is the library's own bookkeeping,
// written with the driver's compare-and-swap directly rather than through
// the store's platform view, so recording a model needs no posture with
// AllowPlatform.
func writeModel(ctx context.Context, s *backend.Store, info ModelInfo, old memory.Record, expect int64) error {
	b, err := json.Marshal(info)
	if err != nil {
		return memory.Wrap(memory.ErrInvalidArgument, err, "encoding the embedding model record")
	}
	rec := old
	if expect == 0 {
		rec = memory.Record{
			ID:       ModelRecordID,
			Kind:     memory.KindDocument,
			Identity: memory.Identity{Tenant: s.SystemTenant()},
			Key:      ModelRecordKey,
			Label:    "embedding-model",
			Created:  s.Now(),
		}
	}
	rec.Content = string(b)
	sw, ok := s.Driver().(driver.Swapper)
	if !ok {
		return memory.Errorf(memory.ErrUnimplemented, "embedding: recording the model needs a versioned write (driver.Swapper), and the %T driver has none", s.Driver())
	}
	_, err = sw.Swap(ctx, rec, expect)
	return err
}

// role is how a user of the model record relates to it.
type role int

const (
	roleQuery   role = iota // embeds search queries: only the settled model
	roleIndex               // embeds records: the settled model, or the one re-embedding
	roleReembed             // an indexer asked to re-embed: may start a re-embedding
)

// decide says whether model may be used in role r with the store's model
// record info (ok: there is one): nil and nil when it may as things are, a
// record to write first (recording the model, or marking a re-embedding),
// or memory.ErrConflict naming both models.
func decide(info ModelInfo, ok bool, model string, r role) (*ModelInfo, error) {
	switch {
	case !ok:
		return &ModelInfo{Model: model}, nil
	case info.Next == "" && info.Model == model:
		return nil, nil
	case info.Next == model && r != roleQuery:
		return nil, nil
	case info.Next != "" && r == roleQuery && (info.Model == model || info.Next == model):
		return nil, memory.Errorf(memory.ErrConflict,
			"the store is being re-embedded from model %q to %q: vector search is unavailable until the re-embedding finishes (Indexer.FinishReembed)", info.Model, info.Next)
	case info.Next != "":
		return nil, memory.Errorf(memory.ErrConflict,
			"the store's vectors come from model %q and are being re-embedded with %q; model %q cannot be used", info.Model, info.Next, model)
	case r == roleReembed:
		next := info
		next.Next = model
		return &next, nil
	}
	return nil, memory.Errorf(memory.ErrConflict,
		"the store's vectors come from model %q, not %q: use that model, or re-embed the store (Options.Reembed)", info.Model, model)
}

// maxModelTries bounds how often a model check re-reads the record after
// losing a race to write it.
const maxModelTries = 10

// checkModel makes sure model may be used in role r, recording it when the
// store has no model yet and, for roleReembed, marking the store as being
// re-embedded with it, and returns the model record as it then is. When
// dims is not zero, it also checks that vectors of dims dimensions fit
// the store, recording the dimension when none is recorded yet.
func checkModel(ctx context.Context, s *backend.Store, model string, r role, dims int) (ModelInfo, error) {
	for tries := 1; ; tries++ {
		info, rec, ok, err := readModel(ctx, s)
		if err != nil {
			return ModelInfo{}, err
		}
		next, err := decide(info, ok, model, r)
		if err != nil {
			return info, err
		}
		if next == nil {
			switch {
			case dims == 0 || info.Dims == dims:
				return info, nil
			case info.Dims != 0 && info.Next == model:
				return info, memory.Errorf(memory.ErrConflict,
					"model %q returns vectors of %d dimensions, and the store holds vectors of %d from %q: a store keeps one dimension, so re-embedding with a model of another needs a new store", model, dims, info.Dims, info.Model)
			case info.Dims != 0:
				return info, memory.Errorf(memory.ErrConflict,
					"model %q returns vectors of %d dimensions, but the store recorded %d for it: the model changed under one name", model, dims, info.Dims)
			}
			info.Dims = dims
			next = &info
		}
		err = writeModel(ctx, s, *next, rec, rec.Version)
		if errors.Is(err, memory.ErrConflict) && tries < maxModelTries {
			continue // someone else wrote the record meanwhile: look again
		}
		if err != nil {
			return ModelInfo{}, err
		}
		if dims != 0 && next.Dims != dims {
			continue // recorded the model; now the dimension
		}
		return *next, nil
	}
}
