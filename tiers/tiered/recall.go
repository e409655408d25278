package tiered

import (
	"context"
	"errors"
	"strings"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/recall"
)

// RecallOptions say what a recall may return. The zero value is the
// default.
type RecallOptions struct {
	// Level selects the long-term facts recalled: memory.LevelSession,
	// LevelAgent, LevelUser or LevelStore, as memory.Level filters them
	// (the window and digest are always the session's). Empty means
	// Options.Level.
	Level memory.Level
	// K is how many facts at most; zero means Options.Facts.
	K int
	// Budget is the tokens the recalled records may hold together
	// (Record.Tokens), at most Options.Budget; zero means Options.Budget.
	Budget int
	// NoWindow, NoDigest and NoFacts leave the window, the digest or the
	// facts out of the recollection: a tier left out is not searched,
	// takes none of the budget, and cannot degrade the recall. (The
	// latest digest's boundary is still read for the window: a failure
	// to read it then degrades the window.)
	NoWindow, NoDigest, NoFacts bool
}

// Recollection is what a recall assembled for a prompt.
type Recollection struct {
	// Window is the newest turns of the session's window that fit, oldest
	// first.
	Window []memory.Record
	// Digest is the session's latest digest; for a session not folded
	// yet, at a level wider than the session's, the latest digest of an
	// earlier session visible at that level (its Identity says whose), so
	// a new session carries on from the last; nil when there is none or
	// it did not fit.
	Digest *memory.Record
	// Facts are the facts most relevant to what the recall is about,
	// best first.
	Facts []recall.Result
	// Text is the block to put before a prompt; empty when nothing was
	// recalled. See Render.
	Text string
	// Tokens is the token count of Text.
	Tokens int
	// Usage is what the recall spent on models: the requests its fact
	// search made to Options.Recall.Embedder, whose tokens the Embedder
	// interface does not report (UnreportedCalls); zero for a lexical
	// recall.
	Usage extract.Usage
	// Degraded reports that a tier could not be read; Errors says which
	// and why. The tiers that were read are returned all the same.
	Degraded bool
	Errors   TierErrors
}

// TierErrors are the failures of a recall's tiers; nil where a tier was
// read.
type TierErrors struct {
	Window, Digest, Facts error
}

// RecallWith returns what id should remember before a turn about text: the
// session's window, its latest digest (for a session not folded yet, the
// latest at opt.Level: see Recollection.Digest) and the facts most
// relevant to text at opt.Level (none when text is empty), within
// opt.Budget tokens.
// The window takes up to half the budget, newest turns first; then the
// digest if it fits; then facts, best first, while they fit; then older
// turns of the window in what is left.
//
// Recall is soft: a tier that cannot be read leaves its part empty, sets
// Degraded and is reported in Errors, and the call still succeeds. Only
// the caller's mistakes fail it: an identity without a session
// (memory.ErrIncompleteScope) or without what opt.Level needs, options
// out of range, a closed Memory, ctx's end.
func (m *Memory) RecallWith(ctx context.Context, id memory.Identity, text string, opt RecallOptions) (Recollection, error) {
	if err := m.enter(ctx); err != nil {
		return Recollection{}, err
	}
	defer m.leave()
	if opt.Level == "" {
		opt.Level = m.opt.Level
	}
	switch {
	case opt.K < 0 || opt.K > 1000:
		return Recollection{}, memory.Errorf(memory.ErrInvalidArgument, "tiered: recall K is %d; it must be between 0 and 1000", opt.K)
	case opt.Budget < 0:
		return Recollection{}, memory.Errorf(memory.ErrInvalidArgument, "tiered: recall budget is %d; it must not be negative", opt.Budget)
	}
	if opt.K == 0 {
		opt.K = m.opt.Facts
	}
	if opt.Budget == 0 || opt.Budget > m.opt.Budget {
		opt.Budget = m.opt.Budget
	}
	if _, err := m.st.Filter(id, memory.LevelSession); err != nil {
		return Recollection{}, err
	}
	if _, err := m.st.Filter(id, opt.Level); err != nil {
		return Recollection{}, err
	}
	var out Recollection
	// The facts' search runs while the window and digest are read.
	type found struct {
		res recall.Results
		err error
	}
	var facts chan found
	ctx, calls := withCalls(ctx)
	if text != "" && !opt.NoFacts {
		facts = make(chan found, 1)
		go func() {
			res, err := m.facts.Search(ctx, id, opt.Level, text, opt.K)
			facts <- found{res, err}
		}()
	}
	var (
		d, shown digest
		turns    []memory.Record
	)
	if !opt.NoWindow || !opt.NoDigest {
		var err error
		if d, err = m.latestDigest(ctx, id); err != nil {
			if opt.NoDigest {
				out.Errors.Window = err // the window's boundary could not be read
			} else {
				out.Errors.Digest = err
			}
		}
	}
	if !opt.NoWindow {
		var err error
		if turns, _, err = m.unfolded(ctx, id, d.through, m.opt.MaxTurns); err != nil && out.Errors.Window == nil {
			out.Errors.Window = err
		}
	}
	if !opt.NoDigest {
		shown = d
	}
	if !opt.NoDigest && d.version == 0 && out.Errors.Digest == nil && opt.Level != memory.LevelSession {
		// A session not folded yet carries on from the last one's digest.
		recs, derr := m.st.List(ctx, id, memory.Query{Level: opt.Level, Kinds: []memory.Kind{memory.KindDigest}, Limit: 1})
		switch {
		case derr != nil:
			out.Errors.Digest = derr
		case len(recs) > 0:
			if prev, perr := parseDigest(recs[0]); perr == nil {
				shown = prev
			}
		}
	}
	var hits []recall.Result
	if facts != nil {
		f := <-facts
		switch {
		case f.err != nil:
			out.Errors.Facts = f.err
		case f.res.Degraded != nil:
			out.Errors.Facts = f.res.Degraded
			hits = f.res.Hits
		default:
			hits = f.res.Hits
		}
	}
	if err := ctx.Err(); err != nil {
		return Recollection{}, err
	}
	if err := m.assemble(ctx, &out, turns, shown, hits, opt.Budget); err != nil {
		return Recollection{}, err
	}
	out.Degraded = out.Errors != TierErrors{}
	out.Usage = embedderUsage(calls.Load())
	out.Text = Render(out)
	if out.Text != "" {
		n, err := m.st.Tokens().CountTokens(ctx, out.Text)
		if err != nil {
			return Recollection{}, err
		}
		out.Tokens = n
	}
	return out, nil
}

