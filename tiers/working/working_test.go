package working_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/tiers/working"
)

// analyst is a caller with every identity field set.
var analyst = memory.Identity{
	Tenant:   "acme",
	User:     "alice",
	Agent:    "kaos://agent/sales/opportunity-analyst",
	Instance: "ta-17",
	Squad:    "squad-leads",
	Session:  "run-42",
}

// wantScope is what the document says a row at level keeps of id.
func wantScope(id memory.Identity, level memory.Level) memory.Identity {
	s := memory.Identity{Tenant: id.Tenant}
	switch level {
	case memory.LevelSquadAgentRun:
		s.Instance, s.Squad, s.Session = id.Instance, id.Squad, id.Session
	case memory.LevelSquadAgent:
		s.Instance, s.Squad = id.Instance, id.Squad
	case memory.LevelAgentRun:
		s.Instance, s.Session = id.Instance, id.Session
	case memory.LevelSquadRun:
		s.Squad, s.Session = id.Squad, id.Session
	case memory.LevelSquad:
		s.Squad = id.Squad
	case memory.LevelParentAgent:
		s.Agent = id.Agent
	}
	return s
}

// everything returns every record of tenant in d, whatever its scope.
func everything(t *testing.T, d driver.Driver, tenant string) []memory.Record {
	t.Helper()
	recs, err := d.List(context.Background(), driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: tenant}}})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestWorkingEveryLevel(t *testing.T) {
	forEachWorkingDriver(t, func(t *testing.T, open func() driver.Driver) {
		ctx := context.Background()
		d := open()
		w, _ := newWorking(t, d, working.Options{})
		for i, level := range working.Levels {
			payload := json.RawMessage(`{"level": "` + string(level) + `",  "n": 1.50, "s": "<a href=\"x\">é</a>"}`)
			put, err := w.Put(ctx, analyst, working.Document{Level: level, Key: "state", Type: "working", JSON: payload})
			if err != nil {
				t.Fatalf("%s: put: %v", level, err)
			}
			placed := working.Document{Level: level, Scope: wantScope(analyst, level)}
			if diff := cmp.Diff(placed, put, cmpopts.IgnoreFields(working.Document{}, "Key", "Type", "JSON", "Version", "Updated")); diff != "" {
				t.Errorf("%s: put stored the document at (-want +got):\n%s", level, diff)
			}
			got, err := w.Get(ctx, analyst, level, "state")
			if err != nil {
				t.Fatalf("%s: get: %v", level, err)
			}
			if string(got.JSON) != string(payload) {
				t.Errorf("%s: got %s, want the bytes put, %s", level, got.JSON, payload)
			}
			want := working.Document{Level: level, Key: "state", Type: "working", Version: 1, Scope: wantScope(analyst, level)}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(working.Document{}, "JSON", "Updated")); diff != "" {
				t.Errorf("%s: get (-want +got):\n%s", level, diff)
			}
			if n := len(everything(t, d, "acme")); n != i+1 {
				t.Errorf("%s: %d rows stored, want %d: each level is a row of its own", level, n, i+1)
			}
		}
		// The AGENT row has the parent agent and nothing else.
		agentRow, err := w.Get(ctx, analyst, memory.LevelParentAgent, "state")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(memory.Identity{Agent: analyst.Agent}, agentRow.Scope, cmpopts.IgnoreFields(memory.Identity{}, "Tenant")); diff != "" {
			t.Errorf("AGENT row scope, want only tenant and agent (-want +got):\n%s", diff)
		}
		// A second put replaces the row and counts its version up.
		if _, err := w.Put(ctx, analyst, working.Document{Key: "state", JSON: json.RawMessage(`[1,2,3]`)}); err != nil {
			t.Fatal(err)
		}
		got, err := w.Get(ctx, analyst, memory.LevelSquadAgentRun, "state")
		if err != nil {
			t.Fatal(err)
		}
		replaced := working.Document{JSON: json.RawMessage(`[1,2,3]`), Version: 2, Type: working.DefaultMemoryType}
		if diff := cmp.Diff(replaced, got, cmpopts.IgnoreFields(working.Document{}, "Level", "Key", "Scope", "Updated")); diff != "" {
			t.Errorf("after a second put (-want +got):\n%s", diff)
		}
		// Delete removes exactly one row.
		for _, level := range working.Levels {
			removed, err := w.Delete(ctx, analyst, level, "state")
			if err != nil || !removed {
				t.Fatalf("%s: delete: %v, %v", level, removed, err)
			}
			if _, err := w.Get(ctx, analyst, level, "state"); !errors.Is(err, memory.ErrNotFound) {
				t.Errorf("%s: get after delete: %v, want ErrNotFound", level, err)
			}
			removed, err = w.Delete(ctx, analyst, level, "state")
			if err != nil || removed {
				t.Errorf("%s: second delete: %v, %v, want false, nil", level, removed, err)
			}
		}
		if n := len(everything(t, d, "acme")); n != 0 {
			t.Errorf("%d rows left after deleting every level", n)
		}
	})
}

