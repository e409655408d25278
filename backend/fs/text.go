package fs

import (
	"context"

	"github.com/agentmem/memory/backend/driver"
)

var _ driver.TextSearcher = (*Driver)(nil)

// SearchText returns the k live records matching q whose content best
// matches text; see driver.TextSearcher. It ranks through the identity
// index's per-writer text indexes (recindex), which the first text search
// builds and every change read from the log after it keeps, so a search
// sees what other processes wrote as List does.
func (d *Driver) SearchText(ctx context.Context, q driver.Query, text string, k int) ([]driver.Match, error) {
	now, err := driver.Admit(ctx, driver.CheckSearchText(q, text, k), d.clock)
	if err != nil {
		return nil, err
	}
	var out []driver.Match
	for {
		started := true
		err = d.read(ctx, func(x *index) error {
			if started = x.recs.TextsOn(); !started {
				return nil
			}
			var err error
			out, err = x.recs.SearchText(q, text, k, now)
			return err
		})
		if err != nil || started {
			return out, err
		}
		d.startTexts()
	}
}

// startTexts turns the identity index's text indexes on.
func (d *Driver) startTexts() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.idx.recs.StartTexts()
	}
}
