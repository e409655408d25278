package tiered

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/internal/worker"
)

// A Memory's background work is three kinds of job in one queue (Queue),
// each item naming its session by its Work.Identity:
//
//   - fold: evict a session's oldest unfolded turns down to
//     Options.Target tokens (all but the newest, for a flush), summarise
//     them into the next digest version and extract facts from them: one
//     Summarize and one Extract call per fold, never per turn. A session
//     has one fold item, so its folds are claimed one at a time;
//   - flush: a timer; once a session has been idle for Options.IdleFlush,
//     it queues the session's fold as a flush, or, while another fold of
//     the session is queued, waits for it and tries again;
//   - facts: store the facts a fold extracted, once that fold's digest
//     version is stored.
//
// A fold is done exactly once however many workers and replicas claim it:
// the claim (driver.Claimer) keeps other workers off while its lease runs,
// and the digest version the fold writes is a create, so a fold whose
// lease lapsed mid-way and that another worker took over stores nothing
// when the other stored first. Its facts are queued as a facts job before
// the version is written, tagged with the fold's claim, and stored only
// if the version stored is that fold's: a worker killed after its version
// was written loses none of them, and a fold that lost the race stores
// none of its own.
const (
	opFold  = "fold"
	opFlush = "flush"
	opFacts = "facts"
)

// job is a work item's payload.
type job struct {
	Op string `json:"op"`
	// Flush makes a fold fold all unfolded turns but the newest; Now
	// makes a flush due at once (Memory.Flush).
	Flush bool `json:"flush,omitempty"`
	Now   bool `json:"now,omitempty"`
	// Version and Fold (a claim token) name the digest version whose
	// facts a facts job stores.
	Version int64     `json:"version,omitempty"`
	Fold    string    `json:"fold,omitempty"`
	Facts   []jobFact `json:"facts,omitempty"`
}

// jobFact is an extract.Fact in a facts job.
type jobFact struct {
	Text       string   `json:"text"`
	Sources    []string `json:"sources"`
	Supersedes string   `json:"supersedes,omitempty"`
}

// workID is the id of the item of op for id's session, and of parts.
func workID(op string, id memory.Identity, parts ...string) string {
	h := sha256.New()
	k := sessionKey(id)
	for _, s := range append([]string{k.Tenant, k.User, k.Session}, parts...) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return op + ":" + hex.EncodeToString(h.Sum(nil))
}

// enqueue queues j for id's session, and reports whether it was new:
// not, when the session's item of that op (and parts) was queued already.
func (m *Memory) enqueue(ctx context.Context, id memory.Identity, j job, parts ...string) (bool, error) {
	payload, err := json.Marshal(j)
	if err != nil {
		return false, err
	}
	n, err := m.cl.Enqueue(ctx, []driver.Work{{Queue: Queue, ID: workID(j.Op, id, parts...), Identity: id, Payload: string(payload), Created: m.st.Now()}})
	if err == nil && n > 0 && m.pool != nil {
		m.pool.Wake()
	}
	return n > 0, err
}

// work does a claimed batch of jobs.
func (m *Memory) work(ctx context.Context, leases []driver.Lease) []error {
	errs := make([]error, len(leases))
	for i, l := range leases {
		var j job
		if err := json.Unmarshal([]byte(l.Payload), &j); err != nil {
			m.opt.Logger.Error("tiered: a queued job is unreadable; dropped", "id", l.ID, "err", err)
			continue
		}
		switch j.Op {
		case opFold:
			errs[i] = m.foldJob(ctx, l, j.Flush)
		case opFlush:
			errs[i] = m.flush(ctx, l, j.Now)
		case opFacts:
			errs[i] = m.storeFacts(ctx, l, j)
		default:
			m.opt.Logger.Error("tiered: a queued job has an unknown op; dropped", "id", l.ID, "op", j.Op)
		}
	}
	return errs
}

// giveUp is told of a job given up after Options.MaxAttempts.
func (m *Memory) giveUp(_ context.Context, l driver.Lease, err error) {
	m.stats.givenUp.Add(1)
	m.opt.Logger.Error("tiered: background job given up", "id", l.ID, "attempts", l.Attempt, "err", err)
	if m.opt.GiveUp != nil {
		m.opt.GiveUp(l.Identity, err)
	}
}

