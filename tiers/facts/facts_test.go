package facts_test

import (
	"slices"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/tiers/facts"
)

// A fact is stored once per writer identity, under memory.NewFact's id,
// attributed to the writer's whole identity, with its sources; adding its
// text again changes nothing.
func TestAddDedupesAndKeepsProvenance(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		f, _ := newFacts(t, d)
		first := mustAdd(t, f, alice, extract.Fact{Text: "Alice is vegetarian", Sources: []string{"turn-2", "turn-1"}})[0]
		if first.Status != facts.Created || first.Replaced != "" {
			t.Fatalf("first add: status %s, replaced %q; want created, none", first.Status, first.Replaced)
		}
		r := first.Record
		if want := memory.NewFact(alice, "Alice is vegetarian", r.Created).ID; r.ID != want {
			t.Errorf("id %s, want memory.NewFact's %s", r.ID, want)
		}
		if r.Kind != memory.KindFact || r.Identity != alice || r.Version != 1 || r.Tokens == 0 {
			t.Errorf("record %+v: want a live fact of alice's whole identity, version 1, tokens counted", r)
		}

		again := mustAdd(t, f, alice,
			extract.Fact{Text: "Alice is vegetarian", Sources: []string{"turn-9"}},
			extract.Fact{Text: "Alice is vegetarian"})
		for i, a := range again {
			if a.Status != facts.Existing || a.Record.ID != r.ID || a.Record.Version != 1 {
				t.Errorf("re-add %d: status %s, record %s v%d; want existing %s v1", i, a.Status, a.Record.ID, a.Record.Version, r.ID)
			}
		}
		got := mustGet(t, f, alice, memory.LevelSession, r.ID)
		src, err := facts.Sources(got)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(src, []string{"turn-2", "turn-1"}) {
			t.Errorf("sources %q, want the first add's [turn-2 turn-1]", src)
		}
		if got.Content != r.Content || got.Tokens != r.Tokens || got.Version != r.Version || !got.Created.Equal(r.Created) {
			t.Errorf("Get returned %+v, Add reported %+v", got, r)
		}
		wantTexts(t, "list", listTexts(t, f, alice, memory.LevelUser, true), []string{"Alice is vegetarian"})

		// The same text in another session of hers is another record:
		// facts are deduplicated within the writer's identity.
		other := mustAdd(t, f, aliceLater, extract.Fact{Text: "Alice is vegetarian"})[0]
		if other.Status != facts.Created || other.Record.ID == r.ID {
			t.Errorf("the text in session s2: status %s, id %s; want created under another id", other.Status, other.Record.ID)
		}
		if src, _ := facts.Sources(other.Record); src != nil {
			t.Errorf("a fact added without sources has sources %q", src)
		}
	})
}

