package recall_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/recall"
)

// recallIDs recalls k records for text at the user level with opt.
func recallIDs(t *testing.T, st *backend.Store, who memory.Identity, opt recall.Options, text string, k int) string {
	t.Helper()
	r, err := recall.New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Recall(context.Background(), who, memory.Query{Level: memory.LevelUser}, text, k)
	if err != nil {
		t.Fatal(err)
	}
	return ids(got)
}

// TestSessionWeight checks that a turn of a session that dwells on the
// query's topic outranks an equal turn of a session that mentions it
// once, and that the weight can be turned off.
func TestSessionWeight(t *testing.T) {
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer st.Close()
	// The two "pottery" turns are alike; s1's other turns talk pottery
	// too, far enough away (beyond two turns) to lend it nothing.
	conversation(t, st, "s1", t0,
		"I finished a pottery class", "filler one", "filler two", "filler three",
		"the pottery kiln was hot", "pottery glaze is tricky", "more pottery tomorrow")
	who := conversation(t, st, "s2", t0.Add(time.Hour),
		"I finished a pottery class", "filler one", "filler two", "filler three",
		"the weather was hot", "glaze on donuts", "more cake tomorrow")
	for _, c := range []struct {
		weight float64
		want   string
	}{
		{0, "s1-00"},  // s1 as a whole matches better
		{-1, "s2-00"}, // alone, the tie goes to the newer turn
	} {
		if got := recallIDs(t, st, who, recall.Options{SessionWeight: c.weight, Neighbours: -1}, "pottery class", 1); got != c.want {
			t.Errorf("SessionWeight %v: recalled %s, want %s", c.weight, got, c.want)
		}
	}
}

// TestDateBoost checks that a record created on the day the query names
// outranks a better text match from another day, read in the Options'
// time zone, and that the boost can be turned off.
func TestDateBoost(t *testing.T) {
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer st.Close()
	who := memory.Identity{Tenant: "acme", User: "alice", Agent: "bot"}
	late := time.Date(2023, time.November, 9, 23, 30, 0, 0, time.UTC) // 10 November east of UTC
	recs := []memory.Record{
		{ID: "dated", Kind: memory.KindFact, Content: "cooked a new dish: coconut ice cream", Created: late},
		{ID: "better", Kind: memory.KindFact, Content: "a dish, a lovely dish, the dish of dishes", Created: late.AddDate(0, 1, 0)},
	}
	if err := st.Add(context.Background(), who, recs...); err != nil {
		t.Fatal(err)
	}
	east := time.FixedZone("UTC+2", 2*3600)
	for _, c := range []struct {
		text string
		opt  recall.Options
		want string
	}{
		{"what dish did she make on 9 November, 2022?", recall.Options{}, "better dated"}, // another year
		{"what dish did she make on 9 November, 2023?", recall.Options{}, "dated better"},
		{"what dish did she make on November 9?", recall.Options{}, "dated better"}, // any year
		{"what dish did she make in November 2023?", recall.Options{}, "dated better"},
		{"what dish did she make on 9 November, 2023?", recall.Options{DateBoost: -1}, "better dated"},
		{"what dish did she make on 9 November, 2023?", recall.Options{Location: east}, "better dated"},
		{"what dish did she make on 10 November, 2023?", recall.Options{Location: east}, "dated better"},
	} {
		if got := recallIDs(t, st, who, c.opt, c.text, 2); got != c.want {
			t.Errorf("%q with %+v: recalled %s, want %s", c.text, c.opt, got, c.want)
		}
	}
}

// TestQuestionPenalty checks that a turn asking about the query's topic
// ranks below the answer it gets when both match alike, and above it
// without the penalty.
func TestQuestionPenalty(t *testing.T) {
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer st.Close()
	who := conversation(t, st, "s1", t0,
		"favorite game here is chess",
		"what is your favorite game?")
	for _, c := range []struct {
		penalty float64
		want    string
	}{
		{0, "s1-00 s1-01"},
		{-1, "s1-01 s1-00"}, // the question is newer and shorter
	} {
		if got := recallIDs(t, st, who, recall.Options{QuestionPenalty: c.penalty}, "favorite game", 2); got != c.want {
			t.Errorf("QuestionPenalty %v: recalled %s, want %s", c.penalty, got, c.want)
		}
	}
}

// TestRecency checks that with a half-life the newer of two equal matches
// comes first by its recency, the older when it matches much better only
// with a small weight, and that bad settings are refused.
func TestRecency(t *testing.T) {
	now := t0.Add(100 * 24 * time.Hour)
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{Clock: func() time.Time { return now }})
	defer st.Close()
	who := memory.Identity{Tenant: "acme", User: "alice", Agent: "bot"}
	recs := []memory.Record{
		{ID: "old", Kind: memory.KindFact, Content: "tea tea tea, green tea", Created: t0},
		{ID: "new", Kind: memory.KindFact, Content: "tea once, coffee twice, coffee", Created: now.Add(-time.Hour)},
	}
	if err := st.Add(context.Background(), who, recs...); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opt  recall.Options
		want string
	}{
		{recall.Options{}, "old new"}, // no recency: the better match
		{recall.Options{RecencyHalfLife: 7 * 24 * time.Hour}, "new old"},
		{recall.Options{RecencyHalfLife: 7 * 24 * time.Hour, RecencyWeight: 0.05}, "old new"},
	} {
		if got := recallIDs(t, st, who, c.opt, "tea", 2); got != c.want {
			t.Errorf("%+v: recalled %s, want %s", c.opt, got, c.want)
		}
	}
	for _, bad := range []recall.Options{{RecencyHalfLife: -time.Second}, {RecencyWeight: 1.5}, {Diversity: -0.1}, {Diversity: 2}, {Fusion: 7}, {SessionWeight: 11}, {DateBoost: 101}, {QuestionPenalty: 1.5}} {
		if _, err := recall.New(st, bad); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("New(%+v) = %v, want ErrInvalidArgument", bad, err)
		}
	}
}

// TestDiversity checks that with diversity a record saying something new
// comes before a near copy of the best match that outscores it.
func TestDiversity(t *testing.T) {
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer st.Close()
	who := memory.Identity{Tenant: "acme", User: "alice", Agent: "bot"}
	recs := []memory.Record{
		{ID: "a", Kind: memory.KindFact, Content: "the parcel was late, the parcel was lost", Created: t0},
		{ID: "a-copy", Kind: memory.KindFact, Content: "the parcel was late, the parcel was lost again", Created: t0.Add(time.Second)},
		{ID: "b", Kind: memory.KindFact, Content: "refund for the late parcel issued by the courier", Created: t0.Add(2 * time.Second)},
	}
	if err := st.Add(context.Background(), who, recs...); err != nil {
		t.Fatal(err)
	}
	// "again" is a stopword: the copy ties with a, and is newer.
	if got := recallIDs(t, st, who, recall.Options{}, "late parcel", 3); got != "a-copy a b" {
		t.Fatalf("without diversity: recalled %s, want a-copy a b", got)
	}
	if got := recallIDs(t, st, who, recall.Options{Diversity: 0.5}, "late parcel", 3); got != "a-copy b a" {
		t.Errorf("with diversity: recalled %s, want a-copy b a", got)
	}
}
