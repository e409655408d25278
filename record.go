package memory

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Limits every driver enforces. Exceeding one is ErrTooLarge.
const (
	// MaxContentBytes is the largest Content of one record: 1 MiB.
	MaxContentBytes = 1 << 20
	// MaxIDBytes is the longest record id.
	MaxIDBytes = 128
	// MaxKeyBytes is the longest Key.
	MaxKeyBytes = 1024
	// MaxLabelBytes is the longest Label.
	MaxLabelBytes = 256
	// MaxMetadataEntries is the most metadata entries one record may carry.
	MaxMetadataEntries = 64
	// MaxMetadataBytes is the most bytes of metadata keys and values together.
	MaxMetadataBytes = 64 << 10
	// MaxBatch is the most records one Add or driver Put may carry.
	MaxBatch = 10000
	// MaxVectorDims is the most dimensions a Vector may have.
	MaxVectorDims = 4096
)

var idCounter atomic.Uint32

// NewID returns a fresh id that sorts by creation time: 32 hex digits made
// of the time in nanoseconds, a process-wide counter (so ids made within one
// nanosecond still sort in the order they were made) and random bits (so
// processes never collide).
func NewID(t time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[0:8], uint64(t.UnixNano()))
	binary.BigEndian.PutUint32(b[8:12], idCounter.Add(1))
	_, _ = rand.Read(b[12:16]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// ContentID returns the deterministic id of a record whose content defines
// its identity: the same kind, scope and parts always give the same id, so
// writing the same thing twice stores it once. It is the first 128 bits of
// a SHA-256 over length-prefixed fields, in hex.
func ContentID(kind Kind, scope Identity, parts ...string) string {
	h := sha256.New()
	var n [8]byte
	write := func(s string) {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	write(string(kind))
	for _, f := range fieldNames {
		write(scope.Get(f.f))
	}
	for _, p := range parts {
		write(p)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// NewTurn returns a conversation turn spoken by role, with a fresh id.
func NewTurn(id Identity, role Role, content string, now time.Time) Record {
	return Record{ID: NewID(now), Kind: KindTurn, Identity: id, Label: string(role), Content: content, Created: now}
}

// NewSummary returns a summary or digest line written by id about source
// (for step summaries, "<workflow>/<step>"), with a fresh id.
func NewSummary(id Identity, source, content string, now time.Time) Record {
	return Record{ID: NewID(now), Kind: KindSummary, Identity: id, Key: source, Content: content, Created: now}
}

// NewFact returns a long-term fact. Its id derives from the writer's
// identity and the content, so re-adding the same fact in the same scope
// replaces it rather than duplicating it.
func NewFact(id Identity, content string, now time.Time) Record {
	return Record{ID: ContentID(KindFact, id, content), Kind: KindFact, Identity: id, Content: content, Created: now}
}

// NewDocument returns a keyed JSON document (memory_key, memory_type,
// memory_json). Its id derives from the scope and key, so writing the same
// key in the same scope replaces the previous row.
func NewDocument(id Identity, key, memoryType, json string, now time.Time) Record {
	return Record{ID: ContentID(KindDocument, id, key), Kind: KindDocument, Identity: id, Key: key, Label: memoryType, Content: json, Created: now}
}

// Validate checks a record against the limits and formats every driver
// enforces; a document's Content must pass CheckJSON. It reports
// ErrInvalidArgument or ErrTooLarge.
func (r Record) Validate() error {
	switch {
	case r.ID == "":
		return Errorf(ErrInvalidArgument, "record id is empty")
	case len(r.ID) > MaxIDBytes:
		return Errorf(ErrTooLarge, "record id is %d bytes, the limit is %d", len(r.ID), MaxIDBytes)
	case !utf8.ValidString(r.ID):
		return Errorf(ErrInvalidArgument, "record id is not valid UTF-8")
	case strings.IndexByte(r.ID, 0) >= 0:
		return Errorf(ErrInvalidArgument, "record id contains a NUL byte")
	case !r.Kind.Valid():
		return Errorf(ErrInvalidArgument, "record %s has unknown kind %q", r.ID, string(r.Kind))
	case r.Created.IsZero():
		return Errorf(ErrInvalidArgument, "record %s has no creation time", r.ID)
	case !nanoTime(r.Created) || !r.Expires.IsZero() && !nanoTime(r.Expires):
		return Errorf(ErrInvalidArgument, "record %s has a time outside the years 1678 to 2262 (unix nanoseconds)", r.ID)
	case r.Tokens < 0:
		return Errorf(ErrInvalidArgument, "record %s has a negative token count", r.ID)
	}
	if err := r.Identity.Validate(); err != nil {
		return err
	}
	if err := checkText("content", r.ID, r.Content, MaxContentBytes); err != nil {
		return err
	}
	if r.Kind == KindDocument {
		if err := CheckJSON(r.Content); err != nil {
			e := err.(*Error)
			return Errorf(e.Kind, "record %s: %s", r.ID, e.Msg)
		}
	}
	if err := checkText("key", r.ID, r.Key, MaxKeyBytes); err != nil {
		return err
	}
	if err := checkText("label", r.ID, r.Label, MaxLabelBytes); err != nil {
		return err
	}
	if len(r.Metadata) > MaxMetadataEntries {
		return Errorf(ErrTooLarge, "record %s has %d metadata entries, the limit is %d", r.ID, len(r.Metadata), MaxMetadataEntries)
	}
	total := 0
	for k, v := range r.Metadata {
		if k == "" {
			return Errorf(ErrInvalidArgument, "record %s has an empty metadata key", r.ID)
		}
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return Errorf(ErrInvalidArgument, "record %s has metadata that is not valid UTF-8", r.ID)
		}
		if strings.IndexByte(k, 0) >= 0 || strings.IndexByte(v, 0) >= 0 {
			return Errorf(ErrInvalidArgument, "record %s has metadata that contains a NUL byte", r.ID)
		}
		total += len(k) + len(v)
	}
	if total > MaxMetadataBytes {
		return Errorf(ErrTooLarge, "record %s has %d bytes of metadata, the limit is %d", r.ID, total, MaxMetadataBytes)
	}
	if r.Vector != nil {
		if err := CheckVector(r.Vector); err != nil {
			e := err.(*Error)
			return Errorf(e.Kind, "record %s: %s", r.ID, e.Msg)
		}
	}
	return nil
}

// CheckVector validates a vector for storage or as a search query: at
// least one and at most MaxVectorDims values, every one finite, not all
// zero (cosine similarity is undefined for the zero vector). It reports
// ErrInvalidArgument, or ErrTooLarge for too many dimensions.
func CheckVector(v []float32) error {
	if len(v) == 0 {
		return Errorf(ErrInvalidArgument, "vector is empty")
	}
	if len(v) > MaxVectorDims {
		return Errorf(ErrTooLarge, "vector has %d dimensions, the limit is %d", len(v), MaxVectorDims)
	}
	zero := true
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return Errorf(ErrInvalidArgument, "vector value %d is %v, not a finite number", i, x)
		}
		if x != 0 {
			zero = false
		}
	}
	if zero {
		return Errorf(ErrInvalidArgument, "vector is all zeros")
	}
	return nil
}

// The instants an int64 of unix nanoseconds can hold.
var (
	minNanoTime = time.Unix(0, math.MinInt64)
	maxNanoTime = time.Unix(0, math.MaxInt64)
)

// UnixNanos returns t as unix nanoseconds, the form every driver stores
// times in, and false when t lies outside the years 1678 to 2262 that an
// int64 of nanoseconds can hold. Validate rejects records with such times.
func UnixNanos(t time.Time) (int64, bool) {
	if t.Before(minNanoTime) || t.After(maxNanoTime) {
		return 0, false
	}
	return t.UnixNano(), true
}

func nanoTime(t time.Time) bool { _, ok := UnixNanos(t); return ok }

func checkText(what, id, s string, limit int) error {
	if len(s) > limit {
		return Errorf(ErrTooLarge, "record %s %s is %d bytes, the limit is %d", id, what, len(s), limit)
	}
	if !utf8.ValidString(s) {
		return Errorf(ErrInvalidArgument, "record %s %s is not valid UTF-8", id, what)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return Errorf(ErrInvalidArgument, "record %s %s contains a NUL byte", id, what)
	}
	return nil
}
