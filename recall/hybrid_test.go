package recall_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/fs"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/recall"
)

// topicEmbedder embeds a text by the topics its words belong to, so that
// texts about one topic are near whatever words they use: a stand-in for
// a model that knows "automobile" and "car" mean one thing.
type topicEmbedder struct{ fail error }

var topics = [][]string{
	{"car", "automobile", "vehicle", "sedan"},
	{"apple", "fruit", "banana"},
	{"rain", "weather", "sunny"},
}

func (topicEmbedder) Model() string { return "topics-v1" }

func (e topicEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if e.fail != nil {
		return nil, e.fail
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, len(topics)+1)
		v[len(topics)] = 0.1 // never all zero
		for _, w := range strings.Fields(strings.ToLower(t)) {
			for j, words := range topics {
				for _, tw := range words {
					if strings.Trim(w, "?.,!") == tw {
						v[j]++
					}
				}
			}
		}
		out[i] = v
	}
	return out, nil
}

// TestHybrid checks that a hybrid recall finds a record the query shares
// no word with but is near in meaning, ahead of unrelated records; that a
// failing embedder degrades the recall to the lexical ranking, saying why,
// instead of failing it; and that an embedder needs vector search.
func TestHybrid(t *testing.T) {
	ctx := context.Background()
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer st.Close()
	who := memory.Identity{Tenant: "acme", User: "alice", Agent: "bot", Session: "s1"}
	emb := topicEmbedder{}
	texts := map[string]string{
		"f-car":   "Alice bought a new automobile in May",
		"f-fruit": "Alice likes banana bread",
		"f-rain":  "It was sunny at the wedding",
		"f-word":  "Alice asked where the nearest car park is in the rain",
	}
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	i := 0
	for _, id := range []string{"f-car", "f-fruit", "f-rain", "f-word"} {
		vs, _ := emb.Embed(ctx, []string{texts[id]})
		rec := memory.Record{ID: id, Kind: memory.KindFact, Content: texts[id], Vector: vs[0], Created: t0.Add(time.Duration(i) * time.Second)}
		i++
		if err := st.Add(ctx, who, rec); err != nil {
			t.Fatal(err)
		}
	}
	q := memory.Query{Level: memory.LevelUser}
	lexOnly, err := recall.New(st, recall.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lex, err := lexOnly.Recall(ctx, who, q, "what vehicle does she drive?", 3)
	if err != nil || len(lex.Hits) != 0 || lex.Degraded != nil {
		t.Fatalf("lexical recall of a query sharing no word with any record = %s, %v, degraded %v; want nothing", ids(lex), err, lex.Degraded)
	}

	hybrid, err := recall.New(st, recall.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	got, err := hybrid.Recall(ctx, who, q, "what vehicle does she drive?", 2)
	if err != nil || got.Degraded != nil {
		t.Fatalf("hybrid recall: %v, degraded %v", err, got.Degraded)
	}
	if len(got.Hits) == 0 || got.Hits[0].Record.ID != "f-car" {
		t.Errorf("hybrid recall = %s, want f-car first (near in meaning, no word shared)", ids(got))
	}
	// Both lists agree on f-word for "car": it ranks first.
	got, err = hybrid.Recall(ctx, who, q, "car", 4)
	if err != nil || len(got.Hits) < 2 || got.Hits[0].Record.ID != "f-word" {
		t.Errorf("hybrid recall of car = %s, %v; want f-word (in both lists) first", ids(got), err)
	}

	down := errors.Join(memory.ErrUnavailable, errors.New("provider: 503"))
	broken, err := recall.New(st, recall.Options{Embedder: topicEmbedder{fail: down}})
	if err != nil {
		t.Fatal(err)
	}
	got, err = broken.Recall(ctx, who, q, "which car park?", 3)
	if err != nil {
		t.Fatalf("a recall whose embedder is down failed: %v", err)
	}
	if !errors.Is(got.Degraded, memory.ErrUnavailable) {
		t.Errorf("Degraded = %v, want the embedder's error", got.Degraded)
	}
	if len(got.Hits) == 0 || got.Hits[0].Record.ID != "f-word" {
		t.Errorf("a degraded recall = %s, want the lexical ranking (f-word first)", ids(got))
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := hybrid.Recall(cancelled, who, q, "car", 3); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled hybrid recall = %v, want context.Canceled", err)
	}

	fd, err := fs.Open(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	files := backend.NewStore(fd, backend.StoreOptions{})
	defer files.Close()
	if _, err := recall.New(files, recall.Options{Embedder: emb}); !errors.Is(err, memory.ErrUnimplemented) {
		t.Errorf("an embedder over a driver without vector search = %v, want ErrUnimplemented", err)
	}
}

// blockingEmbedder says on started that it was called, blocks until its
// context ends, then says on done that it returned.
type blockingEmbedder struct{ started, done chan struct{} }

func (blockingEmbedder) Model() string { return "topics-v1" }

func (e blockingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	close(e.started)
	<-ctx.Done()
	close(e.done)
	return nil, ctx.Err()
}

// failingText is an in-memory driver whose text search, by record or by
// reference, fails once the embedder has started.
type failingText struct {
	*inmem.Driver
	started chan struct{}
}

var errTextDown = errors.New("text search down")

func (d failingText) SearchText(context.Context, driver.Query, string, int) ([]driver.Match, error) {
	<-d.started
	return nil, errTextDown
}

func (d failingText) RankText(context.Context, driver.Query, string, int) ([]driver.RefMatch, error) {
	<-d.started
	return nil, errTextDown
}

// TestHybridHalvesEnd checks that a hybrid recall whose lexical half fails
// returns that error without waiting for the embedder, and that the
// vector half, which runs on a goroutine of its own, is told to stop and
// has returned by the time the recall does.
func TestHybridHalvesEnd(t *testing.T) {
	emb := blockingEmbedder{started: make(chan struct{}), done: make(chan struct{})}
	st := backend.NewStore(failingText{inmem.New(inmem.Options{}), emb.started}, backend.StoreOptions{})
	defer st.Close()
	who := memory.Identity{Tenant: "acme", User: "alice", Agent: "bot", Session: "s1"}
	r, err := recall.New(st, recall.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Recall(context.Background(), who, memory.Query{Level: memory.LevelUser}, "car", 3)
	if !errors.Is(err, errTextDown) {
		t.Fatalf("Recall = %v, want the text search's error", err)
	}
	select {
	case <-emb.done:
	default:
		t.Fatal("the recall returned while its embedder was still running")
	}
}
