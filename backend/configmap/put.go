package configmap

import (
	"context"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
)

// Put stores a batch of records, all or nothing, in the ConfigMap of their
// agent (see ObjectName). Every record needs an agent
// (memory.ErrIncompleteScope otherwise), and one batch goes to one
// ConfigMap: records of agents with different object names in one batch
// are memory.ErrInvalidArgument, since Kubernetes cannot update two
// objects atomically.
//
// Each attempt reads the agent's ConfigMap (Get) and lists the namespace's
// other agent-memory ConfigMaps (List calls by label) to keep ids unique
// and the vector dimension single across the whole store, applies the
// batch and writes the ConfigMap back carrying the resourceVersion it read
// (Create when it is new). A
// lost race is retried with jittered backoff, at most MaxAttempts times,
// then memory.ErrConflict. Two writers racing on one id with different
// agents, which land in two ConfigMaps, are not detected.
//
// The write also removes the ConfigMap's expired entries (not the
// batch's own), so the data a controller loads never carries an expired
// line past the next write; Sweep removes them everywhere. When the
// ConfigMap would exceed MaxObjectBytes, the oldest entries that
// Options.MaxEntries and Options.TTL allow dropping are dropped first,
// never the batch's own; if it still does not fit, Put fails with
// memory.ErrTooLarge and stores nothing.
func (d *Driver) Put(ctx context.Context, recs []memory.Record) error {
	if err := d.ready(ctx); err != nil {
		return err
	}
	if err := backend.CheckPut(recs); err != nil {
		return err
	}
	if len(recs) == 0 {
		return nil
	}
	name, err := batchObject(recs)
	if err != nil {
		return err
	}
	if _, err := d.clock.Nanos(); err != nil {
		return err
	}
	return d.retry(ctx, "writing ConfigMap "+d.ns+"/"+name, func() error {
		target, err := d.load(ctx, name)
		if err != nil {
			return err
		}
		others, err := d.loadAll(ctx)
		if err != nil {
			return err
		}
		dims := 0
		for _, o := range others {
			if o.name == name {
				continue
			}
			for _, r := range recs {
				if _, ok := o.recs[r.ID]; ok {
					return memory.Errorf(memory.ErrConflict, "record %q is stored in ConfigMap %s with another identity", r.ID, o.name)
				}
			}
			if dims, err = storedDims(o, dims); err != nil {
				return err
			}
		}
		if dims, err = storedDims(target, dims); err != nil {
			return err
		}
		if _, err := backend.BatchDims(recs, dims); err != nil {
			return err
		}
		if err := apply(target, recs); err != nil {
			return err
		}
		fresh := make(map[string]bool, len(recs))
		for _, r := range recs {
			fresh[r.ID] = true
		}
		d.purge(target, fresh)
		if err := d.fit(target, fresh); err != nil {
			return err
		}
		return d.store(ctx, target)
	})
}

// apply puts recs into o: a new id at version 1, a replacement (same id,
// same identity) at the stored version plus one, the later of two records
// with one id winning. An id stored with another identity is
// memory.ErrConflict.
func apply(o *object, recs []memory.Record) error {
	stored := make(map[string]memory.Record, len(recs))
	for _, r := range recs {
		if old, ok := o.recs[r.ID]; ok {
			stored[r.ID] = old
		}
	}
	for _, r := range recs {
		old, ok := stored[r.ID]
		if ok && old.Identity != r.Identity {
			return memory.Errorf(memory.ErrConflict, "record %q is stored with another identity", r.ID)
		}
		r.Version = 1
		if ok {
			r.Version = old.Version + 1
		}
		o.recs[r.ID] = r
	}
	return nil
}

// batchObject returns the one object name every record of a batch maps to.
func batchObject(recs []memory.Record) (string, error) {
	name := ""
	for _, r := range recs {
		n, err := ObjectName(r.Identity.Agent)
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

// fit makes o fit in MaxObjectBytes: while its ConfigMap is too large it
// drops the oldest entries that may go — older than the TTL or beyond the
// newest MaxEntries — but never one of the batch (fresh). When
// nothing more may go, it fails with memory.ErrTooLarge.
func (d *Driver) fit(o *object, fresh map[string]bool) error {
	now := d.clock.Now()
	var order []memory.Record
	for _, r := range o.recs {
		order = append(order, r)
	}
	sortNewest(order)
	// order is newest first; candidates are taken from its end.
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
			for next >= 0 && !d.droppable(order[next], next, fresh, now) {
				next--
			}
			if next < 0 {
				return memory.Errorf(memory.ErrTooLarge, "ConfigMap %s/%s would be %d bytes, the limit is %d, and no older entry may be dropped (MaxEntries %d, TTL %s)",
					d.ns, o.name, n, MaxObjectBytes, d.max, d.ttl)
			}
			r := order[next]
			delete(o.recs, r.ID)
			dropped += entryBytes(r)
			d.log.Debug("configmap entry dropped to fit the object limit", "configmap", o.name, "id", r.ID, "created", r.Created)
			next--
		}
	}
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

// droppable reports whether the entry r, at index rank of its object's
// entries newest first, may be dropped to make room.
func (d *Driver) droppable(r memory.Record, rank int, fresh map[string]bool, now time.Time) bool {
	switch {
	case fresh[r.ID]:
		return false
	case d.ttl > 0 && !now.Before(r.Created.Add(d.ttl)):
		return true
	case d.max > 0 && rank >= d.max:
		return true
	}
	return false
}
