package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// fakeStore is a textStore whose recall follows a script: for each
// question text, the dia_ids of the records to return, best first. A
// scripted dia_id no turn has gets a filler record carrying it; "!bare"
// gets a record without a dia_id.
type fakeStore struct {
	sample  string
	script  map[string][]string
	added   []memory.Record
	writers []memory.Identity
	asked   []fakeCall
	closed  bool

	addErr, searchErr, closeErr error
}

type fakeCall struct {
	id   memory.Identity
	q    memory.Query
	text string
	k    int
}

func (f *fakeStore) Add(ctx context.Context, id memory.Identity, recs ...memory.Record) error {
	if f.addErr != nil {
		return f.addErr
	}
	f.writers = append(f.writers, id)
	f.added = append(f.added, recs...)
	return nil
}

func (f *fakeStore) SearchText(ctx context.Context, id memory.Identity, q memory.Query, text string, k int) ([]driver.Match, error) {
	f.asked = append(f.asked, fakeCall{id, q, text, k})
	if f.searchErr != nil {
		return nil, f.searchErr
	}
	var out []driver.Match
	for i, d := range f.script[text] {
		r := memory.Record{ID: fmt.Sprintf("filler-%d", i), Metadata: map[string]string{diaKey: d}}
		if d == "!bare" {
			r.Metadata = nil
		}
		for _, a := range f.added {
			if a.Metadata[diaKey] == d {
				r = a
			}
		}
		out = append(out, driver.Match{Record: r, Score: float64(100 - i)})
	}
	return out, nil
}

func (f *fakeStore) Close() error {
	f.closed = true
	return f.closeErr
}

// fakeOpener returns an opener handing out fake stores with script, and
// the stores it opened.
func fakeOpener(script map[string][]string) (opener, *[]*fakeStore) {
	var opened []*fakeStore
	return func(ctx context.Context, sample string, _ time.Time) (textStore, error) {
		f := &fakeStore{sample: sample, script: script}
		opened = append(opened, f)
		return f, nil
	}, &opened
}

func fillers(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("X%d", i)
	}
	return out
}

// miniScript ranks miniData's first question's evidence second, the
// second question's tenth, and returns nothing for the fifth.
var miniScript = map[string][]string{
	"who said hello?": {"D1:2", "D1:1"},
	"what of ten?":    append(fillers(9), "D10:1", "D2:1"),
	"trick?":          nil,
}

