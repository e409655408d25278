package inmem

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

var _ driver.TextSearcher = (*Driver)(nil)

// SearchText returns the k live records matching q whose content best
// matches text; see driver.TextSearcher. It ranks through the identity
// index's per-writer text indexes (recindex), which the first text search
// builds and every write after it keeps.
func (d *Driver) SearchText(ctx context.Context, q driver.Query, text string, k int) ([]driver.Match, error) {
	now, err := driver.Admit(ctx, driver.CheckSearchText(q, text, k), d.clock)
	if err != nil {
		return nil, err
	}
	d.mu.RLock()
	if !d.closed && !d.idx.TextsOn() {
		d.mu.RUnlock()
		d.mu.Lock()
		if !d.closed {
			d.idx.StartTexts()
		}
		d.mu.Unlock()
		d.mu.RLock()
	}
	defer d.mu.RUnlock()
	if d.closed {
		return nil, memory.Errorf(memory.ErrClosed, "in-memory driver is closed")
	}
	return d.idx.SearchText(q, text, k, now)
}
