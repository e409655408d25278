// Package recall finds the stored records most relevant to a text: the
// library's recall path, on top of any driver with text search
// (driver.TextSearcher), within the level the caller names as
// backend.Store derives it.
//
// A Recaller ranks in four steps, all without a model:
//
//  1. The text search ranks the records the caller's level admits by BM25
//     over their content (internal/lexical), and the best
//     Options.Candidates go on.
//  2. Each conversation turn gains from the turns said just before and
//     after it in its session (turns without text aside): for each of the
//     Options.Neighbours turns on
//     either side, Options.NeighbourWeight times that turn's own text
//     score. A question is often answered in a turn that shares few of its
//     words while the turns around it share many ("Where did she camp?" —
//     "At the beach!"), so the neighbours' evidence lifts the answer; turns
//     that matched nothing themselves join the ranking this way.
//  3. Each turn gains Options.SessionWeight times its session's score: the
//     BM25 score of everything said in the session taken as one text,
//     among the sessions the recall reads (driver.Match.WriterScore), so a
//     conversation that dwells on the topic outranks a passing mention. A
//     turn that asks a question (its text ends with "?") then loses
//     Options.QuestionPenalty of its score: it names the topic, its
//     neighbours hold the answer.
//  4. A record whose speaker (Metadata[memory.SpeakerKey]) the query names has its
//     score multiplied by 1 + Options.SpeakerBoost, and one created within
//     a day, month or year the query names ("on 9 November, 2023", "in
//     July", "in 2023"; read in Options.Location) by 1 + Options.DateBoost.
//
// Facts, summaries and documents take part in steps 1 and 4. Results are
// ordered by score, then newest, then id, and are deterministic.
//
// Every step reads only what a driver's text index holds of a record
// (driver.Ref: its kind, writer, creation time, speaker and whether it
// asks), so over a driver that ranks by reference (driver.TextRanker:
// SQLite, PostgreSQL) a recall reads from the database only the k records
// it returns, or the pool diversity re-ranks, whatever Options.Candidates
// is; a record deleted in between gives its place to the next. Over other
// drivers it reads what their text search returns and one List per
// session the neighbours come from. Rankings are the same either way.
// BENCHMARKS.md ("Recall quality") measures what each step adds.
//
// Two re-rankings are optional and off by default, for lexical and hybrid
// recalls alike: recency (Options.RecencyHalfLife), which lets a score
// decay with the record's age, and diversity (Options.Diversity), which
// orders the best by maximal marginal relevance so near copies of one
// record do not fill the results.
//
// With an embedder (Options.Embedder), a recall is hybrid: the records
// nearest the text's vector (embedding.Querier over the store's vector
// search) are fused with the lexical ranking, by default by their scores
// scaled to [0, 1] within each list (ScoreFusion), or by reciprocal rank
// fusion (RankFusion); see Fusion. The vector half (the embedder's call,
// then the search) runs on a goroutine of its own while the lexical half
// ranks, and through a driver.VectorRanker it too answers by reference.
// When the embedder or the vector search fails, the recall still
// answers, with the lexical ranking alone, and says so
// (Results.Degraded); it never fails because a model is down.
package recall

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/embedding"
	"github.com/agentmem/memory/internal/kth"
	"github.com/agentmem/memory/internal/lexical"
)

// Defaults of Options.
const (
	// DefaultCandidates is how many text-search results a recall scores
	// when Options.Candidates is zero.
	DefaultCandidates = 300
	// DefaultNeighbours is how many turns on each side of a turn lend it
	// their score when Options.Neighbours is zero.
	DefaultNeighbours = 2
	// DefaultNeighbourWeight is the share of a neighbour's score a turn
	// gains when Options.NeighbourWeight is zero.
	DefaultNeighbourWeight = 0.5
	// DefaultSpeakerBoost is the share a record's score gains when the
	// query names its speaker and Options.SpeakerBoost is zero.
	DefaultSpeakerBoost = 0.5
	// DefaultSessionWeight is the share of its session's score a turn
	// gains when Options.SessionWeight is zero.
	DefaultSessionWeight = 1.0
	// DefaultDateBoost is the share a record's score gains when it was
	// created in a period the query names and Options.DateBoost is zero.
	DefaultDateBoost = 4.0
	// DefaultQuestionPenalty is the share of its score a turn that asks a
	// question loses when Options.QuestionPenalty is zero.
	DefaultQuestionPenalty = 0.2
	// DefaultRecencyWeight is the share of a record's score that decays
	// with its age when Options.RecencyHalfLife is set and
	// Options.RecencyWeight is zero.
	DefaultRecencyWeight = 0.5
	// DefaultFusionK is the rank offset of reciprocal rank fusion when
	// Options.FusionK is zero: the customary 60, which keeps the first
	// few ranks of either list from dominating.
	DefaultFusionK = 60
)

