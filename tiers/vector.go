package tiers

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/internal/osfile"
)

// Defaults of VectorOptions. Pruning is on by default: without it a
// directory grows until its oldest entries can never be read, the
// document's warning.
const (
	// DefaultVectorDir is where vector memory keeps its entries when
	// VectorOptions.Dir is empty: the document's PVC mount.
	DefaultVectorDir = "/var/run/agent-memory"
	// DefaultVectorMaxContextTokens is the token budget of recalled vector
	// context when VectorOptions.MaxContextTokens is zero: the document's
	// example, maxContextTokens: 8000.
	DefaultVectorMaxContextTokens = 8000
	// DefaultVectorMaxEntries is how many entries each scope keeps when
	// VectorOptions.MaxEntries is zero.
	DefaultVectorMaxEntries = 10000
	// DefaultVectorTTL is how long entries are kept when VectorOptions.TTL
	// is zero: 30 days.
	DefaultVectorTTL = 30 * 24 * time.Hour
)

// VectorOptions configure a Vector. The zero value is the documented
// default: entries in /var/run/agent-memory, an 8,000-token recall budget,
// and pruning to the newest 10,000 entries per scope, none older than 30
// days.
type VectorOptions struct {
	// Dir is the directory holding the entry files (the PVC mount); it is
	// created if missing. Empty means DefaultVectorDir.
	Dir string
	// MaxContextTokens is the token budget of the recalled block
	// (maxContextTokens), framing included. Zero means
	// DefaultVectorMaxContextTokens; negative is invalid.
	MaxContextTokens int
	// TTL discards entries older than it (ttl; see ParseTTL): Recall and
	// Search never return them and Save deletes them. Zero means
	// DefaultVectorTTL; negative is invalid.
	TTL time.Duration
	// MaxEntries is how many entries each scope keeps (maxEntries); after
	// each Save the oldest beyond it are deleted. Zero means
	// DefaultVectorMaxEntries; negative is invalid.
	MaxEntries int
}

// Vector is the "vector" memory type: at the end of each step Save writes
// the step's one-line summary (Step.Summary, the same line as the summary
// type) as a timestamped .txt file in a directory; at the start of the
// next, Recall reads entries newest first and injects as many as fit in
// MaxContextTokens, in the "[Previous execution context]" block (oldest
// line first, each rendered by RecalledLine, as Summary renders it).
// Search finds entries by keyword, scored by term frequency with BM25
// over stemmed words (internal/lexical), for the
// vector-search tool.
//
// Entry files are named "<unix nanoseconds, 19 digits>-<counter>-<random
// 64 bits>.txt", so names sort by time and never collide, and hold a short
// header (the writer's whole identity, the "<workflow>/<step>" key and the
// token count) before the text, for example:
//
//	agentmem-vector-entry 1
//	tenant=acme
//	user=
//	agent=kaos://agent/ai-agents/knowledge-retriever
//	instance=
//	squad=
//	session=run-1
//	key=research/collect
//	tokens=21
//
//	[research/collect] Task: Find the cause of the outage | Result: Connection pool exhausted
//
// Writes are atomic: the file is written in
// the ".tmp" subdirectory and fsynced, the index is appended and fsynced,
// then the file is renamed into place and the directory fsynced, all under
// an exclusive lock on ".lock" (flock(2), or LockFileEx on Windows;
// elsewhere vector memory fails with memory.ErrUnimplemented), so several processes can share the
// directory and lose nothing. A crash mid-write leaves at most a temporary
// file (ignored, and removed by the next NewVector or Rebuild) and an index
// line whose file never appeared (skipped); a Save that has returned is
// durable.
//
// The ".index" file lists entries in the order written, one line each with
// the writer's identity, the token count and the text, so Recall reads it
// from the end and opens only the entries it injects (loading costs the
// entries read, not the entries stored), and Search reads every entry's
// text from that one file: the first Search of a process scans those
// texts and builds the in-memory word index in the background for the
// searches after it (see Search). A missing or unrecognisable index
// is rebuilt from the directory; after adding entry files by other means
// (restoring a backup), call Rebuild. Entry files removed by hand are
// skipped.
//
// Scope: the Vector keeps its entries in the directory, not in its
// *backend.Store; the store is its source of posture, token counter and
// clock. Each entry records its writer's identity, every Save passes the
// store's write check, and every call sees only the entries of the
// caller's agent level as the store derives it (tenant and agent, plus
// the user when the caller has one or the posture requires it), so agents
// sharing a directory never see each other's memory. Pruning (MaxEntries,
// TTL) applies per scope too.
//
// A Vector is safe for concurrent use by many goroutines and processes.
type Vector struct {
	dir        string
	budget     int
	ttl        time.Duration
	maxEntries int
	store      *backend.Store
	frame      int
	closed     atomic.Bool

	mu       sync.Mutex // guards view, search and building; taken before the file lock
	view     indexView
	search   searchIndex
	building chan struct{} // closed when the background index build ends; nil when none is at work
}

