package qdrant

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"
	"time"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/agentmem/memory"
)

// Payload keys. None holds a '.' or '[', which Qdrant reads as paths.
const (
	fTenant   = "tenant"
	fRecordID = "record_id"
	fKind     = "kind"
	fLabel    = "label"
	fKey      = "key"
	fContent  = "content"
	fMeta     = "metadata"
	fCreated  = "created"
	fExpires  = "expires"
	fExpSec   = "expires_s"
	fExpNano  = "expires_ns"
	fTokens   = "tokens"
	fVersion  = "version"
	fVector   = "vector"
	fDead     = "dead"
	fDel      = "del"
	fDelAt    = "del_at"

	// The meta point: the store's vector dimension.
	fMetaKind = "agentmem_meta"
	fDims     = "dims"
)

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

// metaPointID is the id of the point holding the store's vector
// dimension.
func metaPointID(collection string) string {
	return hashUUID("agentmem/qdrant/meta/v1", collection)
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
		fRecordID: qc.NewValueString(r.ID),
		fKind:     qc.NewValueString(string(r.Kind)),
		fLabel:    qc.NewValueString(r.Label),
		fKey:      qc.NewValueString(r.Key),
		fContent:  qc.NewValueString(r.Content),
		fCreated:  qc.NewValueInt(created),
		fTokens:   qc.NewValueInt(int64(r.Tokens)),
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
		p[fExpires] = qc.NewValueInt(exp)
		p[fExpSec], p[fExpNano] = qc.NewValueInt(s), qc.NewValueInt(ns)
	}
	if len(r.Metadata) > 0 {
		b, err := json.Marshal(r.Metadata)
		if err != nil {
			return nil, memory.Wrap(memory.ErrInvalidArgument, err, "record "+r.ID+": metadata")
		}
		p[fMeta] = qc.NewValueString(string(b))
	}
	if r.Vector != nil {
		p[fVector] = qc.NewValueString(encodeVector(r.Vector))
	}
	return &qc.PointStruct{
		Id:      qc.NewID(PointID(d.coll, r.Identity.Tenant, r.ID)),
		Payload: p,
		Vectors: qc.NewVectorsMap(map[string]*qc.Vector{}),
	}, nil
}

// encodeVector keeps a vector bit for bit: its float32 values little-endian,
// in standard base64.
func encodeVector(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// decodeVector reverses encodeVector.
func decodeVector(s string) ([]float32, bool) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%4 != 0 || len(b) == 0 {
		return nil, false
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, true
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

// decode returns the record a point's payload holds.
func decode(pt *qc.RetrievedPoint) (memory.Record, error) {
	pr := &payloadReader{p: pt.GetPayload()}
	r := memory.Record{
		ID:       pr.str(fRecordID),
		Kind:     memory.Kind(pr.str(fKind)),
		Identity: pr.identity(),
		Label:    pr.str(fLabel),
		Key:      pr.str(fKey),
		Content:  pr.str(fContent),
		Created:  time.Unix(0, pr.int(fCreated)).UTC(),
		Tokens:   int(pr.int(fTokens)),
		Version:  pr.int(fVersion),
	}
	if _, ok := pr.p[fExpires]; ok {
		r.Expires = time.Unix(0, pr.int(fExpires)).UTC()
	}
	if m, ok := pr.optStr(fMeta); ok && pr.bad == "" {
		if err := json.Unmarshal([]byte(m), &r.Metadata); err != nil {
			pr.fail(fMeta)
		}
	}
	if s, ok := pr.optStr(fVector); ok && pr.bad == "" {
		v, ok := decodeVector(s)
		if !ok {
			pr.fail(fVector)
		}
		r.Vector = v
	}
	if pr.bad != "" {
		return memory.Record{}, errNotRecord(pointString(pt.GetId()), pr.bad)
	}
	return r, nil
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