// Options configure a Recaller. The zero value is the documented default.
type Options struct {
	// Candidates is how many records the text search returns for a
	// recall to score, at least the k asked for and at most
	// driver.MaxSearchK; zero means DefaultCandidates.
	Candidates int
	// Neighbours is how many turns on each side of a turn, in its
	// session's order, lend it their score; zero means DefaultNeighbours,
	// a negative value none (the text score alone).
	Neighbours int
	// NeighbourWeight is the share of each neighbour's score a turn
	// gains; zero means DefaultNeighbourWeight.
	NeighbourWeight float64
	// SpeakerBoost is the share of its score a record gains when the
	// query names its speaker (Metadata[memory.SpeakerKey]); zero means
	// DefaultSpeakerBoost, a negative value none.
	SpeakerBoost float64
	// SessionWeight is the share of its session's score a conversation
	// turn gains: the text score of everything said in the session, taken
	// as one text, among the sessions the recall reads
	// (driver.Match.WriterScore). Zero means DefaultSessionWeight, a
	// negative value none.
	SessionWeight float64
	// DateBoost is the share of its score a record gains when it was
	// created within a day, month or year the query names ("on 13 October
	// 2023", "in July"; see the package documentation). Zero means
	// DefaultDateBoost, a negative value none.
	DateBoost float64
	// QuestionPenalty is the share of its score a conversation turn that
	// asks a question (its text ends with a question mark) loses, after
	// its neighbours took their share of it: a question names its topic but
	// seldom holds the answer, which the turns around it do. Zero means
	// DefaultQuestionPenalty, a negative value none; at most 1.
	QuestionPenalty float64
	// Location is the time zone in which the dates a query names are
	// days; nil means UTC.
	Location *time.Location
	// RecencyHalfLife, when positive, ranks recent records higher: each
	// result's score is multiplied by (1 − RecencyWeight) + RecencyWeight ·
	// 2^(−age/RecencyHalfLife), age being the time from the record's
	// creation to the store's clock reading (backend.Store.Now). Zero, the
	// default, means no recency: LoCoMo's questions ask about any time, and
	// recency lowers their scores (BENCHMARKS.md, "Recall quality").
	RecencyHalfLife time.Duration
	// RecencyWeight is the share of a score that decays with age, above 0
	// and at most 1; zero means DefaultRecencyWeight. It is used only with
	// RecencyHalfLife.
	RecencyWeight float64
	// Diversity, when positive, re-ranks the results by maximal marginal
	// relevance: each next result is the candidate, of the best
	// max(4k, 40), maximising (1 − Diversity) · score/best − Diversity ·
	// its greatest similarity to a result before it, the similarity being
	// the cosine of the two records' term counts (their content as the
	// text search analyses it). Zero, the default, means none; at most 1,
	// which orders by novelty alone.
	Diversity float64
	// Embedder, when not nil, makes recalls hybrid: see the package
	// documentation. The store's driver must then have vector search, and
	// the embedder must be the store's recorded model (see package
	// embedding).
	Embedder memory.Embedder
	// Fusion is how a hybrid recall merges its two rankings; the zero
	// value is ScoreFusion.
	Fusion Fusion
	// FusionK is the rank offset of RankFusion; zero means DefaultFusionK.
	FusionK float64
}

// Fusion is how a hybrid recall merges the lexical ranking with the
// vector matches.
type Fusion int

const (
	// ScoreFusion, the default, sums the record's scores in the two lists,
	// each scaled to [0, 1] by the list's lowest and highest (min–max), a
	// record missing from a list scoring 0 there. Chosen by measurement
	// (BENCHMARKS.md, "Recall quality"): where the vector ranking is the
	// weaker, it keeps the lexical ranking's clear winners on top, which
	// rank fusion, counting only ranks, does not.
	ScoreFusion Fusion = iota
	// RankFusion is reciprocal rank fusion: a record scores the sum, over
	// the two lists it is in, of 1/(FusionK + its rank there), ranks
	// counted from 1. It needs no calibration between BM25 scores and
	// cosine similarities.
	RankFusion
)