// Recall is RecallWith with the default options (facts at
// Options.Level), in the shape every
// memory type shares (memory.Recaller): the records in the order Text
// shows them (facts, digest, window), the rendered block, its tokens, and
// the tiers that could not be read joined in Degraded.
func (m *Memory) Recall(ctx context.Context, id memory.Identity, about string) (memory.Recollection, error) {
	r, err := m.RecallWith(ctx, id, about, RecallOptions{})
	if err != nil {
		return memory.Recollection{}, err
	}
	return r.Shared(), nil
}

// Shared returns r in the shape every memory type shares
// (memory.Recollection): the records in the order Text shows them (facts,
// digest, window), the rendered block, its tokens, and the errors of the
// tiers that could not be read joined in Degraded, each error once when
// one failure failed several tiers.
func (r Recollection) Shared() memory.Recollection {
	out := memory.Recollection{Text: r.Text, Tokens: r.Tokens}
	for _, f := range r.Facts {
		out.Records = append(out.Records, f.Record)
	}
	if r.Digest != nil {
		out.Records = append(out.Records, *r.Digest)
	}
	out.Records = append(out.Records, r.Window...)
	if r.Degraded {
		var errs []error
		for _, e := range []error{r.Errors.Window, r.Errors.Digest, r.Errors.Facts} {
			if e != nil && (len(errs) == 0 || e != errs[len(errs)-1]) {
				errs = append(errs, e)
			}
		}
		out.Degraded = errors.Join(errs...)
	}
	return out
}

var _ memory.Recaller = (*Memory)(nil)

// assemble fills out's window, digest and facts from what was read,
// within budget tokens, as Recall describes.
func (m *Memory) assemble(ctx context.Context, out *Recollection, turns []memory.Record, d digest, hits []recall.Result, budget int) error {
	sizes := make([]int, len(turns))
	for i, t := range turns {
		n, err := m.tokens(ctx, t)
		if err != nil {
			return err
		}
		sizes[i] = n
	}
	used, from := 0, len(turns)
	// Newest turns, up to half the budget.
	for from > 0 && used+sizes[from-1] <= budget/2 {
		from--
		used += sizes[from]
	}
	if d.version > 0 && d.rec.Content != "" {
		if n, err := m.tokens(ctx, d.rec); err != nil {
			return err
		} else if used+n <= budget {
			used += n
			out.Digest = &d.rec
		}
	}
	for _, h := range hits {
		n, err := m.tokens(ctx, h.Record)
		if err != nil {
			return err
		}
		if used+n > budget {
			break
		}
		used += n
		out.Facts = append(out.Facts, h)
	}
	// Older turns in what is left.
	for from > 0 && used+sizes[from-1] <= budget {
		from--
		used += sizes[from]
	}
	out.Window = turns[from:]
	return nil
}

// The delimiters of the block Render makes.
const (
	BlockStart = "[Memory]"
	BlockEnd   = "[End of memory]"
)

// Render returns the block a Recollection puts before a prompt: its
// facts, digest and window, each under a heading, between BlockStart
// and BlockEnd; empty when it holds nothing.
//
//	[Memory]
//	Known facts:
//	- <fact>
//	Earlier conversation:
//	<digest>
//	Recent turns:
//	<role>: <content>
//	[End of memory]
//
// A recalled text that spells either delimiter has its brackets made
// parentheses, so no record can close the block or open another.
func Render(r Recollection) string {
	if len(r.Window) == 0 && r.Digest == nil && len(r.Facts) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(BlockStart + "\n")
	if len(r.Facts) > 0 {
		b.WriteString("Known facts:\n")
		for _, f := range r.Facts {
			b.WriteString("- " + neutral(f.Record.Content) + "\n")
		}
	}
	if r.Digest != nil {
		b.WriteString("Earlier conversation:\n" + neutral(r.Digest.Content) + "\n")
	}
	if len(r.Window) > 0 {
		b.WriteString("Recent turns:\n")
		for _, t := range r.Window {
			b.WriteString(t.Label + ": " + neutral(t.Content) + "\n")
		}
	}
	b.WriteString(BlockEnd)
	return b.String()
}

// delimiters makes the block's delimiters harmless in recalled text.
var delimiters = strings.NewReplacer(BlockStart, "(Memory)", BlockEnd, "(End of memory)")

func neutral(s string) string { return delimiters.Replace(s) }
