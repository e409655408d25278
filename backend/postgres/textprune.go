package postgres

import (
	"context"
	"sync"
	"time"
)

const (
	// textLogRetention is how long the text change log keeps the changes
	// of a finished transaction, at least: a text cache that has not
	// caught up for longer may find the log pruned past it and load
	// every text again.
	textLogRetention = 10 * time.Minute
	// textLogPruneEvery is how often a driver in use prunes the log, at
	// most.
	textLogPruneEvery = time.Minute
)

// pruneSQL deletes the log's changes of transactions below $1 and raises
// the floor to the largest transaction id it deleted.
const pruneSQL = `WITH gone AS (DELETE FROM memory_text_changes WHERE xid < $1::xid8 RETURNING xid)
INSERT INTO memory_settings (name, value)
	SELECT '` + settingTextLogFloor + `', max(xid)::text FROM gone HAVING count(*) > 0
ON CONFLICT (name) DO UPDATE SET value = greatest(memory_settings.value::xid8, excluded.value::xid8)::text`

// textPruner prunes the text change log in the background, off the path
// of the calls that start it. Every driver prunes, whether it searches or
// only writes: replicas that prune at once delete the same rows, which is
// harmless.
//
// Which changes are old enough is judged by transaction ids, not by
// times stored beside them: every run samples the xmin of a snapshot
// (every transaction below it has finished), and a later run deletes the
// changes below a sample at least textLogRetention old, so every change
// it deletes is of a transaction that had finished by then.
type textPruner struct {
	mu       sync.Mutex
	next     time.Time     // the earliest time of the next run
	samples  []horizon     // oldest first
	every    time.Duration // textLogPruneEvery, unless a test shortens it
	retained time.Duration // textLogRetention, unless a test shortens it
}

// horizon is a snapshot's xmin (xid8, as text) and when it was read.
type horizon struct {
	at   time.Time
	xmin string
}

func (p *textPruner) init() { p.every, p.retained = textLogPruneEvery, textLogRetention }

// maintain starts a run of the pruner, as a chore, unless the last began
// less than textLogPruneEvery ago. It costs a lock and a clock reading.
func (d *Driver) maintain() {
	p := &d.prune
	now := time.Now()
	p.mu.Lock()
	if now.Before(p.next) {
		p.mu.Unlock()
		return
	}
	p.next = now.Add(p.every)
	p.mu.Unlock()
	d.chores.Start("prune the text change log", func(ctx context.Context) {
		if err := d.pruneTextLog(ctx, now); err != nil && ctx.Err() == nil {
			d.log.Warn("postgres: prune the text change log", "err", err)
		}
	})
}

// pruneTextLog samples the current horizon and deletes the changes below
// the newest sample at least p.retained old.
func (d *Driver) pruneTextLog(ctx context.Context, now time.Time) error {
	p := &d.prune
	var xmin string
	if err := d.db.QueryRowContext(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text`).Scan(&xmin); err != nil {
		return fail(ctx, err, "postgres: read the transaction horizon")
	}
	p.mu.Lock()
	p.samples = append(p.samples, horizon{at: now, xmin: xmin})
	cut := -1
	for i, h := range p.samples {
		if now.Sub(h.at) >= p.retained {
			cut = i
		}
	}
	var below string
	if cut >= 0 {
		below = p.samples[cut].xmin
		p.samples = p.samples[cut+1:]
	}
	p.mu.Unlock()
	if below == "" {
		return nil
	}
	_, err := d.db.ExecContext(ctx, pruneSQL, below)
	return fail(ctx, err, "postgres: prune the text change log")
}