var (
	_ StepMemory       = (*Vector)(nil)
	_ memory.Forgetter = (*Vector)(nil)
)

// NewVector opens vector memory in opt.Dir, creating the directory if
// needed, removing what crashed writers left behind, and rebuilding the
// index if it is missing. Its scope, token counts and clock come from
// store, which it never writes to and does not close; a program whose
// only storage is the directory can pass a store over the in-memory
// driver. It fails with memory.ErrInvalidArgument for a nil store or a
// negative option.
func NewVector(ctx context.Context, store *backend.Store, opt VectorOptions) (*Vector, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch {
	case store == nil:
		return nil, needStore("vector")
	case opt.MaxContextTokens < 0:
		return nil, memory.Errorf(memory.ErrInvalidArgument, "vector MaxContextTokens is %d; it cannot be negative", opt.MaxContextTokens)
	case opt.TTL < 0:
		return nil, memory.Errorf(memory.ErrInvalidArgument, "vector TTL is %s; it cannot be negative", opt.TTL)
	case opt.MaxEntries < 0:
		return nil, memory.Errorf(memory.ErrInvalidArgument, "vector MaxEntries is %d; it cannot be negative", opt.MaxEntries)
	}
	v := &Vector{
		dir:        opt.Dir,
		budget:     opt.MaxContextTokens,
		ttl:        opt.TTL,
		maxEntries: opt.MaxEntries,
		store:      store,
	}
	if v.dir == "" {
		v.dir = DefaultVectorDir
	}
	if v.budget == 0 {
		v.budget = DefaultVectorMaxContextTokens
	}
	if v.ttl == 0 {
		v.ttl = DefaultVectorTTL
	}
	if v.maxEntries == 0 {
		v.maxEntries = DefaultVectorMaxEntries
	}
	frame, err := store.Tokens().CountTokens(ctx, frameText)
	if err != nil {
		return nil, err
	}
	v.frame = frame
	if err := os.MkdirAll(filepath.Join(v.dir, vectorTempDir), 0o750); err != nil {
		return nil, fsError(err, "creating the vector directory")
	}
	if err := v.ensureIndex(ctx); err != nil {
		return nil, err
	}
	return v, nil
}

// Dir returns the directory holding the entries.
func (v *Vector) Dir() string { return v.dir }

// Close marks the Vector closed: later calls fail with memory.ErrClosed.
// It holds no open files between calls; it stops the background build of
// the search index, if one is at work, and waits for it to end. Close is
// idempotent.
func (v *Vector) Close() error {
	v.closed.Store(true)
	v.waitBuild()
	return nil
}

// check is what every call checks first: a live context and an open Vector.
func (v *Vector) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if v.closed.Load() {
		return memory.Errorf(memory.ErrClosed, "vector memory is closed")
	}
	return nil
}

// scope derives, through the store, the agent-level filter every read and
// prune uses.
func (v *Vector) scope(id memory.Identity) (memory.Filter, error) {
	return v.store.Filter(id, memory.LevelAgent)
}

// stale reports whether an entry created at ns (unix nanoseconds) is older
// than the TTL at now.
func (v *Vector) stale(ns int64, now time.Time) bool {
	return !now.Before(time.Unix(0, ns).Add(v.ttl))
}

// Recall returns the newest entries visible to id at the agent level as
// the "[Previous execution context]" block, oldest line first, each line
// rendered by RecalledLine (so recalled text cannot forge a delimiter). It
// reads the index backwards from its end and stops at the first entry that
// does not fit in MaxContextTokens (the framing's count plus, per entry,
// its token count — counted again when the rendering changed the line —
// and one for its line break), after MaxEntries entries, or at the first
// entry older than the TTL; it opens only the entries it injects. Entries
// deleted by another process meanwhile are skipped. With nothing to recall
// the Recollection is empty. Each Record's ID is the entry's file name and
// its Content the entry's text as stored; Tokens is the count of the whole
// block by the store's counter.
//
// Vector recalls by recency, as the document's executor loads memory:
// about is ignored (Search is the by-relevance path, for the vector-search
// tool). It reads one source, the directory, so Degraded is always nil: a
// failure to read or count is the call's error.
func (v *Vector) Recall(ctx context.Context, id memory.Identity, about string) (memory.Recollection, error) {
	if err := v.check(ctx); err != nil {
		return memory.Recollection{}, err
	}
	filter, err := v.scope(id)
	if err != nil {
		return memory.Recollection{}, err
	}
	f, size, err := v.openIndex(ctx)
	if err != nil {
		return memory.Recollection{}, err
	}
	defer f.Close()
	now := v.store.Now()
	used := v.frame
	deleted := map[string]bool{}
	var kept []memory.Record
	var lines []string
	var readErr error
	err = readBackward(f, int64(headerLen), size, func(line []byte) bool {
		add, e, ok := parseLine(line)
		switch {
		case !ok:
			return true
		case !add:
			deleted[e.name] = true
			return true
		case deleted[e.name] || !filter.Matches(e.who):
			return true
		case v.stale(e.created, now) || len(kept) == v.maxEntries:
			return false
		}
		if readErr = ctx.Err(); readErr != nil {
			return false
		}
		rendered, n, err := v.renderLine(ctx, e.text, e.tokens)
		if err != nil {
			readErr = err
			return false
		}
		if used+n+1 > v.budget {
			return false
		}
		text, found, err := readEntry(v.dir, e)
		if err != nil {
			readErr = err
			return false
		}
		if !found {
			return true
		}
		if text != e.text { // the index and the file disagree on the text: the file's counts
			if rendered, n, err = v.renderLine(ctx, text, -1); err != nil {
				readErr = err
				return false
			}
			if used+n+1 > v.budget {
				return false
			}
		}
		used += n + 1
		kept = append(kept, e.record(text))
		lines = append(lines, rendered)
		return true
	})
	if err == nil {
		err = readErr
	}
	if err != nil || len(kept) == 0 {
		return memory.Recollection{}, err
	}
	slices.Reverse(kept)
	slices.Reverse(lines)
	return recollection(ctx, v.store.Tokens(), kept, lines)
}

