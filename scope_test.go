package memory_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/memory"
)

var full = memory.Identity{Tenant: "acme", User: "alice", Agent: "kaos://agent/ns/bot", Instance: "inst-1", Squad: "sq-1", Session: "run-1"}

func TestFilterDerivation(t *testing.T) {
	open := memory.Posture{AllowStore: true}
	strict := memory.Posture{RequirePrincipal: true, RequireAgentIdentity: true}
	noUser := full
	noUser.User = ""
	cases := []struct {
		name    string
		posture memory.Posture
		id      memory.Identity
		level   memory.Level
		match   memory.Field
		err     error
	}{
		{"session binds user when present", open, full, memory.LevelSession, memory.FieldTenant | memory.FieldSession | memory.FieldUser, nil},
		{"session without user", open, noUser, memory.LevelSession, memory.FieldTenant | memory.FieldSession, nil},
		{"agent binds user when present", open, full, memory.LevelAgent, memory.FieldTenant | memory.FieldAgent | memory.FieldUser, nil},
		{"agent without user", open, noUser, memory.LevelAgent, memory.FieldTenant | memory.FieldAgent, nil},
		{"agent without user under require principal", strict, noUser, memory.LevelAgent, 0, memory.ErrIncompleteScope},
		{"user", open, full, memory.LevelUser, memory.FieldTenant | memory.FieldUser, nil},
		{"user missing", open, noUser, memory.LevelUser, 0, memory.ErrIncompleteScope},
		{"store allowed", open, full, memory.LevelStore, memory.FieldTenant, nil},
		{"store refused by default", memory.Posture{}, full, memory.LevelStore, 0, memory.ErrPermissionDenied},
		{"SQUAD_AGENT_RUN", open, full, memory.LevelSquadAgentRun, memory.FieldTenant | memory.FieldInstance | memory.FieldSquad | memory.FieldSession, nil},
		{"SQUAD_AGENT", open, full, memory.LevelSquadAgent, memory.FieldTenant | memory.FieldInstance | memory.FieldSquad, nil},
		{"AGENT_RUN", open, full, memory.LevelAgentRun, memory.FieldTenant | memory.FieldInstance | memory.FieldSession, nil},
		{"SQUAD_RUN", open, full, memory.LevelSquadRun, memory.FieldTenant | memory.FieldSquad | memory.FieldSession, nil},
		{"SQUAD", open, full, memory.LevelSquad, memory.FieldTenant | memory.FieldSquad, nil},
		{"AGENT", open, full, memory.LevelParentAgent, memory.FieldTenant | memory.FieldAgent, nil},
		{"SQUAD without squad", open, memory.Identity{Tenant: "acme", Agent: "a"}, memory.LevelSquad, 0, memory.ErrIncompleteScope},
		{"require agent identity on reads", memory.Posture{RequireAgentIdentity: true}, memory.Identity{Squad: "s"}, memory.LevelSquad, 0, memory.ErrIncompleteScope},
		{"unknown level", open, full, memory.Level("session "), 0, memory.ErrInvalidArgument},
		{"bad identity", open, memory.Identity{Session: "s\x00"}, memory.LevelSession, 0, memory.ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := tc.posture.Filter(tc.id, tc.level)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.Match != tc.match {
				t.Fatalf("match = %s, want %s", f.Match, tc.match)
			}
			if diff := cmp.Diff(tc.id.Only(tc.match), f.Identity); diff != "" {
				t.Fatalf("filter identity, which must carry no fields outside %s (-want +got):\n%s", tc.match, diff)
			}
		})
	}
}

func TestFilterExactMatch(t *testing.T) {
	f, err := memory.Posture{}.Filter(memory.Identity{Tenant: "t", User: "alice"}, memory.LevelUser)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		id   memory.Identity
		want bool
	}{
		{memory.Identity{Tenant: "t", User: "alice", Session: "x"}, true},
		{memory.Identity{Tenant: "t", User: "alicia"}, false},
		{memory.Identity{Tenant: "t", User: "alic"}, false},
		{memory.Identity{Tenant: "t", User: "Alice"}, false},
		{memory.Identity{Tenant: "", User: "alice"}, false},
		{memory.Identity{Tenant: "t2", User: "alice"}, false},
	} {
		if got := f.Matches(w.id); got != w.want {
			t.Errorf("Matches(%+v) = %v, want %v", w.id, got, w.want)
		}
	}
}

