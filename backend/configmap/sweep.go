package configmap

import (
	"context"
	"time"

	"github.com/agentmem/memory/backend/driver"
)

var _ driver.Sweeper = (*Driver)(nil)

// Sweep deletes every record expired at the driver's clock from every
// ConfigMap the driver keeps in the namespace, and reports how many it
// removed. Each ConfigMap is rewritten with its own bounded
// optimistic-concurrency retries; an emptied one is deleted.
func (d *Driver) Sweep(ctx context.Context) (int64, error) {
	if err := d.ready(ctx); err != nil {
		return 0, err
	}
	if _, err := d.clock.Nanos(); err != nil {
		return 0, err
	}
	objs, err := d.loadAll(ctx)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, o := range objs {
		if o.expired(d.clock.Now(), nil) == 0 {
			continue
		}
		var removed int64
		first := true
		err := d.retry(ctx, "sweeping ConfigMap "+d.ns+"/"+o.name, func() error {
			if !first {
				fresh, err := d.load(ctx, o.name)
				if err != nil {
					return err
				}
				o = fresh
			}
			first = false
			removed = o.dropExpired(d.clock.Now(), nil)
			if removed == 0 || o.cm == nil {
				removed = 0
				return nil
			}
			return d.store(ctx, o)
		})
		if err != nil {
			return total, err
		}
		total += removed
	}
	return total, nil
}

// expired counts o's records expired at now, those in keep aside.
func (o *object) expired(now time.Time, keep map[recordKey]bool) int64 {
	var n int64
	for id, r := range o.recs {
		if r.Expired(now) && !keep[id] {
			n++
		}
	}
	return n
}

// dropExpired removes o's records expired at now, those in keep aside,
// and reports how many it removed.
func (o *object) dropExpired(now time.Time, keep map[recordKey]bool) int64 {
	var n int64
	for id, r := range o.recs {
		if r.Expired(now) && !keep[id] {
			delete(o.recs, id)
			n++
		}
	}
	return n
}

// purge is what every Put does to the ConfigMap it writes besides adding
// the batch: it removes the expired entries (the batch's own aside), so
// the data a controller loads carries no expired line past the next
// write.
func (d *Driver) purge(o *object, fresh map[recordKey]bool) {
	if n := o.dropExpired(d.clock.Now(), fresh); n > 0 {
		d.log.Debug("configmap expired entries removed", "configmap", o.name, "count", n)
	}
}
