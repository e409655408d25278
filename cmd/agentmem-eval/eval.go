package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/embedding"
	"github.com/agentmem/memory/embedding/embeddingtest"
	"github.com/agentmem/memory/recall"
)

// textStore is what the evaluation needs of a store: backend.Store's Add,
// SearchText and Close. The command reaches the library through it only,
// so every ranking technique measured is one a user's recall gets.
type textStore interface {
	Add(ctx context.Context, id memory.Identity, recs ...memory.Record) error
	SearchText(ctx context.Context, id memory.Identity, q memory.Query, text string, k int) ([]driver.Match, error)
	Close() error
}

// opener returns a fresh, empty store for the conversation sampleID,
// whose clock reads now: the time the conversation's questions are asked.
type opener func(ctx context.Context, sampleID string, now time.Time) (textStore, error)

// recallFunc asks st for the k records most relevant to the question text,
// best first: one mode of the evaluation.
type recallFunc func(ctx context.Context, st textStore, id memory.Identity, q memory.Query, text string, k int) ([]driver.Match, error)

// preparer readies a conversation's store after its turns are added and
// before its questions are asked (a mode's indexing).
type preparer func(ctx context.Context, st textStore, id memory.Identity) error

// modes are the evaluation's modes by name; a mode's recall is made with
// the recall options the command's flags give.
var modes = map[string]struct {
	about   string
	recall  func(recall.Options) recallFunc
	prepare preparer // nil: none
}{
	"lexical": {"the library's recall path with no model (package recall over Store.SearchText)", lexicalRecall, nil},
	"text":    {"text search alone, backend.Store.SearchText as is, for comparison", func(recall.Options) recallFunc { return textRecall }, nil},
	"hybrid-hash": {"package recall, hybrid, its vectors from embeddingtest's hashed bag of words (" + fmt.Sprint(hashDims) +
		" dimensions; no language model, so it measures how fusion combines two rankings, not what a model adds)", hybridHashRecall, hashPrepare},
}

// hashDims is the dimension of the hybrid-hash mode's vectors.
const hashDims = 256

// hashEmbedder is the hybrid-hash mode's embedder.
var hashEmbedder = &embeddingtest.Embedder{Dims: hashDims}

// lexicalRecall returns the lexical mode: package recall's Recaller with
// opt (the zero Options are its defaults), over the store's text search.
func lexicalRecall(opt recall.Options) recallFunc {
	return func(ctx context.Context, st textStore, id memory.Identity, q memory.Query, text string, k int) ([]driver.Match, error) {
		return recallWith(ctx, opt, st, id, q, text, k)
	}
}

// hybridHashRecall returns the hybrid-hash mode: the lexical mode's
// Recaller with hashEmbedder as its embedder.
func hybridHashRecall(opt recall.Options) recallFunc {
	opt.Embedder = hashEmbedder
	return lexicalRecall(opt)
}

// hashPrepare gives every turn of the conversation its hashEmbedder
// vector, through the library's Indexer, as an application would.
func hashPrepare(ctx context.Context, st textStore, id memory.Identity) error {
	bs, err := storeOf(st)
	if err != nil {
		return err
	}
	x, err := embedding.NewIndexer(ctx, bs, hashEmbedder, embedding.Options{})
	if err != nil {
		return err
	}
	_, err = x.Backfill(ctx, id, recallQuery.Level)
	return err
}

// storeOf returns the *backend.Store st is.
func storeOf(st textStore) (*backend.Store, error) {
	switch s := st.(type) {
	case *backend.Store:
		return s, nil
	case tempStore:
		return s.Store, nil
	}
	return nil, fmt.Errorf("this mode works on a *backend.Store, not a %T", st)
}

// recallWith recalls with a Recaller made with opt.
func recallWith(ctx context.Context, opt recall.Options, st textStore, id memory.Identity, q memory.Query, text string, k int) ([]driver.Match, error) {
	bs, err := storeOf(st)
	if err != nil {
		return nil, err
	}
	r, err := recall.New(bs, opt)
	if err != nil {
		return nil, err
	}
	res, err := r.Recall(ctx, id, q, text, k)
	if err != nil {
		return nil, err
	}
	ms := make([]driver.Match, len(res.Hits))
	for i, x := range res.Hits {
		ms[i] = driver.Match{Record: x.Record, Score: x.Score}
	}
	return ms, nil
}

