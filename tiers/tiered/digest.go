package tiered

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/agentmem/memory"
)

// A session's digest is a chain of versions, one record each (kind
// memory.KindDigest), under an id derived from the session and the
// version: writing version v+1 is a create (a compare-and-swap expecting
// no record), so of two folds racing from version v exactly one stores
// v+1 and versions stay contiguous. Each version records the newest turn
// folded into it (the fold boundary: turns after it are the window) and
// the claim of the fold that wrote it.
const (
	// MetaThroughCreated and MetaThroughID name the newest turn a digest
	// version has folded: its creation time (unix nanoseconds) and id.
	MetaThroughCreated = "through_created"
	MetaThroughID      = "through_id"
	// MetaFoldedTurns counts the turns the fold that wrote a version
	// evicted.
	MetaFoldedTurns = "folded_turns"
	// MetaFold is the claim token of the fold that wrote a version.
	MetaFold = "fold"
)

// digest is a session's latest digest version; the zero digest is the
// state before the first fold.
type digest struct {
	rec     memory.Record
	version int64
	through boundary
}

// sessionKey is the identity that keys a session's window and digest:
// its tenant, principal and session.
func sessionKey(id memory.Identity) memory.Identity {
	return id.Only(memory.FieldTenant | memory.FieldUser | memory.FieldSession)
}

// digestID is the record id of version v of the digest of id's session.
func digestID(id memory.Identity, v int64) string {
	return memory.ContentID(memory.KindDigest, sessionKey(id), "version", strconv.FormatInt(v, 10))
}

// versionKey is the Key of version v: zero-padded, so keys sort as
// versions do.
func versionKey(v int64) string { return fmt.Sprintf("%020d", v) }

// latestDigest returns the latest digest version of id's session that id
// may read (memory.LevelSession).
func (m *Memory) latestDigest(ctx context.Context, id memory.Identity) (digest, error) {
	recs, err := m.st.List(ctx, id, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindDigest}, Limit: 1})
	if err != nil || len(recs) == 0 {
		return digest{}, err
	}
	return parseDigest(recs[0])
}

// parseDigest reads a digest version's record.
func parseDigest(r memory.Record) (digest, error) {
	v, err := strconv.ParseInt(r.Key, 10, 64)
	created, err2 := strconv.ParseInt(r.Metadata[MetaThroughCreated], 10, 64)
	if err != nil || err2 != nil || v < 1 || r.Metadata[MetaThroughID] == "" {
		return digest{}, memory.Errorf(memory.ErrInvalidArgument, "tiered: digest record %q is not a digest version this package wrote", r.ID)
	}
	return digest{rec: r, version: v, through: boundary{created, r.Metadata[MetaThroughID]}}, nil
}

// nextDigest returns version prev.version+1 of the digest of id's
// session: text, folding turns up to through, written by the fold whose
// claim token is fold. Its creation time follows the previous version's,
// so the newest record is the latest version.
func (m *Memory) nextDigest(id memory.Identity, prev digest, text string, through boundary, folded int, fold string) memory.Record {
	v := prev.version + 1
	now := m.st.Now()
	if !prev.rec.Created.IsZero() && !now.After(prev.rec.Created) {
		now = prev.rec.Created.Add(time.Nanosecond)
	}
	return memory.Record{
		ID: digestID(id, v), Kind: memory.KindDigest, Identity: id, Key: versionKey(v), Content: text, Created: now,
		Metadata: map[string]string{
			MetaThroughCreated: strconv.FormatInt(through.created, 10),
			MetaThroughID:      through.id,
			MetaFoldedTurns:    strconv.Itoa(folded),
			MetaFold:           fold,
		},
	}
}

// Digest returns the latest digest of id's session and whether there is
// one. Its Key is its version (zero-padded); MetaFoldedTurns and the
// fold boundary are in its Metadata.
func (m *Memory) Digest(ctx context.Context, id memory.Identity) (memory.Record, bool, error) {
	if err := m.enter(ctx); err != nil {
		return memory.Record{}, false, err
	}
	defer m.leave()
	d, err := m.latestDigest(ctx, id)
	return d.rec, d.version > 0, err
}

// Digests returns the digest versions of id's session that are kept
// (Options.DigestRetention), newest first.
func (m *Memory) Digests(ctx context.Context, id memory.Identity) ([]memory.Record, error) {
	if err := m.enter(ctx); err != nil {
		return nil, err
	}
	defer m.leave()
	return m.st.List(ctx, id, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindDigest}})
}

// prune deletes the versions of id's session's digest older than the
// retention, below version latest.
func (m *Memory) prune(ctx context.Context, id memory.Identity, latest int64) error {
	keep := int64(m.opt.DigestRetention)
	if latest <= keep {
		return nil
	}
	var ids []string
	// The version that left the retention with this one, and the few
	// before it a failed prune may have left.
	for v := latest - keep; v >= 1 && len(ids) < 4; v-- {
		ids = append(ids, digestID(id, v))
	}
	dq, err := m.st.Query(id, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindDigest}})
	if err != nil {
		return err
	}
	dq.IDs = ids
	_, err = m.st.DeleteQuery(ctx, dq)
	return err
}
