package configmap

import (
	"context"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// Put stores a batch of records, all or nothing, in the ConfigMap of their
// agent (see ObjectName). Every record needs an agent
// (memory.ErrIncompleteScope otherwise) of a form ParseAgent accepts
// (memory.ErrInvalidArgument otherwise) in the driver's namespace
// (memory.ErrPermissionDenied otherwise); all three are checked before
// anything is read or written. One batch goes to one ConfigMap: records of
// agents with different object names in one batch are
// memory.ErrInvalidArgument, since Kubernetes cannot update two objects
// atomically.
//
// Each attempt lists the namespace's agent-memory ConfigMaps (List calls
// by label) — the agent's own, and the others to keep each tenant's ids
// unique and the vector dimension single across the whole store; reads the agent's with
// a Get when the listing lacks it (it is new, or was made without the
// label); applies the batch and writes the agent's ConfigMap back
// carrying the resourceVersion it read (Create when it is new). A lost
// race is retried with jittered backoff for as long as the context and
// Options.RetryTimeout allow (see retry). Two writers racing on one id
// with different agents, which land in two ConfigMaps, are not detected.
//
// The write also removes the ConfigMap's expired entries (not the
// batch's own), so the data a controller loads never carries an expired
// line past the next write; Sweep removes them everywhere. When the
// ConfigMap would exceed MaxObjectBytes, the oldest entries that
// Options.MaxEntries and Options.TTL allow dropping are dropped first —
// only entries of the batch's own scopes (see fit), never the batch's
// own; if it still does not fit, Put fails with memory.ErrTooLarge and
// stores nothing.
func (d *Driver) Put(ctx context.Context, recs []memory.Record) error {
	if err := d.ready(ctx); err != nil {
		return err
	}
	if err := driver.CheckPut(recs); err != nil {
		return err
	}
	if len(recs) == 0 {
		return nil
	}
	name, err := d.batchObject(recs)
	if err != nil {
		return err
	}
	if _, err := d.clock.Nanos(); err != nil {
		return err
	}
	return d.retry(ctx, "writing ConfigMap "+d.ns+"/"+name, func() error {
		all, err := d.loadAll(ctx)
		if err != nil {
			return err
		}
		var target *object
		dims := 0
		for _, o := range all {
			if o.name == name {
				target = o
				continue
			}
			for _, r := range recs {
				if _, ok := o.recs[keyOf(r)]; ok {
					return driver.HeldByAnother(r.ID) // by an identity of another agent
				}
			}
			if dims, err = storedDims(o, dims); err != nil {
				return err
			}
		}
		if target == nil {
			// Not listed: new, or made without the driver's label (which
			// the write adds).
			if target, err = d.load(ctx, name); err != nil {
				return err
			}
		}
		if dims, err = storedDims(target, dims); err != nil {
			return err
		}
		if _, err := driver.BatchDims(recs, dims); err != nil {
			return err
		}
		if err := apply(target, recs); err != nil {
			return err
		}
		fresh := make(map[recordKey]bool, len(recs))
		for _, r := range recs {
			fresh[keyOf(r)] = true
		}
		d.purge(target, fresh)
		if err := d.fit(target, fresh); err != nil {
			return err
		}
		return d.store(ctx, target)
	})
}

// apply puts recs into o: a new id of a tenant at version 1, a
// replacement (same tenant and id, same identity) at the version before
// it plus one — an id repeated in the batch counts each time — the later
// of two records with one id winning. An id its tenant holds with another
// identity is driver.HeldByAnother's memory.ErrPermissionDenied.
func apply(o *object, recs []memory.Record) error {
	stored := make(map[recordKey]memory.Record, len(recs))
	for _, r := range recs {
		if old, ok := o.recs[keyOf(r)]; ok {
			stored[keyOf(r)] = old
		}
	}
	for _, r := range recs {
		k := keyOf(r)
		if old, ok := stored[k]; ok && old.Identity != r.Identity {
			return driver.HeldByAnother(r.ID)
		}
		r.Version = 1
		if prev, ok := o.recs[k]; ok {
			r.Version = prev.Version + 1
		}
		o.recs[k] = r
	}
	return nil
}

// batchObject returns the one object name every record of a batch maps to.
func (d *Driver) batchObject(recs []memory.Record) (string, error) {
	name := ""
	for _, r := range recs {
		n, err := d.ObjectName(r.Identity.Agent)
		if err != nil {
			return "", err
		}
		if name != "" && n != name {
			return "", memory.Errorf(memory.ErrInvalidArgument, "one batch writes ConfigMaps %s and %s; a batch must stay within one agent's ConfigMap", name, n)
		}
		name = n
	}
	return name, nil
}

// storedDims returns the vector dimension of o's records, checked against
// dims (the dimension seen so far, zero for none).
func storedDims(o *object, dims int) (int, error) {
	for _, r := range o.recs {
		if r.Vector == nil {
			continue
		}
		if dims == 0 {
			dims = len(r.Vector)
		} else if len(r.Vector) != dims {
			return 0, memory.Errorf(memory.ErrInvalidArgument, "ConfigMap %s holds vectors of %d and %d dimensions", o.name, dims, len(r.Vector))
		}
	}
	return dims, nil
}

// scopeKey is the scope the driver's eviction works within: the tenant,
// user and agent of a record — memory.LevelAgent's fields, the scope the
// summary tier shares and prunes its summaries at by default. Sessions,
// instances and squads of one scope are one history; different tenants
// or users writing as one agent are not, although they share its
// ConfigMap.
type scopeKey struct{ tenant, user, agent string }

// scopeOf returns the eviction scope of r.
func scopeOf(r memory.Record) scopeKey {
	return scopeKey{r.Identity.Tenant, r.Identity.User, r.Identity.Agent}
}

// fit makes o fit in MaxObjectBytes: while its ConfigMap is too large it
// drops the oldest entries that may go — older than the TTL, or beyond
// the newest MaxEntries of their scope — but only entries of a scope the
// batch (fresh) writes, and never one of the batch itself. One scope's
// writes thus never drop another scope's entries, however full the shared
// ConfigMap is. When nothing more may go, it fails with
// memory.ErrTooLarge.
func (d *Driver) fit(o *object, fresh map[recordKey]bool) error {
	now := d.clock.Now()
	writing := make(map[scopeKey]bool)
	for id := range fresh {
		writing[scopeOf(o.recs[id])] = true
	}
	var order []memory.Record
	for _, r := range o.recs {
		order = append(order, r)
	}
	sortNewest(order)
	// rank is each entry's position among its scope's entries, newest
	// first; order is newest first and candidates are taken from its end.
	rank := make([]int, len(order))
	seen := make(map[scopeKey]int)
	for i, r := range order {
		k := scopeOf(r)
		rank[i] = seen[k]
		seen[k]++
	}
	next := len(order) - 1
	for {
		cm, err := o.encode(d.ns)
		if err != nil {
			return err
		}
		n, err := size(cm)
		if err != nil {
			return err
		}
		if n <= MaxObjectBytes {
			return nil
		}
		// Drop enough entries, by their estimated share of the object,
		// to cover the excess; then measure again.
		excess, dropped := n-MaxObjectBytes, 0
		for dropped < excess {
			for next >= 0 && !(writing[scopeOf(order[next])] && d.droppable(order[next], rank[next], fresh, now)) {
				next--
			}
			if next < 0 {
				return d.tooLarge(o, n, writing)
			}
			r := order[next]
			delete(o.recs, keyOf(r))
			dropped += entryBytes(r)
			d.log.Debug("configmap entry dropped to fit the object limit", "configmap", o.name, "id", r.ID, "created", r.Created)
			next--
		}
	}
}

// tooLarge is fit's failure: o would be n bytes and nothing more may be
// dropped. It says how much of the object other scopes' entries take, so
// a writer crowded out by them can tell.
func (d *Driver) tooLarge(o *object, n int, writing map[scopeKey]bool) error {
	others := 0
	for _, r := range o.recs {
		if !writing[scopeOf(r)] {
			others += entryBytes(r)
		}
	}
	return memory.Errorf(memory.ErrTooLarge, "ConfigMap %s/%s would be %d bytes, the limit is %d, and no older entry of the writer's scope may be dropped (MaxEntries %d, TTL %s); entries of other tenants and users writing as this agent, which a write never drops, take at least %d bytes of it",
		d.ns, o.name, n, MaxObjectBytes, d.max, d.ttl, others)
}

// entryBytes estimates from below what one entry adds to its ConfigMap's
// JSON: its two keys and its content (at least once each), and its record
// (base64, four bytes for every three).
func entryBytes(r memory.Record) int {
	const keyBytes = 20 + 1 + 32 + 5
	rec := 40 + len(r.ID) + len(r.Label) + len(r.Key) + 2*len(r.Vector)
	for k, v := range r.Metadata {
		rec += len(k) + len(v) + 6
	}
	return 2*keyBytes + len(r.Content) + rec*4/3
}

// droppable reports whether the entry r, at index rank of its scope's
// entries newest first, may be dropped to make room.
func (d *Driver) droppable(r memory.Record, rank int, fresh map[recordKey]bool, now time.Time) bool {
	switch {
	case fresh[keyOf(r)]:
		return false
	case d.ttl > 0 && !now.Before(r.Created.Add(d.ttl)):
		return true
	case d.max > 0 && rank >= d.max:
		return true
	}
	return false
}