// Result is one recalled record and its score.
type Result struct {
	Record memory.Record
	// Score is how relevant the record is; higher is more relevant. A
	// lexical recall scores the steps of the package documentation: the
	// record's text score, plus what its neighbours and its session lend
	// it, less the question penalty, times the speaker and date boosts; a
	// hybrid one the fused score of its ranks.
	Score float64
}

// Results is what a recall returns.
type Results struct {
	// Hits are the recalled records, best first.
	Hits []Result
	// Degraded, when not nil, is why a hybrid recall's Hits are the
	// lexical ranking alone: the error of the embedder or of the vector
	// search.
	Degraded error
}

// Recaller recalls records by relevance from a Store. It is safe for
// concurrent use.
type Recaller struct {
	store   *backend.Store
	opt     Options
	querier *embedding.Querier // nil without an embedder
}

// New returns a Recaller over store, which must have text search. Options
// out of range are memory.ErrInvalidArgument.
func New(store *backend.Store, opt Options) (*Recaller, error) {
	// cmp.Or: the first that is not zero.
	opt.Candidates = cmp.Or(opt.Candidates, DefaultCandidates)
	opt.Neighbours = cmp.Or(opt.Neighbours, DefaultNeighbours)
	opt.NeighbourWeight = cmp.Or(opt.NeighbourWeight, DefaultNeighbourWeight)
	opt.SpeakerBoost = cmp.Or(opt.SpeakerBoost, DefaultSpeakerBoost)
	opt.FusionK = cmp.Or(opt.FusionK, DefaultFusionK)
	opt.SessionWeight = cmp.Or(opt.SessionWeight, DefaultSessionWeight)
	opt.DateBoost = cmp.Or(opt.DateBoost, DefaultDateBoost)
	opt.QuestionPenalty = cmp.Or(opt.QuestionPenalty, DefaultQuestionPenalty)
	opt.RecencyWeight = cmp.Or(opt.RecencyWeight, DefaultRecencyWeight)
	if opt.Location == nil {
		opt.Location = time.UTC
	}
	switch {
	case opt.Candidates < 1 || opt.Candidates > driver.MaxSearchK:
		return nil, memory.Errorf(memory.ErrInvalidArgument, "recall: Candidates is %d; it must be between 1 and %d", opt.Candidates, driver.MaxSearchK)
	case opt.Neighbours > 100:
		return nil, memory.Errorf(memory.ErrInvalidArgument, "recall: Neighbours is %d; at most 100", opt.Neighbours)
	case !(opt.NeighbourWeight > 0 && opt.NeighbourWeight <= 10):
		return nil, memory.Errorf(memory.ErrInvalidArgument, "recall: NeighbourWeight is %v; it must be above 0 and at most 10", opt.NeighbourWeight)
	case !(opt.SpeakerBoost <= 10):
		return nil, memory.Errorf(memory.ErrInvalidArgument, "recall: SpeakerBoost is %v; at most 10", opt.SpeakerBoost)
	case !(opt.SessionWeight <= 10):
		return nil, memory.Errorf(memory.ErrInvalidArgument, "recall: SessionWeight is %v; at most 10", opt.SessionWeight)
	case !(opt.QuestionPenalty <= 1):
		return nil, memory.Errorf(memory.ErrInvalidArgument, "recall: QuestionPenalty is %v; at most 1", opt.QuestionPenalty)
	case !(opt.DateBoost <= 100):
		return nil, memory.Errorf(memory.ErrInvalidArgument, "recall: DateBoost is %v; at most 100", opt.DateBoost)
	case opt.RecencyHalfLife < 0:
		return nil, memory.Errorf(memory.ErrInvalidArgument, "recall: RecencyHalfLife is %v; it must not be negative", opt.RecencyHalfLife)
	case !(opt.RecencyWeight > 0 && opt.RecencyWeight <= 1):
		return nil, memory.Errorf(memory.ErrInvalidArgument, "recall: RecencyWeight is %v; it must be above 0 and at most 1", opt.RecencyWeight)
	case !(opt.Diversity >= 0 && opt.Diversity <= 1):
		return nil, memory.Errorf(memory.ErrInvalidArgument, "recall: Diversity is %v; it must be between 0 and 1", opt.Diversity)
	case opt.Fusion != RankFusion && opt.Fusion != ScoreFusion:
		return nil, memory.Errorf(memory.ErrInvalidArgument, "recall: Fusion is %d; it must be RankFusion or ScoreFusion", opt.Fusion)
	case !(opt.FusionK >= 1 && opt.FusionK <= 1000):
		return nil, memory.Errorf(memory.ErrInvalidArgument, "recall: FusionK is %v; it must be between 1 and 1000", opt.FusionK)
	}
	if _, ok := store.Driver().(driver.TextSearcher); !ok {
		return nil, memory.Errorf(memory.ErrUnimplemented, "recall: the %T driver has no text search", store.Driver())
	}
	r := &Recaller{store: store, opt: opt}
	if opt.Embedder != nil {
		if _, ok := store.Driver().(driver.VectorSearcher); !ok {
			return nil, memory.Errorf(memory.ErrUnimplemented, "recall: an embedder needs vector search, and the %T driver has none", store.Driver())
		}
		q, err := embedding.NewQuerier(store, opt.Embedder)
		if err != nil {
			return nil, err
		}
		r.querier = q
	}
	return r, nil
}

