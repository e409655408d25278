package postgres

import (
	"encoding/binary"
	"fmt"
	"math"
)

// vectorColumn reads the embedding column in PostgreSQL's binary array
// format (array_send, the protocol's binary form of real[]), which the
// server writes without formatting a float as text and the driver reads
// without parsing one, which for a search's few hundred-dimension rows is
// most of the time text would spend (BENCHMARKS.md, "Choices measured").
const vectorColumn = `array_send(embedding)`

// float4OID is the type oid of real (float4), the element type array_send
// names for a real[].
const float4OID = 700

// decodeVector decodes the output of array_send for a real[] of one
// dimension without NULL elements, as the driver stores vectors:
//
//	int32 ndim (1), int32 has-nulls flag (0), uint32 element type (700),
//	int32 length n, int32 lower bound (1), then n times: int32 4, 4 bytes of
//	an IEEE 754 float32, all big-endian.
//
// Anything else is an error naming what is wrong.
func decodeVector(b []byte) ([]float32, error) {
	const header = 20
	if len(b) < header {
		return nil, fmt.Errorf("binary real[] of %d bytes is shorter than its header", len(b))
	}
	be := binary.BigEndian
	ndim, nulls, elem := be.Uint32(b[0:]), be.Uint32(b[4:]), be.Uint32(b[8:])
	n, lower := int64(int32(be.Uint32(b[12:]))), int32(be.Uint32(b[16:]))
	switch {
	case ndim != 1:
		return nil, fmt.Errorf("binary real[] has %d dimensions, not 1", int32(ndim))
	case nulls != 0:
		return nil, fmt.Errorf("binary real[] holds NULL elements")
	case elem != float4OID:
		return nil, fmt.Errorf("binary array has element type %d, not real (%d)", elem, float4OID)
	case lower != 1:
		return nil, fmt.Errorf("binary real[] starts at index %d, not 1", lower)
	case n < 1 || int64(len(b)-header) != 8*n:
		return nil, fmt.Errorf("binary real[] of %d elements has %d bytes of elements", n, len(b)-header)
	}
	out := make([]float32, n)
	p := b[header:]
	for i := range out {
		if be.Uint32(p) != 4 {
			return nil, fmt.Errorf("binary real[] element %d is %d bytes, not 4", i, int32(be.Uint32(p)))
		}
		out[i] = math.Float32frombits(be.Uint32(p[4:]))
		p = p[8:]
	}
	return out, nil
}
