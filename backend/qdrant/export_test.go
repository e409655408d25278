package qdrant

import (
	qc "github.com/qdrant/go-client/qdrant"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// Internals for the package's external tests.

// ListFilterOf returns the filter List sends for q at now, on a driver of
// collection.
func ListFilterOf(collection string, q driver.Query, now int64) *qc.Filter {
	return (&Driver{coll: collection}).listFilter(q, now)
}

// DeleteFilterOf returns the filter of Delete's mark for q.
func DeleteFilterOf(collection string, q driver.Query) *qc.Filter {
	return (&Driver{coll: collection}).deleteFilter(q)
}

// SweepFilterOf returns the filter of Sweep's mark at now.
func SweepFilterOf(now int64) *qc.Filter { return sweepFilter(now) }

// WriteFilterOf returns the update filter of an upsert of the points ids
// (point ids) written by who, one identity per entry.
func WriteFilterOf(who []memory.Identity, ids [][]string) *qc.Filter {
	groups := make([]writerGroup, len(who))
	for i := range who {
		groups[i].id = who[i]
		for _, id := range ids[i] {
			groups[i].points = append(groups[i].points, qc.NewID(id))
		}
	}
	return writeFilter(groups)
}

// Chunks is chunks.
func Chunks(points []*qc.PointStruct, maxPoints, maxBytes int) [][]int {
	return chunks(points, maxPoints, maxBytes)
}

// EncodeRecord returns the point that stores r at version in collection.
func EncodeRecord(collection string, r memory.Record, version int64) (*qc.PointStruct, error) {
	return (&Driver{coll: collection, textLen: DefaultTextLength}).encode(r, version)
}

// MaxUpsertPoints and MaxUpsertBytes bound one upsert request.
const (
	MaxUpsertPoints = maxUpsertPoints
	MaxUpsertBytes  = maxUpsertBytes
)

// KindOf is kindOf.
var KindOf = kindOf

// StaleMark is staleMark.
const StaleMark = staleMark

// RecordString and ParseRecordString are the record string's encoder
// and decoder.
var (
	RecordString      = encodeRecord
	ParseRecordString = decodeRecord
)