// renderLine returns text rendered by RecalledLine and the rendered line's
// token count: tokens when the rendering left text unchanged and tokens is
// known (not negative), else a fresh count by the store's counter.
func (v *Vector) renderLine(ctx context.Context, text string, tokens int) (string, int, error) {
	line := RecalledLine(text)
	if line == text && tokens >= 0 {
		return line, tokens, nil
	}
	n, err := v.store.Tokens().CountTokens(ctx, line)
	return line, max(0, n), err
}

// record returns e with its text as a memory.Record: a step summary whose
// ID is the entry's file name.
func (e vectorEntry) record(text string) memory.Record {
	return memory.Record{
		ID:       e.name,
		Kind:     memory.KindSummary,
		Identity: e.who,
		Key:      e.key,
		Content:  text,
		Created:  time.Unix(0, e.created).UTC(),
		Tokens:   e.tokens,
	}
}

// Save writes step's one-line summary (Step.Summary) as a new entry
// attributed to id, then prunes id's scope: entries beyond the newest
// MaxEntries and entries older than the TTL are deleted. The step must
// pass Step.Validate (invalid UTF-8 in its input or output is refused, not
// repaired), and id must pass the store's write check and hold the agent
// level's fields; all are checked before anything is written. The entry
// is durable when Save returns. If pruning fails after the entry was
// written, Save returns the error and the next Save prunes again.
func (v *Vector) Save(ctx context.Context, id memory.Identity, step Step) error {
	if err := v.check(ctx); err != nil {
		return err
	}
	filter, err := saveScope(ctx, v.store, id, memory.LevelAgent, step)
	if err != nil {
		return err
	}
	text := step.Summary() // at most a few KiB: Step bounds every part
	n, err := v.store.Tokens().CountTokens(ctx, text)
	if err != nil {
		return err
	}
	e := vectorEntry{who: id, key: step.key(), tokens: max(0, n), text: text}

	v.mu.Lock()
	defer v.mu.Unlock()
	release, err := v.lock(ctx, osfile.Exclusive)
	if err != nil {
		return err
	}
	defer release()
	if err := v.ensureIndexLocked(ctx); err != nil {
		return err
	}
	// The name is taken under the lock, so the index lists entries in time
	// order, and no other writer can take it between the check and the
	// rename.
	if e.name, err = v.freshName(); err != nil {
		return err
	}
	e.created, _ = parseEntryName(e.name)
	if err := v.writeEntry(e); err != nil {
		return err
	}
	return v.pruneLocked(ctx, filter)
}

// freshName returns a new entry name that no file in the directory has.
// A clash needs the same nanosecond, counter and 64 random bits, so a
// second try is already a formality; the check makes a clash impossible
// rather than improbable. The caller holds the exclusive lock.
func (v *Vector) freshName() (string, error) {
	for {
		name, err := newEntryName(v.store.Now())
		if err != nil {
			return "", err
		}
		_, err = os.Lstat(filepath.Join(v.dir, name))
		if os.IsNotExist(err) {
			return name, nil
		}
		if err != nil {
			return "", fsError(err, "checking vector entry "+name)
		}
	}
}

// writeEntry writes e's file atomically: a temporary file, fsynced; the
// index line, fsynced; the rename into place; the directory, fsynced. The
// caller holds the exclusive lock. A crash before the rename leaves an
// index line whose file does not exist, which readers skip.
func (v *Vector) writeEntry(e vectorEntry) error {
	tmp, err := osfile.WriteTemp(filepath.Join(v.dir, vectorTempDir), "", 0o640, func(w io.Writer) error {
		_, err := w.Write(encodeEntry(e))
		return err
	})
	if err != nil {
		return fsError(err, "writing vector entry "+e.name)
	}
	if err := v.appendIndex(addLine(e)); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := osfile.Rename(tmp, filepath.Join(v.dir, e.name)); err != nil {
		os.Remove(tmp)
		return fsError(err, "renaming vector entry "+e.name)
	}
	return nil
}
