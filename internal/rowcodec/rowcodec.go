// Package rowcodec encodes what the in-process caches keep of a record
// beside its text or its vector — its writer's identity, and the fields a
// search tests and a driver.Ref carries — in the caches' snapshots (internal/textcache,
// internal/veccache): the id, kind, key, creation time, expiry, speaker
// and flags (1: the content asks), strings as a uvarint length and the
// bytes, times as zig-zag varints, flags as a uvarint (package varint).
package rowcodec

import (
	"encoding/binary"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/varint"
	"github.com/agentmem/memory/internal/writers"
)

// Fields are what the text cache and the vector copy keep of a record
// beside its writer and its text or vector (each cache's Row holds them,
// with its own bookkeeping), and what their snapshots encode of it: what
// a query's kinds, key, ids and expiry test, List order for ties, and
// the rest of the record's driver.Ref.
type Fields struct {
	ID      string
	Kind    memory.Kind
	Key     string
	Created int64 // unix nanoseconds
	Expires int64 // unix nanoseconds; 0: never
	Speaker string
	Asks    bool
}

// MinBytes is the fewest bytes a row encodes in: empty strings, two
// small times and the flags, a byte each.
const MinBytes = 7

const flagAsks = 1 // Fields.Asks

// Append appends f's encoding to dst and returns it.
func Append(dst []byte, f *Fields) []byte {
	dst = varint.AppendString(dst, f.ID)
	dst = varint.AppendString(dst, string(f.Kind))
	dst = varint.AppendString(dst, f.Key)
	dst = binary.AppendVarint(dst, f.Created)
	dst = binary.AppendVarint(dst, f.Expires)
	dst = varint.AppendString(dst, f.Speaker)
	var flags uint64
	if f.Asks {
		flags |= flagAsks
	}
	return binary.AppendUvarint(dst, flags)
}

// Decoder reads rows, keeping one copy of each kind and each speaker's
// name: a store has few, held by thousands of records. Its maps are made
// on first use; a caller may set them to share its own.
type Decoder struct {
	Kinds    map[string]memory.Kind
	Speakers map[string]string
}

// Read decodes the next row off r into f. It refuses, with r's Fail, a
// row cut short or malformed, and flags it does not know.
func (d *Decoder) Read(r *varint.Reader, f *Fields) error {
	var err error
	if f.ID, err = r.String("an id"); err != nil {
		return err
	}
	kind, err := r.Bytes("a kind")
	if err != nil {
		return err
	}
	if f.Kind = d.Kinds[string(kind)]; f.Kind == "" && len(kind) > 0 {
		if d.Kinds == nil {
			d.Kinds = map[string]memory.Kind{}
		}
		f.Kind = memory.Kind(kind)
		d.Kinds[string(f.Kind)] = f.Kind
	}
	if f.Key, err = r.String("a key"); err != nil {
		return err
	}
	if f.Created, err = r.Varint("a creation time"); err != nil {
		return err
	}
	if f.Expires, err = r.Varint("an expiry"); err != nil {
		return err
	}
	speaker, err := r.Bytes("a speaker")
	if err != nil {
		return err
	}
	f.Speaker = ""
	if len(speaker) > 0 {
		if f.Speaker = d.Speakers[string(speaker)]; f.Speaker == "" {
			if d.Speakers == nil {
				d.Speakers = map[string]string{}
			}
			f.Speaker = string(speaker)
			d.Speakers[f.Speaker] = f.Speaker
		}
	}
	flags, err := r.Uvarint("flags")
	if err != nil {
		return err
	}
	if flags&^flagAsks != 0 {
		return r.Fail("flags %#x of record %q", flags, f.ID)
	}
	f.Asks = flags&flagAsks != 0
	return nil
}

// AppendIdentity appends a writer's identity, its fields in the order of
// writers.Fields, to dst and returns it.
func AppendIdentity(dst []byte, w memory.Identity) []byte {
	for _, s := range writers.Fields(&w) {
		dst = varint.AppendString(dst, *s)
	}
	return dst
}

// ReadIdentity reads an identity AppendIdentity wrote off r.
func ReadIdentity(r *varint.Reader) (memory.Identity, error) {
	var w memory.Identity
	for _, s := range writers.Fields(&w) {
		var err error
		if *s, err = r.String("an identity"); err != nil {
			return w, err
		}
	}
	return w, nil
}

// Of returns the Fields of rec.
func Of(rec memory.Record) Fields {
	f := Fields{ID: rec.ID, Kind: rec.Kind, Key: rec.Key, Created: rec.Created.UnixNano(),
		Speaker: rec.Metadata[memory.SpeakerKey], Asks: driver.Asks(rec.Content)}
	if !rec.Expires.IsZero() {
		f.Expires = rec.Expires.UnixNano()
	}
	return f
}

// Ref returns the driver.Ref of the record f is, written by w.
func (f *Fields) Ref(w memory.Identity) driver.Ref {
	return driver.Ref{ID: f.ID, Kind: f.Kind, Identity: w, Created: time.Unix(0, f.Created).UTC(), Speaker: f.Speaker, Asks: f.Asks}
}
