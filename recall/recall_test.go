package recall_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/recall"
)

var t0 = time.Date(2026, 5, 8, 13, 56, 0, 0, time.UTC)

// conversation stores turns said one second apart in session s of alice.
func conversation(t *testing.T, st *backend.Store, session string, start time.Time, lines ...string) memory.Identity {
	t.Helper()
	id := memory.Identity{Tenant: "acme", User: "alice", Agent: "bot", Session: session}
	var recs []memory.Record
	for i, line := range lines {
		role := memory.RoleUser
		if i%2 == 1 {
			role = memory.RoleAssistant
		}
		rec := memory.NewTurn(memory.Identity{}, role, line, start.Add(time.Duration(i)*time.Second))
		rec.ID = fmt.Sprintf("%s-%02d", session, i)
		recs = append(recs, rec)
	}
	if err := st.Add(context.Background(), id, recs...); err != nil {
		t.Fatal(err)
	}
	return id
}

func ids(res recall.Results) string {
	var out []string
	for _, r := range res.Hits {
		out = append(out, r.Record.ID)
	}
	return strings.Join(out, " ")
}

// TestNeighboursLend checks that a turn sharing no word with the query is
// recalled on the strength of the turns around it, ahead of a turn that
// shares one word but stands alone, and that the text score alone (no
// neighbours) does not find it.
func TestNeighboursLend(t *testing.T) {
	ctx := context.Background()
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer st.Close()
	alice := conversation(t, st, "s1", t0,
		"we went camping last weekend with the kids",
		"where did you go camping?",
		"at the beach, near the dunes!",
		"sounds lovely, was the camping weather good?",
		"by the way, my sister moved to Lisbon",
		"oh nice, Lisbon is beautiful",
		"she works at a bakery there",
		"tell her I said hi",
	)
	conversation(t, st, "s2", t0.Add(24*time.Hour), "the weather was awful today", "sorry to hear that")
	q := memory.Query{Level: memory.LevelUser}

	plain, err := recall.New(st, recall.Options{Neighbours: -1})
	if err != nil {
		t.Fatal(err)
	}
	got, err := plain.Recall(ctx, alice, q, "where did they go camping", 10)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ids(got), "s1-02") {
		t.Fatalf("without neighbours the answer turn, which shares no word with the query, was recalled: %s", ids(got))
	}

	r, err := recall.New(st, recall.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err = r.Recall(ctx, alice, q, "where did they go camping", 4)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ids(got), "s1-02") {
		t.Errorf("with neighbours the answer turn s1-02 is not among the top 4: %s", ids(got))
	}
	for i := 1; i < len(got.Hits); i++ {
		if got.Hits[i].Score > got.Hits[i-1].Score {
			t.Errorf("results out of order at %d: %s", i, ids(got))
		}
	}
	again, err := r.Recall(ctx, alice, q, "where did they go camping", 4)
	if err != nil || ids(again) != ids(got) {
		t.Errorf("a second recall = %s, %v; want the same %s", ids(again), err, ids(got))
	}
	// Turns lend only within their session: s2-00 (weather) lends to
	// s2-01, but not to s1-06 and s1-07, the turns said just before it in
	// another session, which share no word with the query and whose own
	// neighbours do not either.
	w, err := r.Recall(ctx, alice, q, "weather", 10)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ids(w), "s2-01") {
		t.Errorf("s2-01 follows a weather turn in its session and was not recalled: %s", ids(w))
	}
	for _, res := range w.Hits {
		if res.Record.ID == "s1-06" || res.Record.ID == "s1-07" {
			t.Errorf("%s was lent a score across sessions: %s", res.Record.ID, ids(w))
		}
	}

	// Facts only: no turns, so no lending, and no turn comes back.
	if got, err := r.Recall(ctx, alice, memory.Query{Level: memory.LevelUser, Kinds: []memory.Kind{memory.KindFact}}, "camping", 5); err != nil || len(got.Hits) != 0 {
		t.Errorf("a facts-only recall over turns = %s, %v; want nothing", ids(got), err)
	}
	// Another user's recall sees none of alice's turns.
	bob := memory.Identity{Tenant: "acme", User: "bob", Agent: "bot", Session: "s1"}
	if got, err := r.Recall(ctx, bob, q, "camping", 5); err != nil || len(got.Hits) != 0 {
		t.Errorf("bob's recall = %s, %v; want nothing of alice's", ids(got), err)
	}
}

// TestOptionsAndErrors checks the refusals of New and Recall.
func TestOptionsAndErrors(t *testing.T) {
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer st.Close()
	for _, opt := range []recall.Options{
		{Candidates: -1}, {Candidates: driver.MaxSearchK + 1}, {Neighbours: 101}, {NeighbourWeight: -1}, {NeighbourWeight: 11},
	} {
		if _, err := recall.New(st, opt); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("New(%+v) = %v, want ErrInvalidArgument", opt, err)
		}
	}
	plain := backend.NewStore(struct{ driver.Driver }{inmem.New(inmem.Options{})}, backend.StoreOptions{})
	if _, err := recall.New(plain, recall.Options{}); !errors.Is(err, memory.ErrUnimplemented) {
		t.Errorf("New over a driver without text search = %v, want ErrUnimplemented", err)
	}
	r, err := recall.New(st, recall.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	alice := memory.Identity{Tenant: "acme", User: "alice"}
	for _, k := range []int{0, driver.MaxSearchK + 1} {
		if _, err := r.Recall(ctx, alice, memory.Query{Level: memory.LevelUser}, "x", k); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("Recall with k %d = %v, want ErrInvalidArgument", k, err)
		}
	}
	if _, err := r.Recall(ctx, memory.Identity{Tenant: "acme"}, memory.Query{Level: memory.LevelUser}, "x", 5); !errors.Is(err, memory.ErrIncompleteScope) {
		t.Errorf("Recall at the user level without a user = %v, want ErrIncompleteScope", err)
	}
	if _, err := r.Recall(ctx, alice, memory.Query{Level: memory.LevelUser}, "bad \xff", 5); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("Recall of invalid UTF-8 = %v, want ErrInvalidArgument", err)
	}
}

// TestSpeakerBoost checks that a record whose speaker the query names
// outranks an equal record by someone else, and that the boost can be
// turned off.
func TestSpeakerBoost(t *testing.T) {
	ctx := context.Background()
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer st.Close()
	who := memory.Identity{Tenant: "acme", User: "alice", Agent: "bot", Session: "s1"}
	for i, sp := range []string{"Melanie", "Caroline"} {
		rec := memory.Record{ID: "f-" + sp, Kind: memory.KindFact, Content: "went hiking in the hills",
			Metadata: map[string]string{memory.SpeakerKey: sp}, Created: t0.Add(time.Duration(i) * time.Second)}
		if err := st.Add(ctx, who, rec); err != nil {
			t.Fatal(err)
		}
	}
	q := memory.Query{Level: memory.LevelUser}
	for _, c := range []struct {
		boost float64
		want  string
	}{
		{0, "f-Melanie f-Caroline"},  // the default boost lifts Melanie's older fact
		{-1, "f-Caroline f-Melanie"}, // without it, the tie goes to the newer
	} {
		r, err := recall.New(st, recall.Options{SpeakerBoost: c.boost})
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Recall(ctx, who, q, "where did Melanie's family go hiking?", 2)
		if err != nil {
			t.Fatal(err)
		}
		if ids(got) != c.want {
			t.Errorf("SpeakerBoost %v: recalled %s, want %s", c.boost, ids(got), c.want)
		}
	}
}