// Update supersedes: the old fact is kept as superseded, with its
// interval and successor, no longer searched but listed and in History.
func TestUpdateSupersedesAndKeepsHistory(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		f, _ := newFacts(t, d)
		old := mustAdd(t, f, alice, extract.Fact{Text: "Alice lives in Paris", Sources: []string{"t1"}})[0].Record
		mustAdd(t, f, alice, extract.Fact{Text: "Alice has a cat named Tom"})
		wantTexts(t, "search before", searchTexts(t, f, alice, memory.LevelAgent, "Paris"), []string{"Alice lives in Paris"})

		upd, err := f.Update(ctx, alice, old.ID, "Alice lives in Berlin")
		if err != nil {
			t.Fatal(err)
		}
		if upd.Kind != memory.KindFact || upd.Metadata[facts.SupersedesKey] != old.ID || upd.Identity != alice || upd.Version != 1 {
			t.Fatalf("new fact %+v: want a live fact of alice superseding %s", upd, old.ID)
		}
		if got := mustGet(t, f, alice, memory.LevelSession, upd.ID); got.Content != "Alice lives in Berlin" || got.Version != 1 {
			t.Fatalf("Get of the new fact: %+v", got)
		}
		sup := mustGet(t, f, alice, memory.LevelUser, old.ID)
		if sup.Kind != memory.KindSuperseded || sup.Content != old.Content || sup.Metadata[facts.SupersededByKey] != upd.ID || !sup.Created.Equal(old.Created) {
			t.Fatalf("old fact after update: %+v; want it superseded by %s, content and creation kept", sup, upd.ID)
		}
		if src, _ := facts.Sources(sup); !slices.Equal(src, []string{"t1"}) {
			t.Errorf("the superseded fact's sources are %q, want [t1]", src)
		}
		from, until, err := facts.Validity(sup)
		if err != nil {
			t.Fatal(err)
		}
		if !from.Equal(old.Created) || !until.Equal(upd.Created) {
			t.Errorf("old fact valid %s to %s, want %s to %s (the new fact's creation)", from, until, old.Created, upd.Created)
		}
		if from, until, err := facts.Validity(upd); err != nil || !from.Equal(upd.Created) || !until.IsZero() {
			t.Errorf("new fact valid %s to %s (%v), want from its creation, open", from, until, err)
		}

		if got := searchTexts(t, f, alice, memory.LevelAgent, "Paris"); len(got) != 0 {
			t.Errorf("search for Paris after the update found %q; superseded facts are never searched", got)
		}
		wantTexts(t, "search Berlin", searchTexts(t, f, alice, memory.LevelAgent, "which city, Berlin?"), []string{"Alice lives in Berlin"})
		wantTexts(t, "list live", listTexts(t, f, alice, memory.LevelSession, false), []string{"Alice lives in Berlin", "Alice has a cat named Tom"})
		wantTexts(t, "list all", listTexts(t, f, alice, memory.LevelSession, true), []string{"Alice lives in Berlin", "Alice has a cat named Tom", "Alice lives in Paris"})

		// A second update continues the chain; History from any version
		// returns all three, oldest first.
		last, err := f.Update(ctx, alice, upd.ID, "Alice lives in Rome")
		if err != nil {
			t.Fatal(err)
		}
		for _, from := range []string{old.ID, upd.ID, last.ID} {
			h, err := f.History(ctx, alice, memory.LevelAgent, from)
			if err != nil {
				t.Fatal(err)
			}
			wantTexts(t, "history from "+from, texts(h), []string{"Alice lives in Paris", "Alice lives in Berlin", "Alice lives in Rome"})
			if h[0].Kind != memory.KindSuperseded || h[1].Kind != memory.KindSuperseded || h[2].Kind != memory.KindFact {
				t.Errorf("history kinds %s %s %s, want superseded superseded fact", h[0].Kind, h[1].Kind, h[2].Kind)
			}
			for i := 1; i < len(h); i++ {
				_, ended, _ := facts.Validity(h[i-1])
				if !ended.Equal(h[i].Created) {
					t.Errorf("version %d ended %s, version %d began %s: want contiguous intervals", i-1, ended, i, h[i].Created)
				}
			}
		}
		h, err := f.History(ctx, alice, memory.LevelUser, "Alice has a cat named Tom")
		wantErr(t, "history of an id that is a text", err, memory.ErrNotFound)
		if h != nil {
			t.Errorf("history of a missing fact returned %d records", len(h))
		}
	})
}