// foldJob does a fold job: the fold, then, once it is done, completes
// the job's item itself and looks at the session again. An append that
// passed the trigger while the item was claimed queued nothing of its
// own (the item was taken), so a fold is queued now if the session's
// unfolded turns are over the trigger.
func (m *Memory) foldJob(ctx context.Context, l driver.Lease, flush bool) error {
	if err := m.fold(ctx, l, flush); err != nil {
		return err
	}
	if err := m.cl.Complete(ctx, l); err != nil {
		// Claimed again after its lease lapsed, or erased: whoever holds
		// it looks again.
		m.opt.Logger.Debug("tiered: completing a fold failed", "id", l.ID, "err", err)
		return worker.Settled
	}
	d, err := m.latestDigest(ctx, l.Identity)
	var turns []memory.Record
	if err == nil {
		turns, _, err = m.unfolded(ctx, l.Identity, d.through, 0)
	}
	var due []memory.Record
	var wait time.Duration
	if err == nil {
		due, wait, err = m.evictable(ctx, turns, false)
	}
	if err == nil && (len(due) > 0 || wait > 0) {
		_, err = m.enqueue(ctx, l.Identity, job{Op: opFold})
	}
	if err != nil {
		m.opt.Logger.Warn("tiered: looking at a session again after its fold failed; its next append or idle flush queues what is due", "err", err)
	}
	return worker.Settled
}

// fold folds the session of l (see the comment on the ops): when its
// unfolded turns pass the trigger, or all but the newest when flush.
func (m *Memory) fold(ctx context.Context, l driver.Lease, flush bool) error {
	id := l.Identity
	prev, err := m.latestDigest(ctx, id)
	if err != nil {
		return err
	}
	turns, _, err := m.unfolded(ctx, id, prev.through, 0)
	if err != nil {
		return err
	}
	evict, wait, err := m.evictable(ctx, turns, flush)
	switch {
	case err != nil:
		return err
	case len(evict) == 0 && wait > 0:
		return worker.Later(wait)
	case len(evict) == 0:
		return nil
	}
	r := FoldReport{Identity: id, Version: prev.version + 1, Turns: len(evict), Flush: flush}
	report := func(stored bool, err error) error {
		r.Stored, r.Err = stored, err
		if m.opt.OnFold != nil {
			m.opt.OnFold(r)
		}
		return err
	}
	text, u, err := m.opt.Summarizer.Summarize(ctx, prev.rec.Content, evict)
	m.spent(u)
	r.Usage = u
	if err != nil {
		return report(false, err)
	}
	// The facts a new one may supersede: those the fact tier lets id's
	// facts supersede.
	known, err := m.facts.Reachable(ctx, id, knownFacts)
	if err != nil {
		return report(false, err)
	}
	found, u, err := m.opt.Extractor.Extract(ctx, evict, known)
	m.spent(u)
	r.Usage, r.Facts = r.Usage.Add(u), len(found)
	if err != nil {
		return report(false, err)
	}
	next := m.nextDigest(id, prev, text, boundaryOf(evict[len(evict)-1]), len(evict), l.Token)
	if len(found) > 0 {
		j := job{Op: opFacts, Version: prev.version + 1, Fold: l.Token}
		for _, f := range found {
			j.Facts = append(j.Facts, jobFact{Text: f.Text, Sources: f.Sources, Supersedes: f.Supersedes})
		}
		if _, err := m.enqueue(ctx, id, j, versionKey(j.Version), l.Token); err != nil {
			return report(false, err)
		}
	}
	if _, err := m.st.Swap(ctx, id, next, 0); err != nil {
		if errors.Is(err, memory.ErrConflict) {
			return report(false, nil) // another fold of this session stored this version first
		}
		return report(false, err)
	}
	if gone, err := m.erased(ctx, id, evict); err != nil || gone {
		// The session was erased while this fold ran: take back what it
		// wrote.
		if err == nil {
			err = m.unwrite(ctx, id, next.ID)
		}
		return report(false, err)
	}
	m.stats.folds.Add(1)
	m.stats.foldedTurns.Add(int64(len(evict)))
	m.stats.facts.Add(int64(len(found)))
	report(true, nil)
	m.forgetTally(id)
	if err := m.prune(ctx, id, prev.version+1); err != nil {
		m.opt.Logger.Warn("tiered: pruning old digest versions failed; the next fold tries again", "err", err)
	}
	if wait > 0 {
		// Turns it would have evicted were not settled yet: fold again
		// once they are (a flush goes on flushing).
		return worker.Later(wait)
	}
	return nil
}

