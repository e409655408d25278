package recindex

import (
	"maps"
	"slices"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/lexical"
)

// Entry is one stored record in compact form, with the driver's Extra. Its
// identity is its Writer's, set when the Index stores it.
type Entry[E, W any] struct {
	ID       string
	Kind     memory.Kind
	Label    string
	Key      string
	Content  string
	Metadata map[string]string
	Created  int64 // unix nanoseconds
	Expires  int64 // unix nanoseconds; meaningful when HasExpires
	Tokens   int
	Version  int64
	Vector   []float32
	// Extra is the driver's own data about the record.
	Extra E

	writer     *Writer[E, W]
	sameHash   *Entry[E, W] // the next entry whose key hashes alike; see idmap
	HasExpires bool         // the record expires, at Expires
	dead       bool         // removed; it stays in posting lists until they compact
}

// Writer is one distinct identity, shared by all the records written under
// it, with the driver's Extra.
type Writer[E, W any] struct {
	Identity memory.Identity
	// Extra is the driver's own data about the writer.
	Extra W

	lists []*postings[E, W]            // the tenant's list, then one per set indexed field
	text  *lexical.Index[*Entry[E, W]] // its records' content, while texts are on; see text.go
}

// NewEntry returns r's fields in compact form at the given version, with
// its own copies of the metadata and vector, to be stored with Put. The
// caller has validated r.
func (x *Index[E, W]) NewEntry(r memory.Record, version int64) *Entry[E, W] {
	e := &Entry[E, W]{ID: r.ID, Kind: r.Kind, Label: r.Label, Key: r.Key, Content: r.Content,
		Metadata: cloneMetadata(r.Metadata), Created: r.Created.UnixNano(), Tokens: r.Tokens,
		Version: version, Vector: slices.Clone(r.Vector)}
	if !r.Expires.IsZero() {
		e.Expires, e.HasExpires = r.Expires.UnixNano(), true
	}
	return e
}

// HashKey returns the tenant and id e is found under (idmap.Element).
func (e *Entry[E, W]) HashKey() (tenant, id string) { return e.writer.Identity.Tenant, e.ID }

// SameHash returns e's link in its idmap slot's chain (idmap.Element).
func (e *Entry[E, W]) SameHash() **Entry[E, W] { return &e.sameHash }

// Writer returns the writer of a stored entry.
func (e *Entry[E, W]) Writer() *Writer[E, W] { return e.writer }

// Record returns the stored Record, times in UTC, with its own metadata map
// and vector.
func (e *Entry[E, W]) Record() memory.Record {
	r := memory.Record{ID: e.ID, Kind: e.Kind, Identity: e.writer.Identity, Label: e.Label, Key: e.Key,
		Content: e.Content, Metadata: cloneMetadata(e.Metadata), Created: time.Unix(0, e.Created).UTC(),
		Tokens: e.Tokens, Version: e.Version, Vector: slices.Clone(e.Vector)}
	if e.HasExpires {
		r.Expires = time.Unix(0, e.Expires).UTC()
	}
	return r
}

// Ref returns the driver.Ref of the stored record, its time in UTC as
// Record gives it, without copying the record.
func (e *Entry[E, W]) Ref() driver.Ref {
	return driver.Ref{ID: e.ID, Kind: e.Kind, Identity: e.writer.Identity, Created: time.Unix(0, e.Created).UTC(),
		Speaker: e.Metadata[memory.SpeakerKey], Asks: driver.Asks(e.Content)}
}

// Expired reports whether e has expired at now (unix nanoseconds).
func (e *Entry[E, W]) Expired(now int64) bool { return e.HasExpires && now >= e.Expires }

// MatchesRest reports whether e passes q's kinds, key and ids; the
// identity filter is the caller's to decide, once per writer.
func (e *Entry[E, W]) MatchesRest(q *driver.Query) bool { return q.MatchesRest(e.ID, e.Kind, e.Key) }

// Compare orders entries as List returns them: negative when e comes
// before o (it is newer, or as new with a greater id), positive when it
// comes after, zero only for one entry. Entries of different tenants that
// agree on both are ordered by tenant.
func (e *Entry[E, W]) Compare(o *Entry[E, W]) int {
	switch {
	case e == o:
		return 0
	case e.Created != o.Created:
		return sign(e.Created < o.Created)
	case e.ID != o.ID:
		return sign(e.ID < o.ID)
	}
	return sign(e.writer.Identity.Tenant < o.writer.Identity.Tenant)
}

// sign is 1 when after, else -1.
func sign(after bool) int {
	if after {
		return 1
	}
	return -1
}

// newer reports whether a comes before b in List order, within one tenant.
func newer[E, W any](a, b *Entry[E, W]) bool {
	if a.Created != b.Created {
		return a.Created > b.Created
	}
	return a.ID > b.ID
}

func cloneMetadata(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}