// Recall returns the k records id may read under q that are most relevant
// to text, best first. q.Limit is ignored.
func (r *Recaller) Recall(ctx context.Context, id memory.Identity, q memory.Query, text string, k int) (Results, error) {
	if k < 1 || k > driver.MaxSearchK {
		return Results{}, memory.Errorf(memory.ErrInvalidArgument, "recall: k is %d; it must be between 1 and %d", k, driver.MaxSearchK)
	}
	if err := ctx.Err(); err != nil {
		return Results{}, err
	}
	q.Limit = 0
	dq, err := r.store.Query(id, q)
	if err != nil {
		return Results{}, err
	}
	src := newSource(r.store.Driver())
	n := max(k, r.opt.Candidates)
	var vector <-chan vectorRanking
	if r.querier != nil {
		vctx, cancel := context.WithCancel(ctx)
		vector = r.startVector(vctx, dq, text, n)
		defer func() { // on every return: the vector half stopped and waited for
			cancel()
			if vector != nil {
				<-vector
			}
		}()
	}
	ranked, err := r.lexical(ctx, src, dq, text, n)
	if err != nil {
		return Results{}, err
	}
	var degraded error
	if vector != nil {
		v := <-vector
		vector = nil
		switch {
		case v.err == nil && r.opt.Fusion == RankFusion:
			sortHits(ranked) // ranks need an order
			ranked = fuse(r.opt.FusionK, ranked, v.hits)
		case v.err == nil:
			ranked = fuseScores(ranked, v.hits)
		case ctx.Err() != nil:
			return Results{}, ctx.Err()
		default:
			degraded = v.err
		}
	}
	hits, err := r.rerank(ctx, src, dq, ranked, k)
	if err != nil {
		return Results{}, err
	}
	return Results{Hits: hits, Degraded: degraded}, nil
}

// hit is a record a recall scores: its Ref, the record itself once read
// (nil until then), and its score. The Ref is the search's, not a copy:
// a recall sorts hundreds of hits.
type hit struct {
	ref   *driver.Ref
	rec   *memory.Record
	score float64
}

// rerank applies recency and diversity, when asked for, to hits in any
// order, reads the records of the best, and returns the best k whose
// records are still there.
func (r *Recaller) rerank(ctx context.Context, src source, dq driver.Query, hits []hit, k int) ([]Result, error) {
	if r.opt.RecencyHalfLife > 0 {
		decay(hits, r.store.Now(), r.opt.RecencyHalfLife, r.opt.RecencyWeight)
	}
	pool := k
	if r.opt.Diversity > 0 {
		pool = max(4*k, 40) // see diversify
	}
	hits, err := read(ctx, src, dq, hits, pool)
	if err != nil {
		return nil, err
	}
	if r.opt.Diversity > 0 {
		diversify(hits, k, r.opt.Diversity)
	}
	out := make([]Result, min(k, len(hits)))
	for i := range out {
		out[i] = Result{Record: *hits[i].rec, Score: hits[i].score}
	}
	return out, nil
}