// Re-adding the text of a superseded fact changes nothing: the newer fact
// stays live, the old one superseded (the bug of the issue: re-adding a
// fact's old content overwrote its update).
func TestReaddingOldTextNeverReverts(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		f, _ := newFacts(t, d)
		old := mustAdd(t, f, alice, extract.Fact{Text: "Alice lives in Paris"})[0].Record
		upd, err := f.Update(ctx, alice, old.ID, "Alice lives in Berlin")
		if err != nil {
			t.Fatal(err)
		}
		before := mustGet(t, f, alice, memory.LevelSession, old.ID)

		re := mustAdd(t, f, alice, extract.Fact{Text: "Alice lives in Paris", Sources: []string{"t7"}})[0]
		if re.Status != facts.Superseded || re.Record.ID != old.ID || re.Record.Kind != memory.KindSuperseded {
			t.Fatalf("re-add of the old text: %s %s %s, want superseded %s", re.Status, re.Record.ID, re.Record.Kind, old.ID)
		}
		if after := mustGet(t, f, alice, memory.LevelSession, old.ID); after.Version != before.Version || after.Kind != memory.KindSuperseded {
			t.Errorf("the superseded record changed: version %d to %d, kind %s", before.Version, after.Version, after.Kind)
		}
		if got := mustGet(t, f, alice, memory.LevelSession, upd.ID); got.Kind != memory.KindFact || got.Version != 1 {
			t.Errorf("the newer fact after the re-add: %s v%d, want a live fact, unchanged", got.Kind, got.Version)
		}
		wantTexts(t, "live facts", listTexts(t, f, alice, memory.LevelSession, false), []string{"Alice lives in Berlin"})
		if got := searchTexts(t, f, alice, memory.LevelSession, "Paris"); len(got) != 0 {
			t.Errorf("search for Paris found %q", got)
		}

		// Nor does an Update to the old text, or an Add that claims to
		// supersede the newer fact with it.
		_, err = f.Update(ctx, alice, upd.ID, "Alice lives in Paris")
		wantErr(t, "update to a superseded text", err, memory.ErrInvalidArgument)
		re = mustAdd(t, f, alice, extract.Fact{Text: "Alice lives in Paris", Supersedes: upd.ID})[0]
		if re.Status != facts.Superseded || re.Replaced != "" {
			t.Errorf("add of the old text superseding the newer one: %s, replaced %q; want superseded, none", re.Status, re.Replaced)
		}
		wantTexts(t, "live facts at the end", listTexts(t, f, alice, memory.LevelSession, false), []string{"Alice lives in Berlin"})

		// Once the superseded record is deleted, the text is stored anew.
		if err := f.Delete(ctx, alice, old.ID); err != nil {
			t.Fatal(err)
		}
		if a := mustAdd(t, f, alice, extract.Fact{Text: "Alice lives in Paris"})[0]; a.Status != facts.Created {
			t.Errorf("add after deleting the superseded record: %s, want created", a.Status)
		}
	})
}

// The cases of Update besides the plain one.
func TestUpdateCases(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		f, _ := newFacts(t, d)
		add := func(text string) memory.Record { return mustAdd(t, f, alice, extract.Fact{Text: text})[0].Record }
		a, c := add("Alice drinks tea"), add("Alice drinks coffee")

		_, err := f.Update(ctx, alice, a.ID, "Alice drinks tea")
		wantErr(t, "update to the fact's own text", err, memory.ErrInvalidArgument)
		_, err = f.Update(ctx, alice, memory.NewFact(alice, "never stored", a.Created).ID, "x")
		wantErr(t, "update of a missing fact", err, memory.ErrNotFound)

		// To a text stored as a live fact: the old one is superseded by
		// it, which is returned unchanged.
		got, err := f.Update(ctx, alice, a.ID, "Alice drinks coffee")
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != c.ID || got.Version != c.Version || got.Kind != memory.KindFact {
			t.Errorf("update to an existing text returned %s v%d %s, want %s v%d unchanged", got.ID, got.Version, got.Kind, c.ID, c.Version)
		}
		if s := mustGet(t, f, alice, memory.LevelSession, a.ID); s.Kind != memory.KindSuperseded || s.Metadata[facts.SupersededByKey] != c.ID {
			t.Errorf("old fact %s superseded by %q, want superseded by %s", s.Kind, s.Metadata[facts.SupersededByKey], c.ID)
		}
		h, err := f.History(ctx, alice, memory.LevelSession, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantTexts(t, "history of the old fact", texts(h), []string{"Alice drinks tea", "Alice drinks coffee"})

		// Again with the same text: the update is done; it returns the
		// fact. With another text: the fact is superseded already.
		if again, err := f.Update(ctx, alice, a.ID, "Alice drinks coffee"); err != nil || again.ID != c.ID {
			t.Errorf("repeated update: %s, %v; want %s", again.ID, err, c.ID)
		}
		_, err = f.Update(ctx, alice, a.ID, "Alice drinks water")
		wantErr(t, "update of a superseded fact", err, memory.ErrConflict)
		wantTexts(t, "live facts", listTexts(t, f, alice, memory.LevelSession, false), []string{"Alice drinks coffee"})
	})
}

