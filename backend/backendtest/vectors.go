package backendtest

import (
	"context"
	"math"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// checkVectors checks vector storage, which every driver has: vectors
// come back bit for bit (extreme finite values, negative zero); the first
// vector fixes the store's dimension, and a record of another dimension
// — alone, in a later batch, or mixed into a batch — is ErrInvalidArgument
// with nothing of its batch stored; a replacement may drop or change the
// vector; the dimension outlives deleting every record.
func checkVectors(r reporter, e *env) {
	d, _ := e.open(r)
	if _, ok := d.(driver.VectorSearcher); ok != (e.cfg.VectorSearch != NoVectorSearch) {
		r.Errorf("Config.VectorSearch is %v but the driver (%T) implements driver.VectorSearcher: %v", e.cfg.VectorSearch, d, ok)
	}
	ctx := context.Background()
	id := e.agentID(d, memory.Identity{Tenant: "vectors", User: "u", Session: "s"})
	vec := func(seed float32) []float32 { // VectorDims values
		return []float32{seed, -seed / 3, math.MaxFloat32, -math.MaxFloat32, 1e-30, float32(math.Copysign(0, -1)), 0.1, 1}
	}
	rec := func(rid string, v []float32) memory.Record {
		return memory.Record{ID: rid, Kind: memory.KindFact, Identity: id, Content: rid, Created: t0, Vector: v}
	}
	// Records without vectors do not fix a dimension.
	mustPut(r, d, "a record without a vector", []memory.Record{rec("plain", nil)})
	first := []memory.Record{rec("vec-1", vec(1)), rec("vec-2", vec(2.5))}
	mustPut(r, d, "the first vectors", first)
	for _, want := range first {
		got, _ := getOne(r, d, id.Tenant, want.ID)
		sameRecords(r, "round trip of "+want.ID, []memory.Record{got}, []memory.Record{want})
	}
	got, _ := getOne(r, d, id.Tenant, "plain")
	if got.Vector != nil {
		r.Errorf("a record stored without a vector came back with %v", got.Vector)
	}

	dimErr := func(what string, recs []memory.Record) {
		r.Helper()
		err := d.Put(ctx, recs)
		wantErr(r, what, err, memory.ErrInvalidArgument)
		for _, x := range recs {
			if got, found := getOne(r, d, id.Tenant, x.ID); found && (x.ID != "vec-1" || !sameVector(got.Vector, first[0].Vector)) {
				r.Errorf("%s: record %s was stored (or changed) by a refused batch", what, x.ID)
			}
		}
	}
	dimErr("a vector of another dimension", []memory.Record{rec("short", []float32{1, 2, 3})})
	dimErr("a batch mixing the store's dimension with another", []memory.Record{rec("ok", vec(3)), rec("long", make9())})
	dimErr("a replacement of vec-1 with another dimension", []memory.Record{rec("vec-1", []float32{1})})

	// Replacements may drop the vector or change its values.
	mustPut(r, d, "replace vec-2 without a vector", []memory.Record{rec("vec-2", nil)})
	if got, _ := getOne(r, d, id.Tenant, "vec-2"); got.Vector != nil {
		r.Errorf("vec-2 replaced without a vector still has %v", got.Vector)
	}
	mustPut(r, d, "replace vec-1 with other values", []memory.Record{rec("vec-1", vec(7))})
	if got, _ := getOne(r, d, id.Tenant, "vec-1"); !sameVector(got.Vector, vec(7)) {
		r.Errorf("vec-1 after replacement has %v, want %v", got.Vector, vec(7))
	}

	// Bad vectors are refused like any bad field.
	for _, bad := range []struct {
		what string
		v    []float32
		kind error
	}{
		{"an empty vector", []float32{}, memory.ErrInvalidArgument},
		{"an all-zero vector", make([]float32, 8), memory.ErrInvalidArgument},
		{"a NaN", []float32{1, float32(math.NaN()), 1, 1, 1, 1, 1, 1}, memory.ErrInvalidArgument},
		{"an infinity", []float32{1, float32(math.Inf(1)), 1, 1, 1, 1, 1, 1}, memory.ErrInvalidArgument},
		{"too many dimensions", make([]float32, memory.MaxVectorDims+1), memory.ErrTooLarge},
	} {
		err := d.Put(ctx, []memory.Record{rec("bad", bad.v)})
		wantErr(r, "Put of a record with "+bad.what, err, bad.kind)
	}

	// The dimension is the store's, not the records': it stays after
	// every record is deleted.
	if e.cfg.PerAgent != nil && e.cfg.PerAgent.DimensionInRecords {
		skip(r, "vector storage was checked, except that the dimension outlives deleting every record: the driver keeps it in its records (PerAgent.DimensionInRecords)")
		return
	}
	_, err := d.Delete(ctx, tenantQuery(id.Tenant))
	mustNoErr(r, "delete everything", err)
	dimErr("another dimension after deleting every record", []memory.Record{rec("after", []float32{1, 2})})
	mustPut(r, d, "the store's dimension after deleting every record", []memory.Record{rec("after", vec(4))})
}

// make9 returns a valid vector of nine dimensions.
func make9() []float32 { return []float32{1, 2, 3, 4, 5, 6, 7, 8, 9} }