// read returns the best n of hits, best first, whose records are still
// there, with their records read: a record deleted since the search
// ranked it gives its place to the next. A record the two halves of a
// hybrid recall saw under two creation times (replaced in between) is
// two hits, of which only the better is kept. hits may come in any
// order; read orders as many as it reads (sortFirst), a few of hundreds.
func read(ctx context.Context, src source, dq driver.Query, hits []hit, n int) ([]hit, error) {
	out := make([]hit, 0, min(n, len(hits)))
	kept := make(map[string]bool, cap(out))
	sorted := 0 // hits[:sorted] are the best, best first
	for next := 0; len(out) < n && next < len(hits); {
		if want := next + n - len(out); sorted < want {
			sorted += sortFirst(hits[sorted:], want-sorted)
		}
		// The next hits that may fill the places left, and the ids of
		// those not read yet.
		end, want := next, n-len(out)
		var ids []string
		for ; end < len(hits) && want > 0 && len(ids) < memory.MaxBatch; end++ {
			if hits[end].rec == nil {
				ids = append(ids, hits[end].ref.ID)
			}
			want--
		}
		recs, err := src.read(ctx, dq, ids)
		if err != nil {
			return nil, err
		}
		for _, h := range hits[next:end] {
			if kept[h.ref.ID] {
				continue
			}
			if h.rec == nil {
				rec, ok := recs[h.ref.ID]
				if !ok {
					continue
				}
				h.rec = &rec
			}
			kept[h.ref.ID] = true
			out = append(out, h)
		}
		next = end
	}
	return out, nil
}

// fuse merges the lexical and vector rankings by reciprocal rank fusion:
// each record scores the sum, over the lists it is in, of 1/(k + its
// rank there), ranks counted from 1.
func fuse(k float64, lexical, vector []hit) []hit {
	f := newFusion(len(lexical) + len(vector))
	for _, list := range [][]hit{lexical, vector} {
		for i, h := range list {
			f.add(h, 1/(k+float64(i+1)))
		}
	}
	return f.results()
}

// fuseScores merges the lexical and vector rankings by their scores, each
// list's scaled to [0, 1] by its own lowest and highest.
func fuseScores(lexical, vector []hit) []hit {
	f := newFusion(len(lexical) + len(vector))
	for _, list := range [][]hit{lexical, vector} {
		scores := make([]float64, len(list))
		for i, h := range list {
			scores[i] = h.score
		}
		scaleMinMax(scores)
		for i, h := range list {
			f.add(h, scores[i])
		}
	}
	return f.results()
}

// scaleMinMax scales v to [0, 1] in place by its lowest and highest
// values; all equal, they become 1.
func scaleMinMax(v []float64) {
	if len(v) == 0 {
		return
	}
	lo, hi := slices.Min(v), slices.Max(v)
	for i := range v {
		if hi > lo {
			v[i] = (v[i] - lo) / (hi - lo)
		} else {
			v[i] = 1
		}
	}
}

// fusion sums scores by record, in the order records first come.
type fusion struct{ set *hitSet }

func newFusion(n int) *fusion { return &fusion{set: newHitSet(n)} }

// add adds score to h's record, keeping its record once either list
// read it.
func (f *fusion) add(h hit, score float64) {
	sum := &f.set.hits[f.set.add(h.ref)]
	if sum.rec == nil {
		sum.rec = h.rec
	}
	sum.score += score
}

// results returns the summed hits, in no particular order.
func (f *fusion) results() []hit { return f.set.hits }

// lexical returns the lexical scores of the n best text matches and the
// turns their neighbours lift, all of them, in no particular order.
func (r *Recaller) lexical(ctx context.Context, src source, dq driver.Query, text string, n int) ([]hit, error) {
	matches, err := src.rank(ctx, dq, text, n)
	if err != nil {
		return nil, err
	}
	scores := newHitSet(len(matches))
	sessionScore := map[memory.Identity]float64{}
	for i := range matches {
		m := &matches[i]
		scores.hits[scores.add(&m.Ref)].score = m.Score
		if m.Ref.Kind == memory.KindTurn {
			sessionScore[m.Ref.Identity] = m.WriterScore
		}
	}
	if r.opt.Neighbours > 0 && kindAdmitted(dq.Kinds, memory.KindTurn) && len(sessionScore) > 0 {
		if err := r.lend(ctx, src, dq, sessionScore, scores); err != nil {
			return nil, err
		}
	}
	var queryTerms []string
	if r.opt.SpeakerBoost > 0 {
		queryTerms = lexical.Terms(text)
	}
	var periods []period
	if r.opt.DateBoost > 0 {
		periods = namedPeriods(text)
	}
	isNamed := map[string]bool{} // by speaker: a conversation has few
	out := make([]hit, 0, len(scores.hits))
	for i := range scores.hits {
		h := &scores.hits[i]
		if h.score <= 0 {
			continue
		}
		if h.ref.Kind == memory.KindTurn {
			if r.opt.SessionWeight > 0 {
				h.score += r.opt.SessionWeight * sessionScore[h.ref.Identity]
			}
			if r.opt.QuestionPenalty > 0 && h.ref.Asks {
				h.score *= 1 - r.opt.QuestionPenalty
			}
		}
		if sp := h.ref.Speaker; sp != "" && queryTerms != nil {
			yes, seen := isNamed[sp]
			if !seen {
				yes = named(queryTerms, sp)
				isNamed[sp] = yes
			}
			if yes {
				h.score *= 1 + r.opt.SpeakerBoost
			}
		}
		if createdIn(h.ref.Created, periods, r.opt.Location) {
			h.score *= 1 + r.opt.DateBoost
		}
		out = append(out, *h)
	}
	return out, nil
}