// evictable returns the oldest of turns (oldest first) that a fold
// evicts: none unless they pass Options.Trigger tokens or
// Options.MaxTurns turns; then the oldest until the rest hold at most
// Options.Target tokens and half of MaxTurns turns; with flush, all but
// the newest. At least one turn always stays, and only turns older than
// Options.Settle are evicted: when some it would evict are younger, it
// returns the older ones and how long until the next is settled.
func (m *Memory) evictable(ctx context.Context, turns []memory.Record, flush bool) ([]memory.Record, time.Duration, error) {
	if len(turns) < 2 {
		return nil, 0, nil
	}
	n := len(turns) - 1
	if !flush {
		sizes := make([]int, len(turns))
		total := 0
		for i, t := range turns {
			k, err := m.tokens(ctx, t)
			if err != nil {
				return nil, 0, err
			}
			sizes[i] = k
			total += k
		}
		if total <= m.opt.Trigger && len(turns) <= m.opt.MaxTurns {
			return nil, 0, nil
		}
		n = 0
		for n < len(turns)-1 && (total > m.opt.Target || len(turns)-n > m.opt.MaxTurns/2) {
			total -= sizes[n]
			n++
		}
	}
	settled := m.st.Now().Add(-m.opt.Settle)
	k := 0
	for k < n && !turns[k].Created.After(settled) {
		k++
	}
	if k < n {
		return turns[:k], turns[k].Created.Sub(settled) + time.Millisecond, nil
	}
	return turns[:k], 0, nil
}

// knownFacts is how many of the newest facts in scope a fold gives the
// Extractor to leave out what is known and name what a fact supersedes.
const knownFacts = 200

// flushRetry is how long an idle flush waits for a fold of its session
// that is queued already before it tries again to queue its own.
const flushRetry = time.Second

// flush queues the fold of l's session as a flush once the session has
// been idle for Options.IdleFlush (at once with now), and otherwise asks
// to be claimed again when it will have been.
func (m *Memory) flush(ctx context.Context, l driver.Lease, now bool) error {
	if !now {
		newest, err := m.st.List(ctx, l.Identity, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindTurn}, Limit: 1})
		if err != nil || len(newest) == 0 {
			return err
		}
		if idle := m.st.Now().Sub(newest[0].Created); idle < m.opt.IdleFlush {
			return worker.Later(m.opt.IdleFlush - idle)
		}
	}
	queued, err := m.enqueue(ctx, l.Identity, job{Op: opFold, Flush: true})
	if err != nil {
		return err
	}
	if !queued {
		return worker.Later(flushRetry)
	}
	return nil
}

// storeFacts stores the facts of a facts job if the digest version it
// names was written by the fold that queued it; drops them if another
// fold's was; and asks to be claimed again while the version is not
// written yet.
func (m *Memory) storeFacts(ctx context.Context, l driver.Lease, j job) error {
	id := l.Identity
	version := func() ([]memory.Record, error) {
		return m.st.List(ctx, id, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindDigest}, Key: versionKey(j.Version)})
	}
	recs, err := version()
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		latest, err := m.latestDigest(ctx, id)
		if err != nil {
			return err
		}
		if latest.version >= j.Version {
			// Stored since the first read, or pruned long since.
			if recs, err = version(); err != nil || len(recs) == 0 {
				return err
			}
		}
	}
	if len(recs) == 0 {
		turns, _, err := m.unfolded(ctx, id, boundary{}, 1)
		if err != nil || len(turns) == 0 {
			return err // the session was erased
		}
		// The fold has yet to store it (soon), or died and will be done
		// again (a lease later): look again after a wait that doubles.
		return worker.Later(min(m.opt.Lease, 50*time.Millisecond<<min(l.Attempt, 12)))
	}
	if recs[0].Metadata[MetaFold] != j.Fold {
		return nil // another fold stored this version
	}
	var sources []memory.Record
	for _, f := range j.Facts {
		for _, s := range f.Sources {
			sources = append(sources, memory.Record{ID: s})
		}
	}
	if gone, err := m.erased(ctx, id, sources); err != nil || gone {
		return err // erased since the fold: its facts go with the turns
	}
	fs := make([]extract.Fact, len(j.Facts))
	for i, f := range j.Facts {
		fs[i] = extract.Fact{Text: f.Text, Sources: f.Sources, Supersedes: f.Supersedes}
	}
	_, err = m.facts.Add(ctx, id, fs...)
	return err
}

