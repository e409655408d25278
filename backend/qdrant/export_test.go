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

// BeforeWrite sets a function d calls between reading the points of a
// write and writing them; nil removes it.
func BeforeWrite(d *Driver, f func()) { d.beforeWrite = f }

// ClientOf returns d's client.
func ClientOf(d *Driver) *qc.Client { return d.client }

// WorkPointID is workPointID: the id of the point of item id of queue in
// the work collection of the store collection.
var WorkPointID = workPointID

// WorkSuffix names the work collection; DoneBatch is how many done points
// a driver removes at once; MaxCollection is the longest collection name.
const (
	WorkSuffix    = workSuffix
	DoneBatch     = doneBatch
	MaxCollection = maxCollection
)