func mini(t *testing.T) *Dataset {
	t.Helper()
	ds, err := Parse([]byte(miniData))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestEvaluatorScores(t *testing.T) {
	open, opened := fakeOpener(miniScript)
	e := &Evaluator{Open: open, Recall: textRecall}
	r, err := e.Run(context.Background(), mini(t))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Summary(), "overall hit@1=0.000 hit@5=0.500 hit@10=1.000 hit@20=1.000 mrr=0.300"; got != want {
		t.Errorf("summary\n%s, want\n%s", got, want)
	}
	c1, c4, c5 := r.ByCategory[1], r.ByCategory[4], r.ByCategory[5]
	if c1.N != 1 || c1.Hits != [4]int{0, 1, 1, 1} || c1.RR != 0.5 {
		t.Errorf("category 1: %+v", c1)
	}
	if c4.N != 1 || c4.Hits != [4]int{0, 0, 1, 1} || c4.RR != 0.1 {
		t.Errorf("category 4: %+v", c4)
	}
	if c5.N != 1 || c5.Hits != [4]int{} || c5.RR != 0 {
		t.Errorf("category 5: %+v", c5)
	}
	if r.ByCategory[2].N != 0 || r.ByCategory[3].N != 0 {
		t.Errorf("skipped questions were scored: %+v %+v", r.ByCategory[2], r.ByCategory[3])
	}
	if r.Skipped[skipUnknownEvidence] != 1 || r.Skipped[skipNoEvidence] != 1 || len(r.Skipped) != 2 {
		t.Errorf("skipped %v", r.Skipped)
	}
	if r.Conversations != 1 || r.Turns != 4 || r.Questions != 5 || len(r.Latencies) != 3 {
		t.Errorf("counts: %d conversations, %d turns, %d questions, %d latencies", r.Conversations, r.Turns, r.Questions, len(r.Latencies))
	}

	if len(*opened) != 1 {
		t.Fatalf("%d stores opened, want 1", len(*opened))
	}
	f := (*opened)[0]
	if !f.closed {
		t.Error("the store was not closed")
	}
	want := memory.Identity{Tenant: "locomo", User: "conv-x", Agent: "eval"}
	session := func(n string) memory.Identity {
		id := want
		id.Session = "conv-x/" + n
		return id
	}
	// One Add per session, by that session.
	if wantWriters := []memory.Identity{session("1"), session("2"), session("10")}; f.sample != "conv-x" || !slices.Equal(f.writers, wantWriters) {
		t.Errorf("store for %q written by %v, want %v", f.sample, f.writers, wantWriters)
	}
	turns := []struct{ dia, role, content, session string }{
		{"D1:1", "user", "Ann: hello bob", "1"},
		{"D1:2", "assistant", "Bob: hi ann", "1"},
		{"D2:1", "user", "Ann: two one", "2"},
		{"D10:1", "assistant", "Bob: ten one", "10"},
	}
	if len(f.added) != len(turns) {
		t.Fatalf("%d records added, want %d", len(f.added), len(turns))
	}
	for i, w := range turns {
		a := f.added[i]
		if a.Metadata[diaKey] != w.dia || a.Label != w.role || a.Content != w.content || a.Kind != memory.KindTurn || a.Identity != session(w.session) || a.ID == "" {
			t.Errorf("record %d: %+v, want %+v", i, a, w)
		}
		if i > 0 && !a.Created.After(f.added[i-1].Created) {
			t.Errorf("record %d created %v, not after %v", i, a.Created, f.added[i-1].Created)
		}
	}
	var texts []string
	for _, c := range f.asked {
		texts = append(texts, c.text)
		if c.id != want || c.k != Depth || c.q.Level != memory.LevelUser || !slices.Equal(c.q.Kinds, []memory.Kind{memory.KindTurn}) {
			t.Errorf("recall %+v", c)
		}
	}
	if got := strings.Join(texts, "|"); got != "who said hello?|what of ten?|trick?" {
		t.Errorf("questions asked %q", got)
	}
}

// TestEvaluatorStorePerConversation checks that each conversation gets a
// store of its own and only its own turns.
func TestEvaluatorStorePerConversation(t *testing.T) {
	inner := strings.TrimSpace(miniData)
	inner = inner[1 : len(inner)-1]
	two := "[" + inner + "," + strings.Replace(inner, `"conv-x"`, `"conv-y"`, 1) + "]"
	ds, err := Parse([]byte(two))
	if err != nil {
		t.Fatal(err)
	}
	open, opened := fakeOpener(miniScript)
	r, err := (&Evaluator{Open: open, Recall: textRecall}).Run(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	if r.Overall().N != 4 {
		t.Errorf("%d questions of categories 1-4 scored, want 4", r.Overall().N)
	}
	if len(*opened) != 2 {
		t.Fatalf("%d stores opened, want 2", len(*opened))
	}
	for i, sample := range []string{"conv-x", "conv-y"} {
		f := (*opened)[i]
		if f.sample != sample || len(f.added) != 4 || !f.closed {
			t.Errorf("store %d: for %q, %d records, closed %v", i, f.sample, len(f.added), f.closed)
		}
		for _, a := range f.added {
			if a.Identity.User != sample || !strings.HasPrefix(a.Identity.Session, sample+"/") {
				t.Errorf("store of %s holds a record of %+v", sample, a.Identity)
			}
		}
	}
}

func TestEvaluatorStrict(t *testing.T) {
	open, opened := fakeOpener(miniScript)
	_, err := (&Evaluator{Open: open, Recall: textRecall, Strict: true}).Run(context.Background(), mini(t))
	if err == nil || !strings.Contains(err.Error(), `"typo?"`) || !strings.Contains(err.Error(), `"D1:1; D1:2"`) || !strings.Contains(err.Error(), "conv-x, question 3") {
		t.Errorf("strict run: %v, want an error naming the question and its evidence", err)
	}
	if len(*opened) != 0 {
		t.Error("a store was opened before the data was found wrong")
	}
}

func TestEvaluatorErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name   string
		script map[string][]string
		set    func(*fakeStore)
		open   error
		want   string
	}{
		{name: "open", open: boom, want: "conversation conv-x: opening its store: boom"},
		{name: "add", set: func(f *fakeStore) { f.addErr = boom }, want: "conversation conv-x: adding its turns: boom"},
		{name: "search", set: func(f *fakeStore) { f.searchErr = boom }, want: `conversation conv-x, question 1 "who said hello?": recall: boom`},
		{name: "close", set: func(f *fakeStore) { f.closeErr = boom }, want: "conversation conv-x: closing its store: boom"},
		{name: "foreign record", script: map[string][]string{"who said hello?": {"!bare"}}, want: "recall returned record filler-0, which has no dia_id"},
		{name: "too many", script: map[string][]string{"who said hello?": fillers(Depth + 1)}, want: "recall returned 21 records, more than the 20 asked for"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f *fakeStore
			open := func(ctx context.Context, sample string, _ time.Time) (textStore, error) {
				if tc.open != nil {
					return nil, tc.open
				}
				f = &fakeStore{sample: sample, script: tc.script}
				if tc.set != nil {
					tc.set(f)
				}
				return f, nil
			}
			_, err := (&Evaluator{Open: open, Recall: textRecall}).Run(context.Background(), mini(t))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if tc.open == nil && !errors.Is(err, boom) && tc.set != nil {
				t.Errorf("error %v does not wrap the store's", err)
			}
			if f != nil && !f.closed {
				t.Error("the store was left open")
			}
		})
	}
}

func TestProgress(t *testing.T) {
	var b strings.Builder
	now := time.Unix(0, 0)
	p := NewProgress(&b, time.Second)
	p.now = func() time.Time { return now }
	p.Update("question %d/%d", 1, 100)
	p.Update("question %d/%d", 2, 100) // within the interval: not shown
	now = now.Add(time.Second)
	p.Update("q %d", 3) // shorter: padded over the old line
	p.Log("a warning")
	p.Update("question %d/%d", 4, 100) // first after a warning: shown at once
	p.Done()
	want := "\rquestion 1/100" + "\rq 3           " + "\r   \r" + "a warning\n" + "\rquestion 4/100" + "\r              \r"
	if b.String() != want {
		t.Errorf("progress wrote\n%q, want\n%q", b.String(), want)
	}
	var nilp *Progress
	nilp.Update("x")
	nilp.Log("x")
	nilp.Done()
}
