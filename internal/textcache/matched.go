package textcache

import (
	"sync"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/lexical"
)

// matched remembers, for the filters searched last, the indexes of the
// writers each matches, until the cache's writers change: a reader
// recalling at the agent level searches the same thousand sessions turn
// after turn, and finding them again reads a thousand writers' entries
// and groups, each a cache miss. Searches run at once, so it has a lock
// of its own; writes, which run alone, forget it all.
type matched struct {
	mu    sync.Mutex
	parts map[memory.Filter][]*lexical.Index[*Row]
}

// maxMatched is how many filters matched remembers; past it, it starts
// over.
const maxMatched = 32

// matching returns the indexes of the writers f matches, which the
// caller must not change.
func (c *Cache) matching(f memory.Filter) []*lexical.Index[*Row] {
	m := &c.matched
	m.mu.Lock()
	parts, ok := m.parts[f]
	m.mu.Unlock()
	if ok {
		return parts
	}
	c.groups.Matching(f, func(g *group) { parts = append(parts, g.x) })
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.parts == nil || len(m.parts) >= maxMatched {
		m.parts = map[memory.Filter][]*lexical.Index[*Row]{}
	}
	m.parts[f] = parts
	return parts
}

// forget forgets what matched remembers: the writers changed.
func (m *matched) forget() {
	m.mu.Lock()
	m.parts = nil
	m.mu.Unlock()
}
