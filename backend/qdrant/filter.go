package qdrant

import (
	qc "github.com/qdrant/go-client/qdrant"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// scopeConditions translates q's filter, kinds, key and ids into Qdrant
// conditions, all of which must hold: a keyword match of each identity
// field the filter matches on, the kinds as one match-any, the key, and
// the ids as the points they name (ids are per tenant, and every query
// matches on tenant, so each id names one point). Limit is not a
// condition.
func (d *Driver) scopeConditions(q driver.Query) []*qc.Condition {
	var must []*qc.Condition
	for _, f := range identityFields {
		if q.Filter.Match.Has(f.f) {
			must = append(must, qc.NewMatchKeyword(f.name, idValue(q.Filter.Identity.Get(f.f))))
		}
	}
	if len(q.Kinds) > 0 {
		kinds := make([]string, len(q.Kinds))
		for i, k := range q.Kinds {
			kinds[i] = string(k)
		}
		must = append(must, qc.NewMatchKeywords(fKind, kinds...))
	}
	if q.Key != "" {
		must = append(must, qc.NewMatchKeyword(fKey, q.Key))
	}
	if len(q.IDs) > 0 {
		ids := make([]*qc.PointId, len(q.IDs))
		for i, id := range q.IDs {
			ids[i] = qc.NewID(PointID(d.coll, q.Filter.Identity.Tenant, id))
		}
		must = append(must, qc.NewHasID(ids...))
	}
	return must
}

// notMarked holds for a point no Delete or Sweep has marked: every read
// and every mark carries it, so a marked point is gone for readers from
// the moment it is marked.
func notMarked() *qc.Condition { return qc.NewMatchBool(fDead, false) }

// liveAt holds for a record unexpired at now (unix nanoseconds): expires
// absent (stored as neverSec) or after now, compared as whole seconds and
// then nanoseconds, since float64 range bounds cannot hold nanoseconds
// since 1970 exactly.
func liveAt(now int64) *qc.Condition { return expiryAt(now, false) }

// expiredAt holds for a record expired at now: expires <= now, the
// complement of liveAt among records.
func expiredAt(now int64) *qc.Condition { return expiryAt(now, true) }

// expiryAt is liveAt, or expiredAt when expired is set.
func expiryAt(now int64, expired bool) *qc.Condition {
	s, ns := splitNanos(now)
	sec, nano := &qc.Range{Gt: qc.PtrOf(float64(s))}, &qc.Range{Gt: qc.PtrOf(float64(ns))}
	if expired {
		sec, nano = &qc.Range{Lt: qc.PtrOf(float64(s))}, &qc.Range{Lte: qc.PtrOf(float64(ns))}
	}
	return qc.NewFilterAsCondition(&qc.Filter{Should: []*qc.Condition{
		qc.NewRange(fExpSec, sec),
		qc.NewFilterAsCondition(&qc.Filter{Must: []*qc.Condition{
			qc.NewMatchInt(fExpSec, s),
			qc.NewRange(fExpNano, nano),
		}}),
	}})
}

// listFilter is the filter of List at now: q, unmarked and unexpired.
func (d *Driver) listFilter(q driver.Query, now int64) *qc.Filter {
	return &qc.Filter{Must: append(d.scopeConditions(q), notMarked(), liveAt(now))}
}

// deleteFilter is the filter of Delete's mark: q and unmarked, expired or
// not.
func (d *Driver) deleteFilter(q driver.Query) *qc.Filter {
	return &qc.Filter{Must: append(d.scopeConditions(q), notMarked())}
}

// sweepFilter is the filter of Sweep's mark: every unmarked record
// expired at now, in every tenant.
func sweepFilter(now int64) *qc.Filter {
	return &qc.Filter{Must: []*qc.Condition{notMarked(), expiredAt(now)}}
}

// identityConditions hold for a point stored by exactly id.
func identityConditions(id memory.Identity) []*qc.Condition {
	out := make([]*qc.Condition, len(identityFields))
	for i, f := range identityFields {
		out[i] = qc.NewMatchKeyword(f.name, idValue(id.Get(f.f)))
	}
	return out
}
