package postgres

import (
	"fmt"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// TestScopeKeyDistinct checks that queries with different conditions
// have different keys, and equal ones equal keys.
func TestScopeKeyDistinct(t *testing.T) {
	id := func(tenant, user, session string) memory.Identity {
		return memory.Identity{Tenant: tenant, User: user, Session: session}
	}
	tus := memory.FieldTenant | memory.FieldUser | memory.FieldSession
	queries := []driver.Query{
		{Filter: memory.Filter{Match: memory.FieldTenant, Identity: id("t", "", "")}},
		{Filter: memory.Filter{Match: memory.FieldTenant, Identity: id("t2", "", "")}},
		{Filter: memory.Filter{Match: memory.FieldTenant, Identity: id(`t"`, "", "")}},
		{Filter: memory.Filter{Match: tus, Identity: id("t", "u", "s")}},
		{Filter: memory.Filter{Match: tus, Identity: id("t", "us", "")}},
		{Filter: memory.Filter{Match: tus, Identity: id("t", "u", "")}},
		{Filter: memory.Filter{Match: tus, Identity: id("t", "", "u")}},
		{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldUser, Identity: id("t", "u", "")}},
		{Filter: memory.Filter{Match: memory.FieldTenant, Identity: id("t", "", "")}, Kinds: []memory.Kind{memory.KindFact}},
		{Filter: memory.Filter{Match: memory.FieldTenant, Identity: id("t", "", "")}, Kinds: []memory.Kind{memory.KindFact, memory.KindTurn}},
		{Filter: memory.Filter{Match: memory.FieldTenant, Identity: id("t", "", "")}, Key: "k"},
		{Filter: memory.Filter{Match: memory.FieldTenant, Identity: id("t", "", "")}, IDs: []string{"a,b"}},
		{Filter: memory.Filter{Match: memory.FieldTenant, Identity: id("t", "", "")}, IDs: []string{"a", "b"}},
	}
	seen := map[string]int{}
	for i, q := range queries {
		key := scopeKey(q)
		if j, ok := seen[key]; ok {
			t.Errorf("queries %d and %d have one key %q", j, i, key)
		}
		seen[key] = i
		if again := scopeKey(q); again != key {
			t.Errorf("query %d: key %q, then %q", i, key, again)
		}
	}
	// Limit is not a condition.
	q := queries[0]
	q.Limit = 5
	if scopeKey(q) != scopeKey(queries[0]) {
		t.Error("Limit changed the key")
	}
}

// TestShortScopes checks the least k kept per scope and the bound.
func TestShortScopes(t *testing.T) {
	var s shortScopes
	if s.short("a", 10) {
		t.Fatal("an empty memory reports a scope short")
	}
	s.remember("a", 20)
	if s.short("a", 10) || !s.short("a", 20) || !s.short("a", 30) {
		t.Error("after a short search for 20: want short for 20 and 30 only")
	}
	s.remember("a", 10)
	s.remember("a", 40)
	if !s.short("a", 10) || s.short("a", 9) {
		t.Error("after short searches for 20, 10 and 40: want short from 10 on")
	}
	for i := range 2 * maxShortScopes {
		s.remember(fmt.Sprint(i), 1)
	}
	if n := s.len(); n != maxShortScopes {
		t.Errorf("%d scopes remembered, want the bound %d", n, maxShortScopes)
	}
	if !s.short(fmt.Sprint(2*maxShortScopes-1), 1) {
		t.Error("the latest scope was not remembered")
	}
}