// textRecall is the text mode: the library's text search, as is.
func textRecall(ctx context.Context, st textStore, id memory.Identity, q memory.Query, text string, k int) ([]driver.Match, error) {
	return st.SearchText(ctx, id, q, text, k)
}

// askedAt returns when c's questions are asked: a second after its last
// turn, so that "now" in a recall (recency, expiry) is the conversation's
// end, not the day the evaluation runs.
func askedAt(c Conversation) time.Time {
	var last time.Time
	for _, t := range c.Turns {
		if t.Created.After(last) {
			last = t.Created
		}
	}
	return last.Add(time.Second)
}

// diaKey is the metadata key under which each turn record carries its
// LoCoMo dia_id, so a recalled record names the turn it is.
const diaKey = "dia_id"

// Identity returns the identity a conversation's questions are asked
// under: tenant "locomo", the sample id as user, and agent "eval".
func Identity(c Conversation) memory.Identity {
	return memory.Identity{Tenant: "locomo", User: c.SampleID, Agent: "eval"}
}

// SessionIdentity returns the identity the turns of the conversation's
// session n are written under: Identity with session "<sample id>/<n>",
// as an agent writes each conversation session under a session of its own.
func SessionIdentity(c Conversation, n int) memory.Identity {
	id := Identity(c)
	id.Session = fmt.Sprintf("%s/%d", c.SampleID, n)
	return id
}

// recallQuery is the query of every recall: the turns of the conversation,
// all its sessions (the user level).
var recallQuery = memory.Query{Level: memory.LevelUser, Kinds: []memory.Kind{memory.KindTurn}}

// Records returns the conversation's turns as the records to ingest, in
// time order: speaker_a's turns with role user, speaker_b's with role
// assistant, content "<speaker>: <text>", the turn's time, its session's
// identity (SessionIdentity), and in metadata its dia_id and its speaker
// (memory.SpeakerKey).
func Records(c Conversation) []memory.Record {
	recs := make([]memory.Record, len(c.Turns))
	for i, t := range c.Turns {
		id := SessionIdentity(c, t.Session)
		role := memory.RoleUser
		if t.Speaker == c.SpeakerB {
			role = memory.RoleAssistant
		}
		r := memory.NewTurn(id, role, t.Speaker+": "+t.Text, t.Created)
		r.Metadata = map[string]string{diaKey: t.DiaID, memory.SpeakerKey: t.Speaker}
		recs[i] = r
	}
	return recs
}

// Evaluator runs the evaluation of one configuration.
type Evaluator struct {
	// Open returns a fresh store per conversation.
	Open opener
	// Recall is the mode's recall.
	Recall recallFunc
	// Prepare, when not nil, readies each store after its turns are added
	// (counted in the ingest time).
	Prepare preparer
	// Strict makes a question with unknown or no evidence an error
	// instead of a skipped question.
	Strict bool
	// Progress receives the progress line and warnings; nil discards them.
	Progress *Progress
}

// Run ingests every conversation into its own store and asks it every
// question, and returns the scores.
func (e *Evaluator) Run(ctx context.Context, ds *Dataset) (*Report, error) {
	r := &Report{Skipped: map[string]int{}, Conversations: len(ds.Conversations)}
	for _, c := range ds.Conversations {
		r.Turns += len(c.Turns)
		r.Questions += len(c.Questions)
	}
	asked := 0
	for ci, c := range ds.Conversations {
		for _, q := range c.Questions {
			if q.Skip == "" {
				continue
			}
			msg := fmt.Sprintf("conversation %s, question %d (category %d) %q: %s %s", c.SampleID, q.Index+1, q.Category, q.Text, q.Skip, quoteAll(q.Evidence))
			if e.Strict {
				return nil, errors.New(msg)
			}
			r.Skipped[q.Skip]++
			e.Progress.Log("skipped " + msg)
		}
		start := time.Now()
		st, err := e.Open(ctx, c.SampleID, askedAt(c))
		if err != nil {
			return nil, fmt.Errorf("conversation %s: opening its store: %w", c.SampleID, err)
		}
		err = e.conversation(ctx, st, c, r, ci, len(ds.Conversations), &asked, start)
		if cerr := st.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("conversation %s: closing its store: %w", c.SampleID, cerr)
		}
		if err != nil {
			return nil, err
		}
	}
	e.Progress.Done()
	return r, nil
}

