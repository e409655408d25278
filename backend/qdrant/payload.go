package qdrant

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/vecmath"
)

// Payload keys. None holds a '.' or '[', which Qdrant reads as paths.
const (
	fTenant   = "tenant"
	fRecord   = "record" // the record, less its vector (record.go)
	fRecordID = "record_id"
	fKind     = "kind"
	fKey      = "key"
	fCreated  = "created"
	fExpSec   = "expires_s"
	fExpNano  = "expires_ns"
	fVersion  = "version"
	fDead     = "dead"
	fDel      = "del"
	fDelAt    = "del_at"
	fTerms    = "terms"   // the content's distinct terms (lexical.Analyze), each after a space, and a space
	fHasText  = "text"    // content is not ""
	fAsks     = "asks"    // driver.Asks(content)
	fSpeaker  = "speaker" // metadata[memory.SpeakerKey], when not ""
	fWrites   = "writes"  // the point's recent writes (writes.go)
)

// Named vectors.
const (
	vDense = "dense" // the record's vector, normalised; Cosine
	vRaw   = "raw"   // the record's vector as written; Dot, never searched
	vText  = "text"  // the content's terms, weighed for BM25
)

// withRaw selects the vector a record is read with.
func withRaw() *qc.WithVectorsSelector { return qc.NewWithVectorsInclude(vRaw) }

// recordFields are the payload keys decode reads: the record, and none
// of the keys kept for filters and searches alone.
var recordFields = []string{fRecord}

// identityFields are the identity's payload keys, tenant first.
var identityFields = [...]struct {
	f    memory.Field
	name string
}{
	{memory.FieldTenant, fTenant},
	{memory.FieldUser, "user"},
	{memory.FieldAgent, "agent"},
	{memory.FieldInstance, "instance"},
	{memory.FieldSquad, "squad"},
	{memory.FieldSession, "session"},
}

// idPrefix starts every stored identity value, so that the empty value,
// which the contract matches as a value of its own, is never an empty
// string in Qdrant (whose keyword index and is_empty treat "" apart).
const idPrefix = "="

// idValue is the stored form of an identity field's value.
func idValue(v string) string { return idPrefix + v }

// neverSec is the stored expires_s of a record that never expires: later
// than every time a record can hold (the year 2262 is under 1e10 seconds)
// and exactly representable as a float64 range bound.
const neverSec = int64(1) << 40

// splitNanos splits unix nanoseconds into whole seconds (rounded down)
// and the nanoseconds past them, 0 to 999,999,999: numbers a float64 holds
// exactly, as the range bounds of Qdrant's filters are float64.
func splitNanos(n int64) (sec, nsec int64) {
	sec, nsec = n/1e9, n%1e9
	if nsec < 0 {
		sec, nsec = sec-1, nsec+1e9
	}
	return sec, nsec
}

// PointID returns the id of the point that holds the record id of tenant
// in collection: a UUID made of the first 128 bits of a SHA-256 over the
// three, each prefixed with its length, with the version (8, custom) and
// variant bits of RFC 9562 set. Re-adding a record writes the same point.
func PointID(collection, tenant, id string) string {
	return hashUUID("agentmem/qdrant/record/v1", collection, tenant, id)
}

