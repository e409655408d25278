package postgres_test

import (
	"context"
	"math"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/postgres"
)

// TestVectorBits stores a vector of float32's edge values (negative
// zero, the smallest subnormal, the largest finite value) and reads it
// back bit for bit: the real[] column and the binary array transfer lose
// nothing.
func TestVectorBits(t *testing.T) {
	d, _ := openFresh(t, postgres.Options{})
	ctx := context.Background()
	v := []float32{float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
		math.MaxFloat32, -math.MaxFloat32, 1.17549435e-38, 0.1, -1.0 / 3, 16777217, 1e-10}
	rec := memory.Record{ID: "bits", Kind: memory.KindFact, Identity: memory.Identity{Tenant: "t", Session: "s"},
		Content: "bits", Created: searchT0, Vector: v}
	if err := d.Put(ctx, []memory.Record{rec}); err != nil {
		t.Fatal(err)
	}
	got, err := d.List(ctx, tenantQuery("t"))
	if err != nil || len(got) != 1 {
		t.Fatalf("List: %v, %v", got, err)
	}
	for i := range v {
		if math.Float32bits(got[0].Vector[i]) != math.Float32bits(v[i]) {
			t.Errorf("value %d reads back as %v (%08x), want %v (%08x)", i, got[0].Vector[i],
				math.Float32bits(got[0].Vector[i]), v[i], math.Float32bits(v[i]))
		}
	}
}