func TestWorkingDefaultLevel(t *testing.T) {
	ctx := context.Background()
	w, _ := newWorking(t, inmem.New(inmem.Options{}), working.Options{})
	doc, err := w.Put(ctx, analyst, working.Document{Key: "k", JSON: json.RawMessage(`1`)})
	if err != nil {
		t.Fatal(err)
	}
	atDefault := working.Document{Level: memory.LevelSquadAgentRun, Scope: wantScope(analyst, memory.LevelSquadAgentRun)}
	if diff := cmp.Diff(atDefault, doc, cmpopts.IgnoreFields(working.Document{}, "Key", "Type", "JSON", "Version", "Updated")); diff != "" {
		t.Errorf("a put without a level, want SQUAD_AGENT_RUN (-want +got):\n%s", diff)
	}
	got, err := w.Get(ctx, analyst, "", "k")
	if err != nil || got.Level != memory.LevelSquadAgentRun {
		t.Errorf("a get without a level: %+v, %v; want the SQUAD_AGENT_RUN row", got, err)
	}
	up, err := w.Update(ctx, analyst, "", "k", "", func(cur working.Document, found bool) (json.RawMessage, error) { return json.RawMessage(`2`), nil })
	if err != nil || up.Level != memory.LevelSquadAgentRun || up.Version != 2 {
		t.Errorf("an update without a level: %+v, %v; want the SQUAD_AGENT_RUN row at version 2", up, err)
	}
	if removed, err := w.Delete(ctx, analyst, "", "k"); err != nil || !removed {
		t.Errorf("a delete without a level: %v, %v", removed, err)
	}
}