// hashUUID hashes length-prefixed parts into a UUID of version 8.
func hashUUID(parts ...string) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	var b [16]byte
	copy(b[:], h.Sum(nil))
	b[6] = b[6]&0x0f | 0x80 // version 8
	b[8] = b[8]&0x3f | 0x80 // variant 10
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// encode returns the point that stores r at version.
func (d *Driver) encode(r memory.Record, version int64) (*qc.PointStruct, error) {
	created, _ := memory.UnixNanos(r.Created) // Validate checked the range
	p := map[string]*qc.Value{
		fRecord:   qc.NewValueString(encodeRecord(r, version)),
		fRecordID: qc.NewValueString(r.ID),
		fKind:     qc.NewValueString(string(r.Kind)),
		fKey:      qc.NewValueString(r.Key),
		fCreated:  qc.NewValueInt(created),
		fVersion:  qc.NewValueInt(version),
		fDead:     qc.NewValueBool(false),
	}
	for _, f := range identityFields {
		p[f.name] = qc.NewValueString(idValue(r.Identity.Get(f.f)))
	}
	if r.Expires.IsZero() {
		p[fExpSec], p[fExpNano] = qc.NewValueInt(neverSec), qc.NewValueInt(0)
	} else {
		exp, _ := memory.UnixNanos(r.Expires)
		s, ns := splitNanos(exp)
		p[fExpSec], p[fExpNano] = qc.NewValueInt(s), qc.NewValueInt(ns)
	}
	vectors := map[string]*qc.Vector{}
	if r.Vector != nil {
		vectors[vDense] = qc.NewVectorDense(unit(r.Vector))
		vectors[vRaw] = qc.NewVectorDense(r.Vector)
	}
	p[fHasText] = qc.NewValueBool(r.Content != "")
	p[fAsks] = qc.NewValueBool(driver.Asks(r.Content))
	if sp := r.Metadata[memory.SpeakerKey]; sp != "" {
		p[fSpeaker] = qc.NewValueString(sp)
	}
	if terms, indices, weights := d.textVector(r.Content); len(terms) > 0 {
		p[fTerms] = qc.NewValueString(" " + strings.Join(terms, " ") + " ")
		vectors[vText] = qc.NewVectorSparse(indices, weights)
	}
	return &qc.PointStruct{
		Id:      qc.NewID(PointID(d.coll, r.Identity.Tenant, r.ID)),
		Payload: p,
		Vectors: qc.NewVectorsMap(vectors),
	}, nil
}

// unit returns v divided by its length (vecmath.Normalize, in float64),
// so that Qdrant's own normalisation (in float32) of a Cosine vector
// leaves it as it is, and vectors of extreme values do not overflow. v is
// not all zeros (memory.CheckVector).
func unit(v []float32) []float32 {
	out := make([]float32, len(v))
	vecmath.Normalize(out, v)
	return out
}

// payloadReader reads typed values from a point's payload, remembering the
// first key that is missing or of the wrong type.
type payloadReader struct {
	p   map[string]*qc.Value
	bad string
}

func (pr *payloadReader) str(k string) string {
	v, ok := pr.p[k].GetKind().(*qc.Value_StringValue)
	if !ok {
		pr.fail(k)
		return ""
	}
	return v.StringValue
}

func (pr *payloadReader) optStr(k string) (string, bool) {
	if _, ok := pr.p[k]; !ok {
		return "", false
	}
	return pr.str(k), true
}

func (pr *payloadReader) int(k string) int64 {
	v, ok := pr.p[k].GetKind().(*qc.Value_IntegerValue)
	if !ok {
		pr.fail(k)
		return 0
	}
	return v.IntegerValue
}

func (pr *payloadReader) fail(k string) {
	if pr.bad == "" {
		pr.bad = k
	}
}

// identity reads the stored identity; ok is false when a field is
// missing or not in the stored form.
func (pr *payloadReader) identity() memory.Identity {
	var id memory.Identity
	for _, f := range identityFields {
		s := pr.str(f.name)
		if len(s) < len(idPrefix) || s[:len(idPrefix)] != idPrefix {
			pr.fail(f.name)
			continue
		}
		id = id.With(f.f, s[len(idPrefix):])
	}
	return id
}

// errNotRecord is the error for a point of the collection that is not a
// record in the driver's layout.
func errNotRecord(pt string, key string) error {
	return memory.Errorf(memory.ErrInvalidArgument, "qdrant: point %s is not a record of this driver (payload key %q)", pt, key)
}

// decode returns the record a point holds: its payload (at least
// recordFields) and its vectors (at least vRaw).
func decode(id *qc.PointId, payload map[string]*qc.Value, vectors *qc.VectorsOutput) (memory.Record, error) {
	pr := &payloadReader{p: payload}
	r, ok := decodeRecord(pr.str(fRecord))
	if !ok {
		return memory.Record{}, errNotRecord(pointString(id), fRecord)
	}
	r.Vector = rawVector(vectors)
	return r, nil
}

// rawVector returns the record's vector among a point's vectors, nil
// when it has none.
func rawVector(vectors *qc.VectorsOutput) []float32 {
	v := vectors.GetVectors().GetVectors()[vRaw]
	if v == nil {
		return nil
	}
	if dense := v.GetDense(); dense != nil {
		return dense.GetData()
	}
	return v.GetData() // servers before the dense field
}

// pointString returns a point id as text.
func pointString(id *qc.PointId) string {
	switch v := id.GetPointIdOptions().(type) {
	case *qc.PointId_Uuid:
		return v.Uuid
	case *qc.PointId_Num:
		return strconv.FormatUint(v.Num, 10)
	}
	return "?"
}