// conversation ingests c into st and scores its questions into r.
func (e *Evaluator) conversation(ctx context.Context, st textStore, c Conversation, r *Report, ci, nconv int, asked *int, start time.Time) error {
	id := Identity(c)
	recs := Records(c)
	for len(recs) > 0 {
		// A batch of one session's turns, written by that session.
		n := 1
		for n < len(recs) && n < memory.MaxBatch && recs[n].Identity == recs[0].Identity {
			n++
		}
		if err := st.Add(ctx, recs[0].Identity, recs[:n]...); err != nil {
			return fmt.Errorf("conversation %s: adding its turns: %w", c.SampleID, err)
		}
		recs = recs[n:]
	}
	if e.Prepare != nil {
		if err := e.Prepare(ctx, st, id); err != nil {
			return fmt.Errorf("conversation %s: preparing its store: %w", c.SampleID, err)
		}
	}
	r.Ingest += time.Since(start)
	for _, q := range c.Questions {
		*asked++
		e.Progress.Update("conversation %d/%d, question %d/%d", ci+1, nconv, *asked, r.Questions)
		if q.Skip != "" {
			continue
		}
		t0 := time.Now()
		ms, err := e.Recall(ctx, st, id, recallQuery, q.Text, Depth)
		r.Latencies = append(r.Latencies, time.Since(t0))
		if err != nil {
			return fmt.Errorf("conversation %s, question %d %q: recall: %w", c.SampleID, q.Index+1, q.Text, err)
		}
		if len(ms) > Depth {
			return fmt.Errorf("conversation %s, question %d: recall returned %d records, more than the %d asked for", c.SampleID, q.Index+1, len(ms), Depth)
		}
		dias := make([]string, len(ms))
		for i, m := range ms {
			d, ok := m.Record.Metadata[diaKey]
			if !ok {
				return fmt.Errorf("conversation %s, question %d: recall returned record %s, which has no %s: not a turn this evaluation wrote", c.SampleID, q.Index+1, m.Record.ID, diaKey)
			}
			dias[i] = d
		}
		r.ByCategory[q.Category].Add(FirstRank(dias, q.Evidence))
	}
	return nil
}

// quoteAll renders evidence ids for a warning.
func quoteAll(ss []string) string {
	if len(ss) == 0 {
		return "(evidence [])"
	}
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "(evidence [" + strings.Join(q, ", ") + "])"
}

// Progress writes a progress line to a terminal or log, rewriting it in
// place with a carriage return at most once per interval, and warnings on
// lines of their own. A nil *Progress discards everything.
type Progress struct {
	w     io.Writer
	every time.Duration
	now   func() time.Time
	last  time.Time
	width int // the length of the line shown, 0 when none is
}

// NewProgress returns a Progress writing to w at most once per every.
func NewProgress(w io.Writer, every time.Duration) *Progress {
	return &Progress{w: w, every: every, now: time.Now}
}

// Update shows the progress line, unless one was shown less than the
// interval ago.
func (p *Progress) Update(format string, args ...any) {
	if p == nil {
		return
	}
	now := p.now()
	if p.width > 0 && now.Sub(p.last) < p.every {
		return
	}
	p.last = now
	line := fmt.Sprintf(format, args...)
	pad := max(p.width-len(line), 0)
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
	p.width = len(line)
}

// Log writes msg on a line of its own, clearing the progress line first.
func (p *Progress) Log(msg string) {
	if p == nil {
		return
	}
	p.clear()
	fmt.Fprintln(p.w, msg)
}

// Done clears the progress line.
func (p *Progress) Done() {
	if p == nil {
		return
	}
	p.clear()
}

// clear blanks the progress line shown, if any.
func (p *Progress) clear() {
	if p.width > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
		p.width = 0
	}
}
