package recall_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/fs"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/embedding/embeddingtest"
	"github.com/agentmem/memory/recall"
)

var convWords = strings.Fields(`camping beach dunes kids weekend painting pottery class adoption agency
	counselor support group dog puppy hiking lake sunrise book novel library concert guitar violin
	school career job interview pride parade festival family mother sister brother trip paris`)

// randomConversations returns four sessions of 40 turns of two speakers,
// said a month apart from January 2023, some asking questions and some
// without text, and a few facts.
func randomConversations(rnd *rand.Rand) (memory.Identity, []memory.Record) {
	who := memory.Identity{Tenant: "acme", User: "alice", Agent: "bot"}
	var recs []memory.Record
	for s := range 4 {
		id := who
		id.Session = fmt.Sprintf("s%d", s)
		start := time.Date(2023, time.Month(1+s), 10, 9, 0, 0, 0, time.UTC)
		for i := range 40 {
			words := make([]string, 3+rnd.IntN(10))
			for j := range words {
				words[j] = convWords[rnd.IntN(len(convWords))]
			}
			text := strings.Join(words, " ")
			switch rnd.IntN(10) {
			case 0:
				text += "?"
			case 1:
				text = ""
			}
			rec := memory.NewTurn(memory.Identity{}, memory.RoleUser, text, start.Add(time.Duration(i)*time.Minute))
			rec.ID = fmt.Sprintf("%s-t%02d", id.Session, i)
			rec.Identity = id
			rec.Metadata = map[string]string{memory.SpeakerKey: []string{"Caroline", "Melanie"}[i%2]}
			recs = append(recs, rec)
		}
	}
	for i := range 10 {
		rec := memory.NewFact(memory.Identity{}, convWords[rnd.IntN(len(convWords))]+" "+convWords[rnd.IntN(len(convWords))], time.Date(2023, 6, 1+i, 0, 0, 0, 0, time.UTC))
		rec.ID = fmt.Sprintf("f%02d", i)
		rec.Identity = who
		rec.Identity.Session = "s0"
		recs = append(recs, rec)
	}
	return who, recs
}

// wholeRecords is a driver whose searches return whole records, not
// Refs: the in-memory driver with its RankText, WriterRefs and
// RankVector hidden.
type wholeRecords struct {
	driver.Driver
	d *inmem.Driver
}

func (w wholeRecords) Swap(ctx context.Context, rec memory.Record, expect int64) (int64, error) {
	return w.d.Swap(ctx, rec, expect)
}

func (w wholeRecords) SearchText(ctx context.Context, q driver.Query, text string, k int) ([]driver.Match, error) {
	return w.d.SearchText(ctx, q, text, k)
}

func (w wholeRecords) Search(ctx context.Context, q driver.Query, vec []float32, k int) ([]driver.Match, error) {
	return w.d.Search(ctx, q, vec, k)
}