// Add with Supersedes supersedes a live fact of the writer's, and stores
// the fact superseding nothing when Supersedes names no such fact.
func TestAddSupersedes(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		f, _ := newFacts(t, d)
		a := mustAdd(t, f, alice, extract.Fact{Text: "Alice works at Initech"})[0].Record
		bobs := mustAdd(t, f, bob, extract.Fact{Text: "Bob works at Initech"})[0].Record

		out := mustAdd(t, f, alice,
			extract.Fact{Text: "Alice works at Globex", Sources: []string{"t3"}, Supersedes: a.ID},
			extract.Fact{Text: "Alice likes jazz", Supersedes: memory.NewFact(alice, "never stored", a.Created).ID},
			extract.Fact{Text: "Alice knows Bob", Supersedes: bobs.ID},
			extract.Fact{Text: "Alice works at Hooli", Supersedes: a.ID})
		want := []struct {
			status   facts.Status
			replaced string
		}{{facts.Created, a.ID}, {facts.Created, ""}, {facts.Created, ""}, {facts.Created, ""}}
		for i, w := range want {
			if out[i].Status != w.status || out[i].Replaced != w.replaced {
				t.Errorf("fact %d: %s, replaced %q; want %s, %q", i, out[i].Status, out[i].Replaced, w.status, w.replaced)
			}
			if sup := out[i].Record.Metadata[facts.SupersedesKey]; sup != w.replaced {
				t.Errorf("fact %d records that it supersedes %q, want %q", i, sup, w.replaced)
			}
		}
		if s := mustGet(t, f, alice, memory.LevelSession, a.ID); s.Kind != memory.KindSuperseded || s.Metadata[facts.SupersededByKey] != out[0].Record.ID {
			t.Errorf("the superseded fact: %s by %q", s.Kind, s.Metadata[facts.SupersededByKey])
		}
		if b := mustGet(t, f, bob, memory.LevelSession, bobs.ID); b.Kind != memory.KindFact || b.Version != 1 {
			t.Errorf("bob's fact, named by alice's Supersedes: %s v%d, want untouched", b.Kind, b.Version)
		}
		wantTexts(t, "alice's live facts", listTexts(t, f, alice, memory.LevelSession, false),
			[]string{"Alice works at Hooli", "Alice knows Bob", "Alice likes jazz", "Alice works at Globex"})

		// An existing live text superseding a fact: Existing, and the fact
		// is superseded by it.
		c := mustAdd(t, f, alice, extract.Fact{Text: "Alice plays chess"})[0].Record
		e := mustAdd(t, f, alice, extract.Fact{Text: "Alice likes jazz", Supersedes: c.ID})[0]
		if e.Status != facts.Existing || e.Replaced != c.ID || e.Record.ID != out[1].Record.ID {
			t.Errorf("existing text superseding a fact: %s, replaced %q", e.Status, e.Replaced)
		}
		if s := mustGet(t, f, alice, memory.LevelSession, c.ID); s.Kind != memory.KindSuperseded {
			t.Errorf("fact superseded by an existing text is %s", s.Kind)
		}
	})
}

// Delete removes one fact record in one call; the versions around it
// stay.
func TestDelete(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		f, _ := newFacts(t, d)
		old := mustAdd(t, f, alice, extract.Fact{Text: "Alice lives in Paris"})[0].Record
		upd, err := f.Update(ctx, alice, old.ID, "Alice lives in Berlin")
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Delete(ctx, alice, upd.ID); err != nil {
			t.Fatal(err)
		}
		_, err = f.Get(ctx, alice, memory.LevelSession, upd.ID)
		wantErr(t, "get after delete", err, memory.ErrNotFound)
		wantErr(t, "second delete", f.Delete(ctx, alice, upd.ID), memory.ErrNotFound)
		h, err := f.History(ctx, alice, memory.LevelSession, old.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantTexts(t, "history without the deleted version", texts(h), []string{"Alice lives in Paris"})
		if got := searchTexts(t, f, alice, memory.LevelSession, "Berlin"); len(got) != 0 {
			t.Errorf("search found the deleted fact: %q", got)
		}

		// A superseded fact is deleted the same way.
		if err := f.Delete(ctx, alice, old.ID); err != nil {
			t.Fatal(err)
		}
		wantTexts(t, "facts left", listTexts(t, f, alice, memory.LevelSession, true), nil)
	})
}