func TestCheckWrite(t *testing.T) {
	cases := []struct {
		posture memory.Posture
		id      memory.Identity
		err     error
	}{
		{memory.Posture{}, memory.Identity{Session: "s"}, nil},
		{memory.Posture{}, memory.Identity{Tenant: "t"}, memory.ErrIncompleteScope},
		{memory.Posture{RequirePrincipal: true}, memory.Identity{Session: "s", Agent: "a"}, memory.ErrIncompleteScope},
		{memory.Posture{RequirePrincipal: true}, memory.Identity{Session: "s", User: "u"}, nil},
		{memory.Posture{RequireAgentIdentity: true}, memory.Identity{Session: "s", User: "u"}, memory.ErrIncompleteScope},
		{memory.Posture{}, memory.Identity{User: " u"}, memory.ErrInvalidArgument},
		{memory.Posture{}, memory.Identity{User: "u\n"}, memory.ErrInvalidArgument},
		{memory.Posture{}, memory.Identity{User: "\xff"}, memory.ErrInvalidArgument},
		{memory.Posture{}, memory.Identity{User: strings.Repeat("u", memory.MaxIdentityFieldBytes+1)}, memory.ErrInvalidArgument},
		{memory.Posture{}, memory.Identity{User: "用户 ålice"}, nil},
	}
	for i, tc := range cases {
		err := tc.posture.CheckWrite(tc.id)
		if tc.err == nil && err != nil || tc.err != nil && !errors.Is(err, tc.err) {
			t.Errorf("case %d: CheckWrite(%+v) = %v, want %v", i, tc.id, err, tc.err)
		}
	}
}

func TestKeyedFields(t *testing.T) {
	if got, want := memory.LevelParentAgent.Keyed(), memory.FieldTenant|memory.FieldAgent; got != want {
		t.Errorf("AGENT keeps %s, want %s", got, want)
	}
	if got, want := memory.LevelSquad.Keyed(), memory.FieldTenant|memory.FieldSquad; got != want {
		t.Errorf("SQUAD keeps %s, want %s", got, want)
	}
	for _, l := range memory.Levels {
		if !l.Valid() {
			t.Errorf("level %q not valid", l)
		}
	}
}

func TestIdentityWith(t *testing.T) {
	id := memory.Identity{Tenant: "t", User: "u", Agent: "a", Instance: "i", Squad: "q", Session: "s"}
	fields := []memory.Field{memory.FieldTenant, memory.FieldUser, memory.FieldAgent, memory.FieldInstance, memory.FieldSquad, memory.FieldSession}
	for _, f := range fields {
		got := id.With(f, "x")
		for _, g := range fields {
			want := id.Get(g)
			if g == f {
				want = "x"
			}
			if got.Get(g) != want {
				t.Errorf("With(%v, x).Get(%v) = %q, want %q", f, g, got.Get(g), want)
			}
		}
	}
	if diff := cmp.Diff(id, id.With(memory.FieldUser|memory.FieldAgent, "x")); diff != "" {
		t.Errorf("With of two fields changed id (-want +got):\n%s", diff)
	}
}

// TestLevelCase checks that a level differing from defined ones only by
// case is refused, with an error naming them, and never taken for one.
func TestLevelCase(t *testing.T) {
	id := memory.Identity{Tenant: "t", User: "u", Agent: "a", Instance: "i", Squad: "q", Session: "s"}
	for _, c := range []struct {
		level memory.Level
		near  []string
	}{
		{"Agent", []string{`"agent"`, `"AGENT"`}},
		{"SESSION", []string{`"session"`}},
		{"squad", []string{`"SQUAD"`}},
		{"Squad_Agent_Run", []string{`"SQUAD_AGENT_RUN"`}},
		{"wizard", nil},
	} {
		_, err := memory.Posture{}.Filter(id, c.level)
		if !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("Filter at level %q = %v, want ErrInvalidArgument", c.level, err)
			continue
		}
		for _, n := range c.near {
			if !strings.Contains(err.Error(), n) {
				t.Errorf("the error for level %q, %q, does not name %s", c.level, err, n)
			}
		}
		if c.near == nil && strings.Contains(err.Error(), "case") {
			t.Errorf("the error for level %q, %q, speaks of case", c.level, err)
		}
	}
	for _, l := range memory.Levels {
		if err := l.Check(); err != nil {
			t.Errorf("level %q: %v", l, err)
		}
	}
}

// TestKeyedLevel checks that the level of a keyed row is read off the
// fields its identity has.
func TestKeyedLevel(t *testing.T) {
	id := memory.Identity{Tenant: "t", User: "u", Agent: "a", Instance: "i", Squad: "q", Session: "s"}
	for _, l := range []memory.Level{memory.LevelSquadAgentRun, memory.LevelSquadAgent, memory.LevelAgentRun, memory.LevelSquadRun, memory.LevelSquad, memory.LevelParentAgent} {
		if got := memory.KeyedLevel(id.Only(l.Keyed())); got != l {
			t.Errorf("KeyedLevel of a %s row = %q", l, got)
		}
	}
	for _, scope := range []memory.Identity{id, {Tenant: "t"}, {Tenant: "t", User: "u"}, {Tenant: "t", Squad: "q", User: "u"}, {Tenant: "t", Agent: "a", Squad: "q"}} {
		if got := memory.KeyedLevel(scope); got != "" {
			t.Errorf("KeyedLevel(%+v) = %q, want none", scope, got)
		}
	}
}
