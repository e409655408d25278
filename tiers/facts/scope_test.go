package facts_test

import (
	"context"
	"slices"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/extract"
)

// Reads see what their level admits; Update and Delete only the caller's
// own facts. Everything else is memory.ErrNotFound, and a level whose
// fields the caller lacks memory.ErrIncompleteScope.
func TestScope(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		f, _ := newFacts(t, d)
		r := mustAdd(t, f, alice, extract.Fact{Text: "Alice is allergic to nuts"})[0].Record

		// Alice in a later session reads it at the user and agent levels,
		// not at the session level.
		mustGet(t, f, aliceLater, memory.LevelUser, r.ID)
		mustGet(t, f, aliceLater, memory.LevelAgent, r.ID)
		_, err := f.Get(ctx, aliceLater, memory.LevelSession, r.ID)
		wantErr(t, "get from another session at the session level", err, memory.ErrNotFound)
		wantTexts(t, "search from another session at the user level", searchTexts(t, f, aliceLater, memory.LevelUser, "nuts"), []string{"Alice is allergic to nuts"})
		if got := searchTexts(t, f, aliceLater, memory.LevelSession, "nuts"); len(got) != 0 {
			t.Errorf("search from another session at the session level found %q", got)
		}

		// Nobody else sees it at any level they may read.
		for _, other := range []struct {
			name string
			id   memory.Identity
		}{{"bob", bob}, {"another tenant", aliceGlobex}} {
			for _, level := range []memory.Level{memory.LevelSession, memory.LevelAgent, memory.LevelUser} {
				_, err := f.Get(ctx, other.id, level, r.ID)
				wantErr(t, other.name+" get at "+string(level), err, memory.ErrNotFound)
				_, err = f.History(ctx, other.id, level, r.ID)
				wantErr(t, other.name+" history at "+string(level), err, memory.ErrNotFound)
				wantTexts(t, other.name+" list at "+string(level), listTexts(t, f, other.id, level, true), nil)
				if got := searchTexts(t, f, other.id, level, "nuts"); len(got) != 0 {
					t.Errorf("%s search at %s found %q", other.name, level, got)
				}
			}
		}

		// Only alice's exact identity deletes it; only her agent's memory
		// of her (any session) updates it.
		for _, other := range []struct {
			name string
			id   memory.Identity
		}{{"bob", bob}, {"another tenant", aliceGlobex}, {"alice through another agent", aliceOther}, {"alice in another session", aliceLater}} {
			if other.id != aliceLater {
				_, err := f.Update(ctx, other.id, r.ID, "Alice is not allergic")
				wantErr(t, other.name+" update", err, memory.ErrNotFound)
			}
			wantErr(t, other.name+" delete", f.Delete(ctx, other.id, r.ID), memory.ErrNotFound)
		}
		got := mustGet(t, f, alice, memory.LevelSession, r.ID)
		if got.Kind != memory.KindFact || got.Version != 1 {
			t.Fatalf("after the others' attempts the fact is %s v%d, want untouched", got.Kind, got.Version)
		}
		wantTexts(t, "alice's facts", listTexts(t, f, alice, memory.LevelUser, true), []string{"Alice is allergic to nuts"})

		// A level needs its fields.
		noSession := alice.With(memory.FieldSession, "")
		noUser := alice.With(memory.FieldUser, "")
		for _, c := range []struct {
			name  string
			id    memory.Identity
			level memory.Level
		}{{"session level without a session", noSession, memory.LevelSession}, {"user level without a user", noUser, memory.LevelUser}} {
			_, err := f.Get(ctx, c.id, c.level, r.ID)
			wantErr(t, "get at the "+c.name, err, memory.ErrIncompleteScope)
			_, err = f.Search(ctx, c.id, c.level, "nuts", 5)
			wantErr(t, "search at the "+c.name, err, memory.ErrIncompleteScope)
			_, err = f.List(ctx, c.id, c.level, true)
			wantErr(t, "list at the "+c.name, err, memory.ErrIncompleteScope)
			_, err = f.History(ctx, c.id, c.level, r.ID)
			wantErr(t, "history at the "+c.name, err, memory.ErrIncompleteScope)
		}
		_, err = f.Get(ctx, alice, memory.LevelStore, r.ID)
		wantErr(t, "get at the store level", err, memory.ErrPermissionDenied)
		_, err = f.Add(ctx, memory.Identity{Tenant: "acme"}, extract.Fact{Text: "nobody's fact"})
		wantErr(t, "add without any identity field", err, memory.ErrIncompleteScope)
	})
}

// TestSupersedeAcrossSessions checks that a later session of the same
// user and agent supersedes a fact an earlier one learned, by Update and
// by Add's Supersedes: the old record keeps its attribution and is
// superseded, the new one is the later session's, History joins them,
// and a search finds only the new.
func TestSupersedeAcrossSessions(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		f, _ := newFacts(t, d)
		added, err := f.Add(ctx, alice, extract.Fact{Text: "Alice lives in Lisbon", Sources: []string{"t1"}}, extract.Fact{Text: "Alice drives a blue car", Sources: []string{"t2"}})
		if err != nil {
			t.Fatal(err)
		}
		lisbon, car := added[0].Record, added[1].Record
		porto, err := f.Update(ctx, aliceLater, lisbon.ID, "Alice lives in Porto")
		if err != nil {
			t.Fatalf("update from a later session: %v", err)
		}
		got, err := f.Add(ctx, aliceLater, extract.Fact{Text: "Alice drives a red car", Sources: []string{"t9"}, Supersedes: car.ID})
		if err != nil || got[0].Replaced != car.ID {
			t.Fatalf("add superseding from a later session: %+v, %v", got, err)
		}
		for _, old := range []memory.Record{lisbon, car} {
			r := mustGet(t, f, alice, memory.LevelSession, old.ID)
			if r.Kind != memory.KindSuperseded || r.Identity != alice {
				t.Errorf("fact %q after a later session superseded it: %s, identity %+v", old.Content, r.Kind, r.Identity)
			}
		}
		if porto.Identity != aliceLater {
			t.Errorf("the new fact is attributed to %+v, want the later session", porto.Identity)
		}
		h, err := f.History(ctx, aliceLater, memory.LevelAgent, porto.ID)
		if err != nil || len(h) != 2 || h[0].ID != lisbon.ID || h[1].ID != porto.ID {
			t.Fatalf("history: %d records, %v", len(h), err)
		}
		wantTexts(t, "search at the agent level", searchTexts(t, f, aliceLater, memory.LevelAgent, "lives"), []string{"Alice lives in Porto"})
		// What a later session's extractor knows: every session's live
		// facts of the agent, none of another agent's.
		if _, err := f.Add(ctx, aliceOther, extract.Fact{Text: "Alice likes jazz", Sources: []string{"t3"}}); err != nil {
			t.Fatal(err)
		}
		reach, err := f.Reachable(ctx, aliceLater, 0)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, r := range reach {
			texts = append(texts, r.Content)
		}
		slices.Sort(texts)
		if !slices.Equal(texts, []string{"Alice drives a red car", "Alice lives in Porto"}) {
			t.Errorf("Reachable from a later session: %q", texts)
		}
	})
}
