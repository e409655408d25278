package memory_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/memory"
)

// FuzzFilter checks the scope derivation on arbitrary identities: it never
// panics, every failure is classified, and whenever a caller may both write
// and read at a level, the derived filter matches the caller's own writes
// and only fields the level names.
func FuzzFilter(f *testing.F) {
	f.Add("acme", "alice", "kaos://agent/ns/a", "i", "s", "run", uint8(0), uint8(3))
	f.Add("", "ålice", "", "", "", "用户", uint8(1), uint8(0))
	f.Add("t", "", "a", "", "sq", "", uint8(9), uint8(7))
	f.Add("t", " x", "a\x00", "\xff", "s", "r", uint8(4), uint8(2))
	f.Fuzz(func(t *testing.T, tenant, user, agent, instance, squad, session string, level, posture uint8) {
		id := memory.Identity{Tenant: tenant, User: user, Agent: agent, Instance: instance, Squad: squad, Session: session}
		l := memory.Levels[int(level)%len(memory.Levels)]
		p := memory.Posture{RequirePrincipal: posture&1 != 0, RequireAgentIdentity: posture&2 != 0, AllowStore: posture&4 != 0}
		flt, err := p.Filter(id, l)
		if err != nil {
			if !errors.Is(err, memory.ErrIncompleteScope) && !errors.Is(err, memory.ErrInvalidArgument) && !errors.Is(err, memory.ErrPermissionDenied) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		if !flt.Match.Has(memory.FieldTenant) {
			t.Fatalf("filter %s does not bind tenant", flt.Match)
		}
		if want := id.Only(flt.Match); flt.Identity != want { // cmp.Diff only on failure: fuzzing speed
			t.Fatalf("filter identity, which must carry no unmatched fields (-want +got):\n%s", cmp.Diff(want, flt.Identity))
		}
		if p.CheckWrite(id) == nil && !flt.Matches(id) {
			t.Fatalf("caller %+v cannot read its own write at %s", id, l)
		}
		for _, n := range []memory.Field{memory.FieldUser, memory.FieldAgent, memory.FieldInstance, memory.FieldSquad, memory.FieldSession} {
			if flt.Match.Has(n) && id.Get(n) == "" {
				t.Fatalf("filter matches on empty %s", n)
			}
		}
	})
}