// TestDriversAgree checks that a recall ranks alike on drivers that rank
// by reference (SQLite and in-memory: driver.TextRanker and
// driver.VectorRanker, reading or copying only the records it returns),
// on one whose searches return whole records (the in-memory driver with
// its rankers hidden) and on fs, which has no vector search: the
// same records in the same order with the same scores, under the
// options that read what a Ref holds (speakers, questions, dates,
// neighbours, recency), the one that reads content (diversity), and
// both fusions of a hybrid recall.
func TestDriversAgree(t *testing.T) {
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(3, 4))
	who, recs := randomConversations(rnd)
	const dims = 16
	for i := range recs {
		recs[i].Vector = embeddingtest.Vector(recs[i].Content, dims)
	}
	emb := &embeddingtest.Embedder{Dims: dims}
	dir := t.TempDir()
	sd, err := sqlite.Open(filepath.Join(dir, "r.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fd, err := fs.Open(filepath.Join(dir, "fs"), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	im := inmem.New(inmem.Options{})
	drivers := map[string]driver.Driver{"sqlite": sd, "inmem": inmem.New(inmem.Options{}), "fs": fd,
		"whole": wholeRecords{im, im}}
	if _, ok := driver.Driver(sd).(driver.TextRanker); !ok {
		t.Fatal("the SQLite driver does not rank text by reference: the test compares nothing new")
	}
	if _, ok := drivers["whole"].(driver.VectorRanker); ok {
		t.Fatal("wholeRecords ranks vectors by reference: the test compares nothing new")
	}
	for _, name := range []string{"sqlite", "inmem"} {
		if _, ok := drivers[name].(driver.VectorRanker); !ok {
			t.Fatalf("the %s driver does not rank vectors by reference: the test compares nothing new", name)
		}
	}
	stores := map[string]*backend.Store{}
	for name, d := range drivers {
		st := backend.NewStore(d, backend.StoreOptions{})
		t.Cleanup(func() { st.Close() })
		for _, rec := range recs {
			if err := st.Add(ctx, rec.Identity, rec); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		stores[name] = st
	}
	options := map[string]recall.Options{
		"default":      {},
		"no neighbour": {Neighbours: -1},
		"diversity":    {Diversity: 0.4},
		"recency":      {RecencyHalfLife: 30 * 24 * time.Hour},
		"few":          {Candidates: 20},
		"hybrid":       {Embedder: emb},
		"hybrid, rank": {Embedder: emb, Fusion: recall.RankFusion, Candidates: 50},
	}
	compared := 0
	for oname, opt := range options {
		for qi := range 20 {
			words := []string{convWords[rnd.IntN(len(convWords))], convWords[rnd.IntN(len(convWords))]}
			if rnd.IntN(2) == 0 {
				words = append(words, "Caroline")
			}
			if rnd.IntN(3) == 0 {
				words = append(words, "in March 2023")
			}
			text := strings.Join(words, " ")
			q := memory.Query{Level: memory.LevelUser}
			if qi%5 == 4 {
				q.Kinds = []memory.Kind{memory.KindTurn}
			}
			k := []int{1, 5, 10}[qi%3]
			var want []recall.Result
			for _, name := range []string{"inmem", "fs", "sqlite", "whole"} {
				if name == "fs" && opt.Embedder != nil {
					continue // no vector search
				}
				r, err := recall.New(stores[name], opt)
				if err != nil {
					t.Fatal(err)
				}
				res, err := r.Recall(ctx, who, q, text, k)
				if err == nil {
					err = res.Degraded
				}
				if err != nil {
					t.Fatalf("%s, %s: Recall(%q): %v", name, oname, text, err)
				}
				if name == "inmem" {
					want = res.Hits
					compared += len(want)
					continue
				}
				if len(res.Hits) != len(want) {
					t.Fatalf("%s, %s: Recall(%q) found %d, the in-memory driver %d", name, oname, text, len(res.Hits), len(want))
				}
				for i, h := range res.Hits {
					if h.Record.ID != want[i].Record.ID || math.Abs(h.Score-want[i].Score) > 1e-9*math.Abs(want[i].Score) {
						t.Fatalf("%s, %s: Recall(%q) result %d is %s (%v), the in-memory driver's %s (%v)", name, oname, text, i, h.Record.ID, h.Score, want[i].Record.ID, want[i].Score)
					}
					if h.Record.Content != want[i].Record.Content || h.Record.Metadata[memory.SpeakerKey] != want[i].Record.Metadata[memory.SpeakerKey] {
						t.Fatalf("%s, %s: Recall(%q) result %d is not the whole record: %+v", name, oname, text, i, h.Record)
					}
				}
			}
		}
	}
	if compared == 0 {
		t.Fatal("no recall found anything: the test compared nothing")
	}
}

// deleting is a SQLite driver whose RankText deletes its best match
// right after ranking, as another process might.
type deleting struct {
	*sqlite.Driver
	deleted []string
}

func (d *deleting) RankText(ctx context.Context, q driver.Query, text string, k int) ([]driver.RefMatch, error) {
	found, err := d.Driver.RankText(ctx, q, text, k)
	if err == nil && len(found) > 0 {
		dq := q
		dq.IDs = []string{found[0].Ref.ID}
		if _, err := d.Driver.Delete(ctx, dq); err != nil {
			return nil, err
		}
		d.deleted = append(d.deleted, found[0].Ref.ID)
	}
	return found, err
}

// TestRecallSkipsDeleted checks that a record deleted between the ranking
// and the reading of the records gives its place to the next: the recall
// still returns k records, none of them the deleted one.
func TestRecallSkipsDeleted(t *testing.T) {
	ctx := context.Background()
	sd, err := sqlite.Open(filepath.Join(t.TempDir(), "r.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := &deleting{Driver: sd}
	st := backend.NewStore(d, backend.StoreOptions{})
	defer st.Close()
	who, recs := randomConversations(rand.New(rand.NewPCG(5, 6)))
	for _, rec := range recs[:100] {
		if err := st.Add(ctx, rec.Identity, rec); err != nil {
			t.Fatal(err)
		}
	}
	r, err := recall.New(st, recall.Options{Neighbours: -1})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		res, err := r.Recall(ctx, who, memory.Query{Level: memory.LevelUser}, "camping beach kids painting", 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 5 {
			t.Fatalf("%d results, want 5", len(res.Hits))
		}
		gone := d.deleted[len(d.deleted)-1]
		for _, h := range res.Hits {
			if h.Record.ID == gone {
				t.Fatalf("the recall returned %s, deleted after the ranking", gone)
			}
		}
	}
}