// appended queues a fold of id's session when its unfolded turns, with
// recs just appended, pass the trigger, and an idle flush unless one was
// queued lately. It reads the session's window only when its tally of
// the session is unknown or older than tallyMaxAge; failures are logged,
// not returned: the turns are stored, and the next append or the idle
// flush queues what was missed. It reports whether it queued a fold.
func (m *Memory) appended(ctx context.Context, id memory.Identity, recs []memory.Record) (folding bool) {
	key := sessionKey(id)
	added := 0
	for _, r := range recs {
		added += r.Tokens
	}
	m.mu.Lock()
	s := m.sessions[key]
	if s == nil {
		if len(m.sessions) >= maxSessions {
			clear(m.sessions)
		}
		s = &session{}
		m.sessions[key] = s
	}
	now := m.st.Now()
	known := s.known && now.Sub(s.read) < tallyMaxAge
	if known {
		// Tallied under the lock: appends to one session racing in this
		// process all count.
		s.tokens += added
		s.turns += len(recs)
	}
	tokens, turns := s.tokens, s.turns
	flush := m.opt.IdleFlush > 0 && now.Sub(s.flushQueued) > m.opt.IdleFlush/2
	if flush {
		s.flushQueued = now
	}
	m.mu.Unlock()
	read := true
	if !known {
		d, err := m.latestDigest(ctx, id)
		var window []memory.Record
		if err == nil {
			window, _, err = m.unfolded(ctx, id, d.through, m.opt.MaxTurns)
		}
		if err != nil {
			m.opt.Logger.Warn("tiered: reading the window after an append failed; the next append tries again", "err", err)
			read = false
		}
		tokens, turns = 0, len(window)
		for _, r := range window {
			tokens += r.Tokens
		}
	}
	if read {
		due := tokens > m.opt.Trigger || turns > m.opt.MaxTurns
		m.mu.Lock()
		if !known {
			s.tokens, s.turns, s.read = tokens, turns, now
		}
		s.known = !due
		m.mu.Unlock()
		if due {
			if _, err := m.enqueue(ctx, id, job{Op: opFold}); err != nil {
				m.opt.Logger.Warn("tiered: queueing a fold failed; the next append tries again", "err", err)
				m.forgetTally(id)
			} else {
				folding = true
			}
		}
	}
	if flush {
		if _, err := m.enqueue(ctx, id, job{Op: opFlush}); err != nil {
			m.opt.Logger.Warn("tiered: queueing an idle flush failed; the next append tries again", "err", err)
			m.mu.Lock()
			s.flushQueued = time.Time{}
			m.mu.Unlock()
		}
	}
	return folding
}

// erased reports whether none of turns (by id) is stored any longer in
// id's session: the session was erased.
func (m *Memory) erased(ctx context.Context, id memory.Identity, turns []memory.Record) (bool, error) {
	if len(turns) == 0 {
		return false, nil
	}
	ids := make([]string, 0, min(len(turns), memory.MaxBatch))
	for _, t := range turns[:min(len(turns), memory.MaxBatch)] {
		ids = append(ids, t.ID)
	}
	found, err := m.storedTurns(ctx, id, ids...)
	return !found && err == nil, err
}

// storedTurns reports whether any of the turns ids name is stored in id's
// session.
func (m *Memory) storedTurns(ctx context.Context, id memory.Identity, ids ...string) (bool, error) {
	dq, err := m.st.Query(id, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindTurn}, Limit: 1})
	if err != nil {
		return false, err
	}
	dq.IDs = ids
	found, err := m.st.Driver().List(ctx, dq)
	return len(found) > 0, err
}

// unwrite deletes the record of id's session under recordID.
func (m *Memory) unwrite(ctx context.Context, id memory.Identity, recordID string) error {
	dq, err := m.st.Query(id, memory.Query{Level: memory.LevelSession})
	if err != nil {
		return err
	}
	dq.IDs = []string{recordID}
	_, err = m.st.DeleteQuery(ctx, dq)
	return err
}

// forgetTally makes the next append to id's session read its window
// again.
func (m *Memory) forgetTally(id memory.Identity) {
	m.mu.Lock()
	if s := m.sessions[sessionKey(id)]; s != nil {
		s.known = false
	}
	m.mu.Unlock()
}

// Flush queues a fold of id's session as an idle flush would: of all its
// unfolded turns but the newest, into the digest and facts, done in the
// background as soon as no other fold of the session is queued.
func (m *Memory) Flush(ctx context.Context, id memory.Identity) error {
	if err := m.enter(ctx); err != nil {
		return err
	}
	defer m.leave()
	if _, err := m.st.Filter(id, memory.LevelSession); err != nil {
		return err
	}
	queued, err := m.enqueue(ctx, id, job{Op: opFold, Flush: true})
	if err == nil && !queued {
		// A fold of the session is queued: a flush timer, due now, queues
		// the flush once it is done. Two timers are one.
		_, err = m.enqueue(ctx, id, job{Op: opFlush, Now: true}, "now")
	}
	return m.soft(err, "flush")
}
