package textcache

import "github.com/agentmem/memory"

// fieldValue is one identity field's value: field i of identityFields
// (memory.Field 1<<i) holding v.
type fieldValue struct {
	i int
	v string
}

// groupSet is the writers holding one field value.
type groupSet map[*group]struct{}

// addGroup makes g one of c's writers, found by each of its identity's
// field values.
func (c *Cache) addGroup(g *group) {
	c.groups[g.id] = g
	for i, s := range identityFields(&g.id) {
		k := fieldValue{i, *s}
		set := c.byField[k]
		if set == nil {
			set = groupSet{}
			c.byField[k] = set
		}
		set[g] = struct{}{}
	}
}

// dropGroup removes g from c's writers.
func (c *Cache) dropGroup(g *group) {
	delete(c.groups, g.id)
	for i, s := range identityFields(&g.id) {
		k := fieldValue{i, *s}
		if set := c.byField[k]; set != nil {
			delete(set, g)
			if len(set) == 0 {
				delete(c.byField, k)
			}
		}
	}
}

// matching calls fn with every writer f matches. It tests only the
// writers holding the value of one field f matches, the field fewest
// writers hold, so that a search of one scope among thousands costs
// what its own writers do. (recindex's smallest chooses among its
// per-field posting lists the same way; those hold records, these
// writers.)
func (c *Cache) matching(f memory.Filter, fn func(*group)) {
	var fewest groupSet
	narrowed := false
	for i, s := range identityFields(&f.Identity) {
		if !f.Match.Has(memory.Field(1) << i) {
			continue
		}
		set := c.byField[fieldValue{i, *s}]
		if len(set) == 0 {
			return
		}
		if !narrowed || len(set) < len(fewest) {
			fewest, narrowed = set, true
		}
	}
	if !narrowed {
		for _, g := range c.groups {
			fn(g)
		}
		return
	}
	for g := range fewest {
		if f.Matches(g.id) {
			fn(g)
		}
	}
}