// createdIn reports whether t falls in one of periods, read in loc.
func createdIn(t time.Time, periods []period, loc *time.Location) bool {
	for _, p := range periods {
		if p.contains(t, loc) {
			return true
		}
	}
	return false
}

// sortFirst moves the best n of hits (all when fewer) to the front, best
// first, and returns how many it ordered: n, or more when hits after the
// n-th score as much, which it orders too. The rest stay unordered. It
// picks the best by their scores alone, comparing references (ids lying
// scattered in memory) only among those: a recall orders the ten it
// returns of hundreds it scored.
func sortFirst(hits []hit, n int) int {
	if n >= len(hits) || n < 1 {
		sortHits(hits)
		return len(hits)
	}
	// bar: the n-th best score, the root of a min-heap of the n best.
	best := make([]float64, 0, n)
	for i := range hits {
		best = kth.Push(best, n, hits[i].score)
	}
	bar := best[0]
	if math.IsNaN(bar) {
		sortHits(hits)
		return len(hits)
	}
	m := 0
	for i := range hits {
		if hits[i].score >= bar {
			hits[m], hits[i] = hits[i], hits[m]
			m++
		}
	}
	sortHits(hits[:m])
	return m
}

// sortHits orders hits by score, then newest, then greatest id.
func sortHits(out []hit) {
	slices.SortFunc(out, func(a, b hit) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return driver.CompareRefs(*a.ref, *b.ref)
	})
}

// kindAdmitted reports whether a query with kinds reads records of kind k.
func kindAdmitted(kinds []memory.Kind, k memory.Kind) bool {
	return len(kinds) == 0 || slices.Contains(kinds, k)
}

// lend adds to each turn of sessions (the sessions of the matched turns)
// the weighted text scores of its neighbours: the turns with content said
// just before and after it in its session, within the caller's query.
// Turns that matched nothing themselves join the results with what their
// neighbours lend them.
func (r *Recaller) lend(ctx context.Context, src source, dq driver.Query, sessions map[memory.Identity]float64, scores *hitSet) error {
	// The scores before any is lent: hits added since lend nothing.
	base := make([]float64, len(scores.hits))
	for i := range scores.hits {
		base[i] = scores.hits[i].score
	}
	// The sessions in a fixed order, so that the sums are made alike on
	// every run.
	writers := make([]memory.Identity, 0, len(sessions))
	for w := range sessions {
		writers = append(writers, w)
	}
	slices.SortFunc(writers, compareIdentity)
	tq := dq
	tq.Kinds = []memory.Kind{memory.KindTurn}
	for len(writers) > 0 {
		batch := writers[:min(len(writers), memory.MaxBatch)]
		writers = writers[len(batch):]
		refs, err := src.writerRefs(ctx, tq, batch)
		if err != nil {
			return err
		}
		for _, turns := range refs {
			slices.Reverse(turns) // oldest first: the order the turns were said in
			for i := range turns {
				t := &turns[i]
				var lent float64
				for j := max(0, i-r.opt.Neighbours); j <= min(len(turns)-1, i+r.opt.Neighbours); j++ {
					if j == i {
						continue
					}
					if b := scores.find(&turns[j]); b >= 0 && b < len(base) {
						lent += base[b]
					}
				}
				if lent == 0 {
					continue
				}
				scores.hits[scores.add(t)].score += r.opt.NeighbourWeight * lent
			}
		}
	}
	return nil
}

// compareIdentity orders identities field by field.
func compareIdentity(a, b memory.Identity) int {
	for _, f := range []memory.Field{memory.FieldTenant, memory.FieldUser, memory.FieldAgent, memory.FieldInstance, memory.FieldSquad, memory.FieldSession} {
		if c := strings.Compare(a.Get(f), b.Get(f)); c != 0 {
			return c
		}
	}
	return 0
}
