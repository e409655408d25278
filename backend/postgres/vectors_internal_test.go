package postgres

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestVectorLiterals checks that both literals read back bit for bit,
// extremes and subnormals included, between their own delimiters.
func TestVectorLiterals(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	v := []float32{0, float32(math.Copysign(0, -1)), 1, -1, math.MaxFloat32, -math.MaxFloat32,
		math.SmallestNonzeroFloat32, 1e-40, 0.1, 1.0 / 3}
	for range 1000 {
		v = append(v, math.Float32frombits(rnd.Uint32()&^(0xff<<23))) // finite: exponent below all ones
		v = append(v, float32(rnd.NormFloat64()))
	}
	for _, c := range []struct {
		lit         string
		open, close string
	}{{vectorLiteral(v), "{", "}"}, {queryVector(v), "[", "]"}} {
		if !strings.HasPrefix(c.lit, c.open) || !strings.HasSuffix(c.lit, c.close) {
			t.Fatalf("literal %.20q… is not between %s and %s", c.lit, c.open, c.close)
		}
		parts := strings.Split(c.lit[1:len(c.lit)-1], ",")
		if len(parts) != len(v) {
			t.Fatalf("%d values in the literal, want %d", len(parts), len(v))
		}
		for i, p := range parts {
			f, err := strconv.ParseFloat(p, 32)
			if err != nil || math.Float32bits(float32(f)) != math.Float32bits(v[i]) {
				t.Fatalf("value %d: %q reads back as %v (%v), want %v", i, p, float32(f), err, v[i])
			}
		}
	}
	if got := queryVector(nil); got != "[]" {
		t.Errorf("queryVector(nil) = %q, want []", got)
	}
}
