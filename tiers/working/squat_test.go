package working_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/tiers/working"
)

// TestWorkingIDSquatting checks the attack of issue 11 on every driver:
// another tenant writes records under the ids of acme's rows — they are
// computable, since a row's id derives from its scope and key — before
// and after acme writes them. Acme's Put, Update and LoadMerged must work
// as if nothing happened, and no write of the other tenant may learn that
// acme's row exists. Within one tenant, where an id belongs to one
// identity, a squatted id makes Update fail at once with a refusal naming
// the level and key, never spin until its context ends.
func TestWorkingIDSquatting(t *testing.T) {
	forEachWorkingDriver(t, func(t *testing.T, open func() driver.Driver) {
		ctx := context.Background()
		d := open()
		w, st := newWorking(t, d, working.Options{})
		acme := analyst
		evil := analyst
		evil.Tenant = "evil"
		key := "live_chat_vendors"
		rowID := func(who memory.Identity, level memory.Level) string {
			return memory.ContentID(memory.KindDocument, who.Only(level.Keyed()), key)
		}
		squat := func(who memory.Identity, id string) error {
			return st.Add(ctx, who, memory.Record{ID: id, Kind: memory.KindFact, Content: "squatted"})
		}

		// Before acme writes: evil takes the ids acme's AGENT and SQUAD
		// rows will have.
		for _, level := range []memory.Level{memory.LevelParentAgent, memory.LevelSquad} {
			if err := squat(evil, rowID(acme, level)); err != nil {
				t.Fatalf("another tenant storing a record under acme's %s row id: %v", level, err)
			}
		}
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		for _, level := range []memory.Level{memory.LevelParentAgent, memory.LevelSquad} {
			doc, err := w.Put(tctx, acme, working.Document{Level: level, Key: key, JSON: json.RawMessage(`["acme"]`)})
			if err != nil {
				t.Fatalf("acme's Put at %s after another tenant took the id: %v", level, err)
			}
			if _, err := w.Update(tctx, acme, level, key, "", func(working.Document, bool) (json.RawMessage, error) { return json.RawMessage(`["acme",2]`), nil }); err != nil {
				t.Fatalf("acme's Update at %s after another tenant took the id: %v", level, err)
			}
			if got, err := w.Get(ctx, acme, level, key); err != nil || string(got.JSON) != `["acme",2]` || got.Version != doc.Version+1 {
				t.Errorf("acme's %s row: %+v, %v", level, got, err)
			}
		}
		// After: evil writing the same ids again learns nothing (no
		// conflict), and acme's rows stay.
		for _, level := range []memory.Level{memory.LevelParentAgent, memory.LevelSquad} {
			if err := squat(evil, rowID(acme, level)); err != nil {
				t.Errorf("another tenant rewriting a record under acme's %s row id: %v (an existence oracle)", level, err)
			}
			if got, err := w.Get(ctx, acme, level, key); err != nil || string(got.JSON) != `["acme",2]` {
				t.Errorf("acme's %s row after the other tenant's writes: %+v, %v", level, got, err)
			}
		}
		if m, err := w.LoadMerged(ctx, acme, key); err != nil || string(m.JSON) != `["acme",2]` {
			t.Errorf("acme's LoadMerged: %s, %v", m.JSON, err)
		}

		// Within the tenant: another user takes the id of a row acme has
		// not written yet.
		mallory := acme
		mallory.User = "mallory"
		held := "held_key"
		if err := st.Add(ctx, mallory, memory.Record{ID: memory.ContentID(memory.KindDocument, acme.Only(memory.LevelSquadAgent.Keyed()), held), Kind: memory.KindFact, Content: "squatted"}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err := w.Update(tctx, acme, memory.LevelSquadAgent, held, "", func(working.Document, bool) (json.RawMessage, error) { return json.RawMessage(`1`), nil })
		if !errors.Is(err, memory.ErrPermissionDenied) {
			t.Fatalf("Update of a row whose id another identity holds: %v, want ErrPermissionDenied", err)
		}
		if tctx.Err() != nil {
			t.Fatalf("Update retried until its context ended (%s)", time.Since(start))
		}
		if !strings.Contains(err.Error(), "SQUAD_AGENT") || !strings.Contains(err.Error(), held) {
			t.Errorf("the refusal %q does not name the level and key", err)
		}
		if strings.Contains(err.Error(), memory.ContentID(memory.KindDocument, acme.Only(memory.LevelSquadAgent.Keyed()), held)) {
			t.Errorf("the refusal %q names the internal record id", err)
		}
		if _, err := w.Put(tctx, acme, working.Document{Level: memory.LevelSquadAgent, Key: held, JSON: json.RawMessage(`1`)}); !errors.Is(err, memory.ErrPermissionDenied) {
			t.Errorf("Put of a row whose id another identity holds: %v, want ErrPermissionDenied", err)
		}
	})
}

// TestWorkingVersions checks that Put returns the version it stored, so
// a caller can Swap without a Get, and that a lost race names the level
// and key rather than the record id.
func TestWorkingVersions(t *testing.T) {
	forEachWorkingDriver(t, func(t *testing.T, open func() driver.Driver) {
		ctx := context.Background()
		w, _ := newWorking(t, open(), working.Options{})
		doc := working.Document{Level: memory.LevelSquadAgent, Key: "draft", JSON: json.RawMessage(`{"v":1}`)}
		for want := int64(1); want <= 3; want++ {
			got, err := w.Put(ctx, analyst, doc)
			if err != nil || got.Version != want {
				t.Fatalf("Put number %d returned version %d, %v", want, got.Version, err)
			}
		}
		doc.JSON = json.RawMessage(`{"v":4}`)
		swapped, err := w.Swap(ctx, analyst, doc, 3)
		if err != nil || swapped.Version != 4 {
			t.Fatalf("Swap from the version Put returned: %+v, %v", swapped, err)
		}
		_, err = w.Swap(ctx, analyst, doc, 3)
		if !errors.Is(err, memory.ErrConflict) {
			t.Fatalf("a stale Swap: %v, want ErrConflict", err)
		}
		id := memory.ContentID(memory.KindDocument, analyst.Only(memory.LevelSquadAgent.Keyed()), "draft")
		if msg := err.Error(); !strings.Contains(msg, "SQUAD_AGENT") || !strings.Contains(msg, `"draft"`) || strings.Contains(msg, id) {
			t.Errorf("the conflict %q should name the level and key, not the record id %s", msg, id)
		}
	})
}
