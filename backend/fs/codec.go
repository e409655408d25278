package fs

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"

	"github.com/agentmem/memory"
)

// A frame's payload is one operation: a byte naming it, then its body.
const (
	// opPut stores records: a count, then each record with its version.
	opPut byte = 1
	// opDelete removes records: a count, then each record's tenant and id
	// (in a format-1 log, each id alone).
	opDelete byte = 2
)

// Record flags in the encoding.
const (
	flagExpires byte = 1 << iota
	flagVector
)

// errMalformed reports a payload that passed its checksum but does not
// decode: a log written by something else, or a driver bug.
var errMalformed = errors.New("malformed frame payload")

// encoder appends the encoding of operations to a frame buffer.
type encoder struct{ buf []byte }

// newEncoder returns an encoder whose buffer reserves the frame header.
func newEncoder(op byte, count int) *encoder {
	e := &encoder{buf: make([]byte, frameHeaderBytes, 4096)}
	e.buf = append(e.buf, op)
	e.buf = binary.AppendUvarint(e.buf, uint64(count))
	return e
}

func (e *encoder) str(s string) {
	e.buf = binary.AppendUvarint(e.buf, uint64(len(s)))
	e.buf = append(e.buf, s...)
}

// record appends r at the given version and returns how many bytes its
// encoding took.
func (e *encoder) record(r memory.Record, version int64) int {
	start := len(e.buf)
	e.str(r.ID)
	e.str(string(r.Kind))
	e.str(r.Identity.Tenant)
	e.str(r.Identity.User)
	e.str(r.Identity.Agent)
	e.str(r.Identity.Instance)
	e.str(r.Identity.Squad)
	e.str(r.Identity.Session)
	e.str(r.Label)
	e.str(r.Key)
	e.str(r.Content)
	e.buf = binary.AppendUvarint(e.buf, uint64(len(r.Metadata)))
	keys := make([]string, 0, len(r.Metadata))
	for k := range r.Metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		e.str(k)
		e.str(r.Metadata[k])
	}
	created, _ := memory.UnixNanos(r.Created) // Validate has checked the range
	e.buf = binary.LittleEndian.AppendUint64(e.buf, uint64(created))
	var flags byte
	if !r.Expires.IsZero() {
		flags |= flagExpires
	}
	if r.Vector != nil {
		flags |= flagVector
	}
	e.buf = append(e.buf, flags)
	if !r.Expires.IsZero() {
		expires, _ := memory.UnixNanos(r.Expires)
		e.buf = binary.LittleEndian.AppendUint64(e.buf, uint64(expires))
	}
	e.buf = binary.AppendUvarint(e.buf, uint64(r.Tokens))
	e.buf = binary.AppendUvarint(e.buf, uint64(version))
	if r.Vector != nil {
		e.buf = binary.AppendUvarint(e.buf, uint64(len(r.Vector)))
		for _, x := range r.Vector {
			e.buf = binary.LittleEndian.AppendUint32(e.buf, math.Float32bits(x))
		}
	}
	return len(e.buf) - start
}

// frame returns the finished frame.
func (e *encoder) frame() []byte { return sealFrame(e.buf) }

// decoded is one operation read back from a frame payload.
type decoded struct {
	op      byte
	puts    []decodedRecord
	deletes []idKey // in a format-1 log, with an empty tenant
}

// decodedRecord is a stored record and its writer, before the index
// interns the writer.
type decodedRecord struct {
	e   *entry
	who memory.Identity
}

// decoder reads an operation from a payload held as one string, so the
// strings of the records it decodes share the payload's memory.
type decoder struct {
	s   string
	off int
	bad bool
}

// decodePayload decodes the operation in payload, a frame of a log of the
// given format. It never panics and fails with errMalformed on bytes no
// encoder writes.
func decodePayload(payload string, format int) (decoded, error) {
	d := &decoder{s: payload}
	var out decoded
	out.op = d.byte()
	n := d.count(1)
	switch out.op {
	case opPut:
		out.puts = make([]decodedRecord, 0, n)
		for i := 0; i < n && !d.bad; i++ {
			out.puts = append(out.puts, d.record())
		}
	case opDelete:
		out.deletes = make([]idKey, 0, n)
		for i := 0; i < n && !d.bad; i++ {
			var k idKey
			if format != logFormatIDOnly {
				k.tenant = d.str()
			}
			k.id = d.str()
			out.deletes = append(out.deletes, k)
		}
	default:
		d.bad = true
	}
	if d.bad || d.off != len(d.s) {
		return decoded{}, errMalformed
	}
	return out, nil
}

func (d *decoder) byte() byte {
	if d.bad || d.off >= len(d.s) {
		d.bad = true
		return 0
	}
	b := d.s[d.off]
	d.off++
	return b
}

func (d *decoder) uvarint() uint64 {
	var x uint64
	for shift := uint(0); shift < 64; shift += 7 {
		b := d.byte()
		if d.bad {
			return 0
		}
		x |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return x
		}
	}
	d.bad = true
	return 0
}

// count reads a count of items that each take at least min bytes, and
// fails when the rest of the payload cannot hold that many.
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if d.bad || n > uint64((len(d.s)-d.off)/min) {
		d.bad = true
		return 0
	}
	return int(n)
}

func (d *decoder) str() string {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.s)-d.off) {
		d.bad = true
		return ""
	}
	s := d.s[d.off : d.off+int(n)]
	d.off += int(n)
	return s
}

func (d *decoder) u64() uint64 {
	if d.bad || len(d.s)-d.off < 8 {
		d.bad = true
		return 0
	}
	var x uint64
	for i := 7; i >= 0; i-- {
		x = x<<8 | uint64(d.s[d.off+i])
	}
	d.off += 8
	return x
}

func (d *decoder) u32() uint32 {
	if d.bad || len(d.s)-d.off < 4 {
		d.bad = true
		return 0
	}
	s := d.s[d.off:]
	x := uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
	d.off += 4
	return x
}

func (d *decoder) record() decodedRecord {
	start := d.off
	e := &entry{}
	e.ID = d.str()
	e.Kind = memory.Kind(d.str())
	var who memory.Identity
	who.Tenant = d.str()
	who.User = d.str()
	who.Agent = d.str()
	who.Instance = d.str()
	who.Squad = d.str()
	who.Session = d.str()
	e.Label = d.str()
	e.Key = d.str()
	e.Content = d.str()
	if n := d.count(2); n > 0 {
		e.Metadata = make(map[string]string, n)
		for i := 0; i < n && !d.bad; i++ {
			k := d.str()
			e.Metadata[k] = d.str()
		}
	}
	e.Created = int64(d.u64())
	flags := d.byte()
	if flags&^(flagExpires|flagVector) != 0 {
		d.bad = true
	}
	if flags&flagExpires != 0 {
		e.Expires, e.HasExpires = int64(d.u64()), true
	}
	tokens := d.uvarint()
	version := d.uvarint()
	if tokens > math.MaxInt || version > math.MaxInt64 {
		d.bad = true
	}
	e.Tokens, e.Version = int(tokens), int64(version)
	if flags&flagVector != 0 {
		n := d.count(4)
		if n == 0 || n > memory.MaxVectorDims {
			d.bad = true
			n = 0
		}
		e.Vector = make([]float32, n)
		for i := range e.Vector {
			e.Vector[i] = math.Float32frombits(d.u32())
		}
	}
	e.Extra.size = int64(d.off - start)
	return decodedRecord{e: e, who: who}
}