func TestWorkingListings(t *testing.T) {
	forEachWorkingDriver(t, func(t *testing.T, open func() driver.Driver) {
		ctx := context.Background()
		d := open()
		w, st := newWorking(t, d, working.Options{})
		other := analyst
		other.Instance, other.Session = "ta-99", "run-7" // same squad, another instance and run
		for _, id := range []memory.Identity{analyst, other} {
			for _, level := range working.Levels {
				typ := "domain"
				if level == memory.LevelSquad {
					typ = "keyword"
				}
				if _, err := w.Put(ctx, id, working.Document{Level: level, Key: "k-" + id.Instance, Type: typ, JSON: json.RawMessage(`{}`)}); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Noise the squad listing must not return: another squad, another
		// tenant, and records of the same squad that are not documents.
		elsewhere := analyst
		elsewhere.Squad = "squad-other"
		foreign := analyst
		foreign.Tenant = "globex"
		for _, id := range []memory.Identity{elsewhere, foreign} {
			if _, err := w.Put(ctx, id, working.Document{Level: memory.LevelSquad, Key: "noise", JSON: json.RawMessage(`0`)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Add(ctx, analyst, memory.NewTurn(analyst, memory.RoleUser, "hello", st.Now())); err != nil {
			t.Fatal(err)
		}

		rows, err := w.ListSquad(ctx, analyst, "")
		if err != nil {
			t.Fatal(err)
		}
		count := map[memory.Level]int{}
		for _, r := range rows {
			count[r.Level]++
			if r.Scope.Squad != analyst.Squad || r.Scope.Tenant != analyst.Tenant {
				t.Errorf("squad listing returned a row of %+v", r.Scope)
			}
		}
		// Both instances' rows at the four squad levels, nothing else.
		want := map[memory.Level]int{memory.LevelSquadAgentRun: 2, memory.LevelSquadAgent: 2, memory.LevelSquadRun: 2, memory.LevelSquad: 2}
		if len(rows) != 8 {
			t.Errorf("squad listing: %d rows, want 8", len(rows))
		}
		if diff := cmp.Diff(want, count); diff != "" {
			t.Errorf("squad listing: rows by level (-want +got):\n%s", diff)
		}
		for i := 1; i < len(rows); i++ {
			if rows[i].Updated.After(rows[i-1].Updated) {
				t.Errorf("squad listing is not newest first at %d", i)
			}
		}
		keywords, err := w.ListSquad(ctx, analyst, "keyword")
		if err != nil {
			t.Fatal(err)
		}
		if len(keywords) != 2 || keywords[0].Level != memory.LevelSquad || keywords[1].Level != memory.LevelSquad {
			t.Errorf("squad listing of memory_type keyword: %+v", keywords)
		}

		// List is one level exactly, within the caller's scope.
		for _, level := range working.Levels[:5] {
			rows, err := w.List(ctx, analyst, level, "")
			if err != nil {
				t.Fatalf("%s: %v", level, err)
			}
			want := 1 // only the caller's own instance and run
			if level == memory.LevelSquad {
				want = 2 // the other instance's SQUAD row shares the scope
			}
			if len(rows) != want {
				t.Errorf("List %s: %d rows, want %d", level, len(rows), want)
			}
			for _, r := range rows {
				wantRow := working.Document{Level: level, Scope: wantScope(analyst, level)}
				if diff := cmp.Diff(wantRow, r, cmpopts.IgnoreFields(working.Document{}, "Key", "Type", "JSON", "Version", "Updated")); diff != "" {
					t.Errorf("List %s returned a row at (-want +got):\n%s", level, diff)
				}
			}
		}
		// AGENT rows are loaded by key only.
		if _, err := w.List(ctx, analyst, memory.LevelParentAgent, ""); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("List AGENT: %v, want ErrInvalidArgument", err)
		}
		if _, err := w.Get(ctx, analyst, memory.LevelParentAgent, "k-"+other.Instance); err != nil {
			t.Errorf("AGENT rows load by key: %v", err)
		}
		// A caller without a squad cannot list a squad.
		solo := analyst
		solo.Squad = ""
		if _, err := w.ListSquad(ctx, solo, ""); !errors.Is(err, memory.ErrIncompleteScope) {
			t.Errorf("ListSquad without a squad: %v, want ErrIncompleteScope", err)
		}
	})
}

// TestWorkingIsolation writes one row per level, then reads it as callers
// who differ in one identity field: a caller sees the row exactly when
// the field is not one the level keeps.
func TestWorkingIsolation(t *testing.T) {
	forEachWorkingDriver(t, func(t *testing.T, open func() driver.Driver) {
		ctx := context.Background()
		w, _ := newWorking(t, open(), working.Options{})
		for _, level := range working.Levels {
			if _, err := w.Put(ctx, analyst, working.Document{Level: level, Key: "secret", JSON: json.RawMessage(`"` + string(level) + `"`)}); err != nil {
				t.Fatal(err)
			}
		}
		fields := []memory.Field{memory.FieldTenant, memory.FieldUser, memory.FieldAgent, memory.FieldInstance, memory.FieldSquad, memory.FieldSession}
		for _, level := range working.Levels {
			for _, f := range fields {
				reader := analyst.With(f, analyst.Get(f)+"x") // "acmex" never sees "acme"
				_, err := w.Get(ctx, reader, level, "secret")
				kept := level.Keyed().Has(f)
				switch {
				case kept && !errors.Is(err, memory.ErrNotFound):
					t.Errorf("%s: a caller with another %s read the row: %v", level, f, err)
				case !kept && err != nil:
					t.Errorf("%s: a caller differing only in %s, which the level does not keep, cannot read: %v", level, f, err)
				}
				if level != memory.LevelParentAgent && f != memory.FieldUser && f != memory.FieldAgent {
					rows, err := w.ListSquad(ctx, reader, "")
					if err != nil {
						t.Fatal(err)
					}
					for _, r := range rows {
						if r.Scope.Tenant != reader.Tenant || r.Scope.Squad != reader.Squad {
							t.Errorf("ListSquad as %+v returned %+v", reader, r.Scope)
						}
					}
				}
			}
		}
		// The same key in two tenants holds two rows.
		globex := analyst.With(memory.FieldTenant, "globex")
		if _, err := w.Put(ctx, globex, working.Document{Level: memory.LevelParentAgent, Key: "secret", JSON: json.RawMessage(`"globex"`)}); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]string{"acme": `"AGENT"`, "globex": `"globex"`} {
			got, err := w.Get(ctx, analyst.With(memory.FieldTenant, id), memory.LevelParentAgent, "secret")
			if err != nil || string(got.JSON) != want {
				t.Errorf("tenant %s reads %s, %v; want %s", id, got.JSON, err, want)
			}
		}
	})
}

func TestWorkingBadInput(t *testing.T) {
	forEachWorkingDriver(t, func(t *testing.T, open func() driver.Driver) {
		ctx := context.Background()
		d := open()
		w, _ := newWorking(t, d, working.Options{})
		noSquad := analyst.With(memory.FieldSquad, "")
		noAgent := analyst.With(memory.FieldAgent, "")
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		ok := json.RawMessage(`{"ok":true}`)
		cases := []struct {
			name  string
			ctx   context.Context
			id    memory.Identity
			doc   working.Document
			want  error
			wantS string // a part of the message
		}{
			{"invalid JSON", ctx, analyst, working.Document{Key: "k", JSON: json.RawMessage(`{"a":`)}, memory.ErrInvalidArgument, "not valid JSON"},
			{"two values", ctx, analyst, working.Document{Key: "k", JSON: json.RawMessage(`1 2`)}, memory.ErrInvalidArgument, "not valid JSON"},
			{"empty JSON", ctx, analyst, working.Document{Key: "k"}, memory.ErrInvalidArgument, "not valid JSON"},
			{"NUL escape", ctx, analyst, working.Document{Key: "k", JSON: json.RawMessage(`"\u0000"`)}, memory.ErrInvalidArgument, `\u0000`},
			{"too large", ctx, analyst, working.Document{Key: "k", JSON: json.RawMessage(`"` + strings.Repeat("x", memory.MaxDocumentBytes) + `"`)}, memory.ErrTooLarge, "limit"},
			{"empty key", ctx, analyst, working.Document{JSON: ok}, memory.ErrInvalidArgument, "memory_key is empty"},
			{"key too long", ctx, analyst, working.Document{Key: strings.Repeat("k", memory.MaxKeyBytes+1), JSON: ok}, memory.ErrTooLarge, "memory_key"},
			{"key not UTF-8", ctx, analyst, working.Document{Key: "k\xff", JSON: ok}, memory.ErrInvalidArgument, "UTF-8"},
			{"type with a newline", ctx, analyst, working.Document{Key: "k", Type: "a\nb", JSON: ok}, memory.ErrInvalidArgument, "control"},
			{"unknown level", ctx, analyst, working.Document{Level: memory.LevelSession, Key: "k", JSON: ok}, memory.ErrInvalidArgument, "not a working-memory level"},
			{"squad level without a squad", ctx, noSquad, working.Document{Level: memory.LevelSquad, Key: "k", JSON: ok}, memory.ErrIncompleteScope, "squad"},
			{"default level without a squad", ctx, noSquad, working.Document{Key: "k", JSON: ok}, memory.ErrIncompleteScope, "squad"},
			{"AGENT without an agent", ctx, noAgent, working.Document{Level: memory.LevelParentAgent, Key: "k", JSON: ok}, memory.ErrIncompleteScope, "agent"},
			{"malformed identity", ctx, analyst.With(memory.FieldSquad, " s"), working.Document{Key: "k", JSON: ok}, memory.ErrInvalidArgument, "white space"},
			{"cancelled context", cancelled, analyst, working.Document{Key: "k", JSON: ok}, context.Canceled, ""},
		}
		for _, c := range cases {
			_, err := w.Put(c.ctx, c.id, c.doc)
			if !errors.Is(err, c.want) || !strings.Contains(errString(err), c.wantS) {
				t.Errorf("%s: Put: %v, want %v mentioning %q", c.name, err, c.want, c.wantS)
			}
			_, err = w.Swap(c.ctx, c.id, c.doc, 0)
			if !errors.Is(err, c.want) {
				t.Errorf("%s: Swap: %v, want %v", c.name, err, c.want)
			}
		}
		if n := len(everything(t, d, "acme")); n != 0 {
			t.Fatalf("%d rows stored by failed writes", n)
		}
		// Reads refuse the same way, before touching storage.
		for _, c := range []struct {
			name  string
			ctx   context.Context
			id    memory.Identity
			level memory.Level
			key   string
			want  error
		}{
			{"empty key", ctx, analyst, memory.LevelSquad, "", memory.ErrInvalidArgument},
			{"unknown level", ctx, analyst, memory.LevelUser, "k", memory.ErrInvalidArgument},
			{"missing squad", ctx, noSquad, memory.LevelSquadAgent, "k", memory.ErrIncompleteScope},
			{"cancelled", cancelled, analyst, memory.LevelSquad, "k", context.Canceled},
		} {
			if _, err := w.Get(c.ctx, c.id, c.level, c.key); !errors.Is(err, c.want) {
				t.Errorf("Get %s: %v, want %v", c.name, err, c.want)
			}
			if _, err := w.Delete(c.ctx, c.id, c.level, c.key); !errors.Is(err, c.want) {
				t.Errorf("Delete %s: %v, want %v", c.name, err, c.want)
			}
			_, err := w.Update(c.ctx, c.id, c.level, c.key, "", func(working.Document, bool) (json.RawMessage, error) { return ok, nil })
			if !errors.Is(err, c.want) {
				t.Errorf("Update %s: %v, want %v", c.name, err, c.want)
			}
		}
		// An update whose function returns invalid JSON stores nothing.
		_, err := w.Update(ctx, analyst, memory.LevelSquad, "k", "", func(working.Document, bool) (json.RawMessage, error) { return json.RawMessage(`{`), nil })
		if !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("Update to invalid JSON: %v, want ErrInvalidArgument", err)
		}
		if n := len(everything(t, d, "acme")); n != 0 {
			t.Fatalf("%d rows stored by failed writes", n)
		}
		// A closed store refuses.
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Put(ctx, analyst, working.Document{Key: "k", JSON: ok}); !errors.Is(err, memory.ErrClosed) {
			t.Errorf("Put on a closed store: %v, want ErrClosed", err)
		}
		if _, err := w.Get(ctx, analyst, memory.LevelSquad, "k"); !errors.Is(err, memory.ErrClosed) {
			t.Errorf("Get on a closed store: %v, want ErrClosed", err)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestWorkingPosture checks a store's posture binds working memory too.
func TestWorkingPosture(t *testing.T) {
	ctx := context.Background()
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{Posture: memory.Posture{RequireAgentIdentity: true, RequirePrincipal: true}})
	w, err := working.New(st, working.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []memory.Identity{analyst.With(memory.FieldAgent, ""), analyst.With(memory.FieldUser, "")} {
		if _, err := w.Put(ctx, id, working.Document{Level: memory.LevelSquad, Key: "k", JSON: json.RawMessage(`1`)}); !errors.Is(err, memory.ErrIncompleteScope) {
			t.Errorf("put as %+v under a strict posture: %v, want ErrIncompleteScope", id, err)
		}
	}
	if _, err := w.Put(ctx, analyst, working.Document{Level: memory.LevelSquad, Key: "k", JSON: json.RawMessage(`1`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Get(ctx, analyst.With(memory.FieldAgent, ""), memory.LevelSquad, "k"); !errors.Is(err, memory.ErrIncompleteScope) {
		t.Errorf("get without an agent under RequireAgentIdentity: %v", err)
	}
}

func TestNewOptions(t *testing.T) {
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	for _, c := range []struct {
		store *backend.Store
		opt   working.Options
	}{
		{nil, working.Options{}},
		{st, working.Options{MaxUpdateAttempts: -1}},
		{backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{SystemTenant: "sys\n"}), working.Options{}},
	} {
		if _, err := working.New(c.store, c.opt); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("New(%v, %+v): %v, want ErrInvalidArgument", c.store != nil, c.opt, err)
		}
	}
	w, err := working.New(st, working.Options{})
	if err != nil || w.SystemTenant() != backend.DefaultSystemTenant {
		t.Errorf("default system tenant: %v, %v", w, err)
	}
}

func TestLevelOf(t *testing.T) {
	for _, level := range working.Levels {
		if got := working.LevelOf(wantScope(analyst, level)); got != level {
			t.Errorf("LevelOf(%s scope) = %q", level, got)
		}
	}
	for _, id := range []memory.Identity{analyst, {Tenant: "t", User: "u"}, {Tenant: "t"}, {Agent: "a", Squad: "s"}} {
		if got := working.LevelOf(id); got != "" {
			t.Errorf("LevelOf(%+v) = %q, want none", id, got)
		}
	}
	if !slices.Equal(working.Levels, []memory.Level{"SQUAD_AGENT_RUN", "SQUAD_AGENT", "AGENT_RUN", "SQUAD_RUN", "SQUAD", "AGENT"}) {
		t.Errorf("Levels = %v", working.Levels)
	}
}
