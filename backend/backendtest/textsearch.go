package backendtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/lexical"
)

// approximateTextRecall is the least recall an ApproximateTextSearch
// driver's results may have against the reference's: of all the records
// the reference returns over every search checkTextSearch compares, the
// share the driver returns too.
const approximateTextRecall = 0.9

// textSearcher returns d as a driver.TextSearcher when Config.TextSearch
// declares it, failing when the declaration and the driver disagree.
func textSearcher(r reporter, e *env, d driver.Driver) (driver.TextSearcher, bool) {
	r.Helper()
	switch e.cfg.TextSearch {
	case NoTextSearch, ExactTextSearch, ApproximateTextSearch:
	default:
		r.Fatalf("Config.TextSearch is %d: not NoTextSearch, ExactTextSearch or ApproximateTextSearch", e.cfg.TextSearch)
	}
	return capability[driver.TextSearcher](r, d, e.cfg.TextSearch != NoTextSearch, "TextSearch", "driver.TextSearcher", "text search is not checked")
}

// referenceText is the reference text search: the lexical engine's
// reference ranking over the corpus driver.TextSearcher defines — every
// stored record whose identity q's filter matches, whatever its kind or
// expiry, with content — with the live records q matches as the candidates, ties in
// List order. Each match's WriterScore is the reference ranking's score
// of its writer's corpus records joined into one text, among the joined
// texts of every writer in the corpus.
func referenceText(r reporter, all []memory.Record, q driver.Query, text string, k int, now time.Time) []driver.Match {
	var docs []lexical.Doc[memory.Record]
	joined := map[memory.Identity][]string{}
	for _, rec := range all {
		if rec.Content != "" && q.Filter.Matches(rec.Identity) {
			docs = append(docs, lexical.Doc[memory.Record]{Ref: rec, Text: rec.Content})
			joined[rec.Identity] = append(joined[rec.Identity], rec.Content)
		}
	}
	keep := func(rec memory.Record) bool { return !rec.Expired(now) && q.Matches(rec) }
	hits, err := lexical.Rank(text, docs, lexical.DefaultParams(), k, lexical.ByScore(newer), keep)
	mustNoErr(r, "the reference ranking", err)
	var writers []lexical.Doc[memory.Identity]
	for w, texts := range joined {
		writers = append(writers, lexical.Doc[memory.Identity]{Ref: w, Text: strings.Join(texts, " ")})
	}
	writerScore := map[memory.Identity]float64{}
	if len(writers) > 0 {
		byWriter, err := lexical.Rank(text, writers, lexical.DefaultParams(), len(writers), lexical.ByScore(identityBefore), nil)
		mustNoErr(r, "the reference ranking of writers", err)
		for _, h := range byWriter {
			writerScore[h.Ref] = h.Score
		}
	}
	out := make([]driver.Match, len(hits))
	for i, h := range hits {
		out[i] = driver.Match{Record: h.Ref, Score: h.Score, WriterScore: writerScore[h.Ref.Identity]}
	}
	return out
}

// identityBefore orders identities by their fields, a total order.
func identityBefore(a, b memory.Identity) bool {
	return fmt.Sprint(a) < fmt.Sprint(b)
}

// textWords is the vocabulary of the check's random texts: a few words
// common enough to repeat within and across records, stems shared by
// several spellings, and stopwords.
var textWords = strings.Fields(`parcel parcels late lateness delivery delivered order orders refund
	tea green coffee invoice invoices address moved moving the a is of and to my again ship shipped
	warehouse courier Paris paris café naïve 2024 ticket`)

// randomText returns n words of textWords, some capitalised or punctuated.
func randomText(rnd *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		w := textWords[rnd.IntN(len(textWords))]
		if rnd.IntN(6) == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
		if rnd.IntN(8) == 0 {
			b.WriteString(",")
		}
	}
	return b.String()
}

// checkTextSearch checks ranked text search against the lexical engine's
// reference on random data under many filters: under ExactTextSearch the
// same records in the same order with the same scores; under
// ApproximateTextSearch results of the query sharing a term with its
// text, as many as the reference's, with scores above 0 that never
// increase, and their recall against the reference's, over every search,
// at least approximateTextRecall. Then the corpus statistics staying
// within the filter (another tenant's text moves no score), writes after
// a search found by the next, replaced and deleted records, bad
// arguments, a text without words, a closed driver and a done context.
func checkTextSearch(r reporter, e *env) {
	d, clk := e.open(r)
	ts, ok := textSearcher(r, e, d)
	if !ok {
		return
	}
	ctx := context.Background()
	rnd := e.rand(r)

	if got, err := ts.SearchText(ctx, tenantQuery("ts-a"), "parcel", 5); noErr(r, "SearchText of an empty store", err) && len(got) != 0 {
		r.Errorf("SearchText of an empty store returned %d matches", len(got))
	}

	all := randomRecords(rnd, 800, "ts", []memory.Kind{memory.KindFact, memory.KindTurn, memory.KindSummary}, 200, func(rec *memory.Record, _ int) {
		rec.Content = randomText(rnd, 1+rnd.IntN(30))
		switch rnd.IntN(20) {
		case 0:
			rec.Content = "" // no text: in no corpus
		case 1, 2, 3:
			rec.Content += []string{"?", " ?)", "？"}[rnd.IntN(3)] // asks (driver.Ref)
		}
		if rnd.IntN(3) == 0 {
			rec.Metadata = map[string]string{memory.SpeakerKey: []string{"Ann", "Bo Li"}[rnd.IntN(2)]}
		}
		if rec.Kind == memory.KindTurn {
			rec.Label = string(memory.RoleUser)
		}
	})
	all = e.agentRecords(d, all)
	e.putAll(r, d, "random texts", all)
	clk.Advance(time.Minute) // some records have expired
	now := clk.Now()

	filters := searchFilters(r, rnd, all)
	var tally textTally
	compareAll := func(stored []memory.Record, rounds int) {
		for qi := range rounds {
			compareOne(r, e.cfg.TextSearch, ts, stored, filters, rnd, qi, now, &tally)
		}
	}
	compareAll(all, 12)
	// With every expiring record deleted, a driver may rank a query that
	// names only kinds without reading a record: the same results.
	clk.Advance(3 * time.Minute) // every expiring record has expired
	now = clk.Now()
	expiring := map[string][]string{} // ids by tenant
	var lasting []memory.Record
	for _, rec := range all {
		if rec.Expires.IsZero() {
			lasting = append(lasting, rec)
		} else {
			expiring[rec.Identity.Tenant] = append(expiring[rec.Identity.Tenant], rec.ID)
		}
	}
	for tenant, ids := range expiring {
		for len(ids) > 0 {
			q := tenantQuery(tenant)
			q.IDs, ids = ids[:min(len(ids), 50)], ids[min(len(ids), 50):]
			_, err := d.Delete(ctx, q)
			mustNoErr(r, "Delete of the expiring records", err)
		}
	}
	compareAll(lasting, 6)
	if _, ok := ts.(driver.TextRanker); !ok {
		r.Logf("the driver does not implement driver.TextRanker: RankText and WriterRefs are not checked")
	}
	if tally.wanted == 0 {
		r.Errorf("the reference found nothing for any of the random queries: the check compared no results")
	}
	if e.cfg.TextSearch == ApproximateTextSearch {
		recall := float64(tally.found) / float64(max(tally.wanted, 1))
		r.Logf("recall against the reference over %d searches: %.3f (%d of %d records)", tally.searches, recall, tally.found, tally.wanted)
		if recall < approximateTextRecall {
			r.Errorf("recall against the reference over %d searches is %.3f (%d of %d records), want at least %v", tally.searches, recall, tally.found, tally.wanted, approximateTextRecall)
		}
	}

	// Results are whole records.
	var one memory.Record
	for _, rec := range all {
		if !rec.Expired(now) && rec.Content != "" {
			one = rec
			break
		}
	}
	q := tenantQuery(one.Identity.Tenant)
	q.IDs = []string{one.ID}
	if got, err := ts.SearchText(ctx, q, one.Content, 1); noErr(r, "SearchText for one record by its own text", err) && len(got) == 1 {
		sameRecords(r, "the record a SearchText returns", []memory.Record{got[0].Record}, []memory.Record{one})
	}

	checkTextScope(r, e, d, ts)
	if e.cfg.TextSearch == ApproximateTextSearch {
		checkTextUserScope(r, e, d, ts)
	}
	checkTextReplicas(r, e, d, ts)
	checkTextErrors(r, d, ts)
}

// textTally counts what checkTextSearch compared: the searches, the
// records the reference returned (wanted) and, of those, the records the
// driver returned too (found; counted only under ApproximateTextSearch).
type textTally struct {
	searches, wanted, found int
}

// compareOne runs query qi of checkTextSearch: a random text from a
// random caller, under each of filters, compared with the reference over
// all at now, as mode says; tally counts what it compared.
func compareOne(r reporter, mode TextSearch, ts driver.TextSearcher, all []memory.Record, filters []searchFilter, rnd *rand.Rand, qi int, now time.Time, tally *textTally) {
	r.Helper()
	ctx := context.Background()
	caller := all[rnd.IntN(len(all))].Identity
	text := randomText(rnd, 1+rnd.IntN(6))
	k := []int{1, 5, 10, 50}[rnd.IntN(4)]
	for _, f := range filters {
		q := f.q(caller)
		what := fmt.Sprintf("query %d (%q, k %d), filter %s", qi, text, k, f.what)
		got, err := ts.SearchText(ctx, q, text, k)
		if !noErr(r, what, err) {
			continue
		}
		for i, m := range got {
			if !q.Matches(m.Record) || m.Record.Expired(now) {
				r.Errorf("%s: result %d (%s of %+v) is outside the query: a leak", what, i, m.Record.ID, m.Record.Identity)
			}
		}
		want := referenceText(r, all, q, text, k, now)
		tally.searches++
		tally.wanted += len(want)
		if mode == ExactTextSearch {
			sameTextMatches(r, what, got, want)
		} else {
			tally.found += nearTextMatches(r, what, text, got, want)
		}
		if tr, ok := ts.(driver.TextRanker); ok {
			checkRankText(r, what, tr, q, text, k, got)
			checkWriterRefs(r, what, tr, q, all, now)
		}
	}
}

// checkRankText checks that RankText returns what SearchText returned
// (got), by reference (see sameRanking).
func checkRankText(r reporter, what string, tr driver.TextRanker, q driver.Query, text string, k int, got []driver.Match) {
	r.Helper()
	ranked, err := tr.RankText(context.Background(), q, text, k)
	if noErr(r, what+": RankText", err) {
		sameRanking(r, what, "RankText", "SearchText", ranked, got)
	}
}

// sameRanking checks that ranked, what the search by reference named
// byRef returned, is got, what the search named whole returned: the same
// matches with the same scores, writer scores included, each Ref that of
// the record whole read.
func sameRanking(r reporter, what, byRef, whole string, ranked []driver.RefMatch, got []driver.Match) {
	r.Helper()
	if len(ranked) != len(got) {
		r.Errorf("%s: %s returned %d matches, %s %d", what, byRef, len(ranked), whole, len(got))
		return
	}
	for i, m := range ranked {
		if want := driver.RefOf(got[i].Record); !sameRef(m.Ref, want) {
			r.Errorf("%s: %s's match %d is %+v, %s's record's Ref %+v", what, byRef, i, m.Ref, whole, want)
		}
		if m.Score != got[i].Score || m.WriterScore != got[i].WriterScore {
			r.Errorf("%s: %s scores %s %v (writer %v), %s %v (writer %v)", what, byRef, m.Ref.ID, m.Score, m.WriterScore, whole, got[i].Score, got[i].WriterScore)
		}
	}
}

// checkWriterRefs checks WriterRefs for every writer of all, and one
// that wrote nothing, against the records all holds: for each, the Refs
// of its live records with content that q matches, newest first.
func checkWriterRefs(r reporter, what string, tr driver.TextRanker, q driver.Query, all []memory.Record, now time.Time) {
	r.Helper()
	var writers []memory.Identity
	want := map[memory.Identity][]driver.Ref{}
	for _, rec := range all {
		if _, seen := want[rec.Identity]; !seen {
			writers = append(writers, rec.Identity)
			want[rec.Identity] = nil
		}
		if rec.Content != "" && !rec.Expired(now) && q.Matches(rec) {
			want[rec.Identity] = append(want[rec.Identity], driver.RefOf(rec))
		}
	}
	writers = append(writers, memory.Identity{Tenant: q.Filter.Identity.Tenant, User: "wrote-nothing"})
	got, err := tr.WriterRefs(context.Background(), q, writers)
	if !noErr(r, what+": WriterRefs", err) {
		return
	}
	if len(got) != len(writers) {
		r.Errorf("%s: WriterRefs of %d writers returned %d lists", what, len(writers), len(got))
		return
	}
	for i, w := range writers {
		refs := want[w]
		slices.SortFunc(refs, driver.CompareRefs)
		if len(got[i]) != len(refs) {
			r.Errorf("%s: WriterRefs gives writer %+v %d records, want %d", what, w, len(got[i]), len(refs))
			continue
		}
		for j := range refs {
			if !sameRef(got[i][j], refs[j]) {
				r.Errorf("%s: WriterRefs gives writer %+v as its record %d %+v, want %+v", what, w, j, got[i][j], refs[j])
				break
			}
		}
	}
}

// sameRef reports whether two Refs are equal, their times at one instant.
func sameRef(a, b driver.Ref) bool {
	eq := a.Created.Equal(b.Created)
	a.Created, b.Created = time.Time{}, time.Time{}
	return eq && a == b
}

// checkTextReplicas checks, for a driver with replicas, that a text
// search through one handle sees what another wrote after its last
// search: a new record, a replacement and a deletion.
func checkTextReplicas(r reporter, e *env, d driver.Driver, ts driver.TextSearcher) {
	r.Helper()
	if e.cfg.Replica == nil {
		r.Logf("the driver has no replicas (Config.Replica is nil): text search across replicas is not checked")
		return
	}
	rd := e.cfg.Replica(e.t, d)
	if rd == nil || rd == d {
		r.Fatalf("Config.Replica returned %v, not another handle on the driver's storage", rd)
	}
	e.t.Cleanup(func() { _ = rd.Close() })
	rts, ok := rd.(driver.TextSearcher)
	if !ok {
		r.Fatalf("the replica (%T) does not implement driver.TextSearcher, yet the driver does", rd)
	}
	ctx := context.Background()
	who := memory.Identity{Tenant: "ts-replica", User: "alice", Agent: "agent", Session: "s1"}
	q := tenantQuery(who.Tenant)
	mk := func(id, text string, age int) memory.Record {
		return memory.Record{ID: id, Kind: memory.KindFact, Identity: who, Content: text, Created: t0.Add(-time.Duration(age) * time.Second)}
	}
	search := func(s driver.TextSearcher, what, want string) {
		r.Helper()
		got, err := s.SearchText(ctx, q, "parcel", 10)
		if noErr(r, what, err) && textIDs(got) != want {
			r.Errorf("%s: SearchText(parcel) = %s, want %s", what, matchIDs(got), want)
		}
	}
	e.put(r, d, "a first record", e.agentRecords(d, []memory.Record{mk("tr-1", "the parcel is late", 3)}))
	search(rts, "the replica, after the driver's first write", "tr-1")
	e.put(r, d, "a new record", e.agentRecords(d, []memory.Record{mk("tr-2", "parcel parcel", 2)}))
	search(rts, "the replica, after the driver added a record", "tr-2 tr-1")
	e.put(r, d, "a replacement", e.agentRecords(d, []memory.Record{mk("tr-2", "green tea", 2)}))
	search(rts, "the replica, after the driver replaced a record", "tr-1")
	e.put(r, rd, "a record through the replica", e.agentRecords(rd, []memory.Record{mk("tr-3", "a parcel", 1)}))
	search(ts, "the driver, after the replica added a record", "tr-3 tr-1")
	dq := q
	dq.IDs = []string{"tr-1"}
	_, err := d.Delete(ctx, dq)
	mustNoErr(r, "Delete of tr-1", err)
	search(rts, "the replica, after the driver deleted a record", "tr-3")
}

// sameTextMatches compares a driver's text search result with the
// reference: the same records, in the same order, with the same scores.
// Scores are sums of the same terms and may differ by rounding only.
func sameTextMatches(r reporter, what string, got, want []driver.Match) {
	r.Helper()
	if len(got) != len(want) {
		r.Errorf("%s: %d results, want %d: got %s, want %s", what, len(got), len(want), matchIDs(got), matchIDs(want))
		return
	}
	for i := range got {
		if got[i].Record.ID != want[i].Record.ID {
			r.Errorf("%s: result %d is %s, want %s: got %s, want %s", what, i, got[i].Record.ID, want[i].Record.ID, matchIDs(got), matchIDs(want))
			return
		}
		if math.Abs(got[i].Score-want[i].Score) > 1e-9*max(1, math.Abs(want[i].Score)) {
			r.Errorf("%s: %s has score %v, the reference %v", what, got[i].Record.ID, got[i].Score, want[i].Score)
		}
		if math.Abs(got[i].WriterScore-want[i].WriterScore) > 1e-9*max(1, math.Abs(want[i].WriterScore)) {
			r.Errorf("%s: %s has writer score %v, the reference %v", what, got[i].Record.ID, got[i].WriterScore, want[i].WriterScore)
		}
	}
}

// nearTextMatches checks an approximate driver's text search result
// against the reference's, want: every result shares a term with text,
// there are as many results as want holds, and the scores are above 0
// and never increase. Writer scores are not compared. It returns how
// many of want's records got holds.
func nearTextMatches(r reporter, what, text string, got, want []driver.Match) int {
	r.Helper()
	terms := lexical.Terms(text)
	for i, m := range got {
		if !sharesTerm(m.Record.Content, terms) {
			r.Errorf("%s: result %d (%s, %q) shares no term with the text", what, i, m.Record.ID, m.Record.Content)
		}
		if !(m.Score > 0) {
			r.Errorf("%s: result %d (%s) has score %v, want above 0", what, i, m.Record.ID, m.Score)
		}
		if i > 0 && m.Score > got[i-1].Score {
			r.Errorf("%s: scores are not in descending order at %d: %s scores %v after %s's %v", what, i, m.Record.ID, m.Score, got[i-1].Record.ID, got[i-1].Score)
		}
	}
	if len(got) != len(want) {
		r.Errorf("%s: %d results, want %d, as many as the reference (every record of the query holding a term of the text is a candidate): got %s, want %s", what, len(got), len(want), matchIDs(got), matchIDs(want))
	}
	returned := make(map[string]bool, len(got))
	for _, m := range got {
		returned[m.Record.ID] = true
	}
	found := 0
	for _, m := range want {
		if returned[m.Record.ID] {
			found++
		}
	}
	return found
}

// sharesTerm reports whether text holds one of terms (lexical.Analyze).
func sharesTerm(text string, terms []string) bool {
	for t := range lexical.Analyze(text) {
		if slices.Contains(terms, t) {
			return true
		}
	}
	return false
}

// identicalMatches compares two results of an approximate driver's text
// search that must be the same: the same records in the same order, with
// exactly the same scores and writer scores.
func identicalMatches(r reporter, what string, got, want []driver.Match) {
	r.Helper()
	if textIDs(got) != textIDs(want) {
		r.Errorf("%s: got %s, want %s", what, matchIDs(got), matchIDs(want))
		return
	}
	for i := range got {
		if got[i].Score != want[i].Score || got[i].WriterScore != want[i].WriterScore {
			r.Errorf("%s: %s has score %v (writer %v), before %v (writer %v)", what, got[i].Record.ID, got[i].Score, got[i].WriterScore, want[i].Score, want[i].WriterScore)
		}
	}
}

// checkTextScope checks that the statistics of a text search come from
// the records its filter matches alone: adding another tenant's records
// that hold the query's words leaves every score of a search unchanged
// (within rounding under ExactTextSearch, exactly, writer scores too,
// under ApproximateTextSearch), while adding them to the searcher's own
// scope changes them. It then
// checks that writes after a search are found, and replaced and deleted
// records are not found by their old text.
func checkTextScope(r reporter, e *env, d driver.Driver, ts driver.TextSearcher) {
	ctx := context.Background()
	mine := memory.Identity{Tenant: "ts-scope-a", User: "alice", Agent: "agent", Session: "s1"}
	other := memory.Identity{Tenant: "ts-scope-b", User: "mallory", Agent: "agent", Session: "s1"}
	q := tenantQuery(mine.Tenant)
	before := checkFloodUnmoved(r, e, d, ts, q, mine, other, "sa", "sb", "another tenant")
	mk := func(id string, text string, age int) memory.Record {
		return memory.Record{ID: id, Kind: memory.KindFact, Identity: mine, Content: text, Created: t0.Add(-time.Duration(age) * time.Second)}
	}

	e.put(r, d, "more of the searcher's facts", e.agentRecords(d, []memory.Record{
		mk("sa-4", "late late parcel", 1),
		mk("sa-5", "tea again", 2),
	}))
	got, err := ts.SearchText(ctx, q, "parcel late", 10)
	mustNoErr(r, "SearchText after the searcher wrote", err)
	if len(got) == 0 || got[0].Record.ID != "sa-4" {
		r.Errorf("SearchText after a new write = %s, want sa-4 first", matchIDs(got))
	}
	if len(got) > 1 && len(before) > 0 && got[1].Record.ID == before[0].Record.ID && got[1].Score == before[0].Score {
		r.Errorf("a new record in the searcher's own scope left %s's score at %v: the statistics do not follow the scope's records", before[0].Record.ID, before[0].Score)
	}

	e.put(r, d, "a replacement", e.agentRecords(d, []memory.Record{mk("sa-4", "green tea", 1)}))
	dq := q
	dq.IDs = []string{"sa-2"}
	_, err = d.Delete(ctx, dq)
	mustNoErr(r, "Delete of sa-2", err)
	got, err = ts.SearchText(ctx, q, "parcel late", 10)
	mustNoErr(r, "SearchText after a replacement and a deletion", err)
	if ids := textIDs(got); ids != "sa-1" {
		r.Errorf("SearchText after sa-4 was replaced by a text without the words and sa-2 deleted = %s, want sa-1", matchIDs(got))
	}
}

// checkTextUserScope checks, for an approximate driver, that the
// statistics of a search at user level leave out the records of another
// user of the same tenant: that user's writes leave every score exactly
// unchanged. Under ExactTextSearch the exact scores of every filter's
// search show it already.
func checkTextUserScope(r reporter, e *env, d driver.Driver, ts driver.TextSearcher) {
	mine := memory.Identity{Tenant: "ts-scope-c", User: "alice", Agent: "agent", Session: "s1"}
	other := memory.Identity{Tenant: "ts-scope-c", User: "bob", Agent: "agent", Session: "s1"}
	q := driver.Query{Filter: mustFilter(r, memory.Posture{}, e.agentID(d, mine), memory.LevelUser)}
	checkFloodUnmoved(r, e, d, ts, q, mine, other, "sc", "sd", "another user of the tenant")
}

// checkFloodUnmoved stores three facts of mine (ids mineIDs-1 to -3, two
// holding "parcel" and "late"), searches q, which matches mine and not
// other, for "parcel late", then has other (whose) write 50 records
// holding those words (ids otherIDs-0 to -49), and checks that the
// search's results and scores did not move: within rounding under
// ExactTextSearch, exactly, writer scores too, under
// ApproximateTextSearch. It returns the first search's matches.
func checkFloodUnmoved(r reporter, e *env, d driver.Driver, ts driver.TextSearcher, q driver.Query, mine, other memory.Identity, mineIDs, otherIDs, whose string) []driver.Match {
	r.Helper()
	ctx := context.Background()
	mk := func(id string, who memory.Identity, text string, age int) memory.Record {
		return memory.Record{ID: id, Kind: memory.KindFact, Identity: who, Content: text, Created: t0.Add(-time.Duration(age) * time.Second)}
	}
	e.put(r, d, "the searcher's facts", e.agentRecords(d, []memory.Record{
		mk(mineIDs+"-1", mine, "my parcel is late again", 5),
		mk(mineIDs+"-2", mine, "where is my parcel", 4),
		mk(mineIDs+"-3", mine, "I like green tea", 3),
	}))
	before, err := ts.SearchText(ctx, q, "parcel late", 10)
	mustNoErr(r, "SearchText before "+whose+" writes", err)
	if want := mineIDs + "-1 " + mineIDs + "-2"; textIDs(before) != want {
		r.Errorf("SearchText(parcel late) = %s, want %s: the tea fact shares no word", matchIDs(before), want)
	}
	var flood []memory.Record
	for i := range 50 {
		flood = append(flood, mk(fmt.Sprintf("%s-%d", otherIDs, i), other, "parcel parcel late", i))
	}
	e.put(r, d, whose+"'s facts", e.agentRecords(d, flood))
	after, err := ts.SearchText(ctx, q, "parcel late", 10)
	mustNoErr(r, "SearchText after "+whose+" writes", err)
	what := "SearchText after " + whose + " wrote 50 records holding the query's words (their statistics must not move the scores)"
	if e.cfg.TextSearch == ExactTextSearch {
		sameTextMatches(r, what, after, before)
	} else {
		identicalMatches(r, what, after, before)
	}
	return before
}

// checkTextErrors checks SearchText's refusals: bad arguments, a text
// without words, a done context and a closed driver.
func checkTextErrors(r reporter, d driver.Driver, ts driver.TextSearcher) {
	ctx := context.Background()
	q := tenantQuery("ts-a")
	for _, c := range []struct {
		name string
		q    driver.Query
		text string
		k    int
		want error
	}{
		{"k of 0", q, "parcel", 0, memory.ErrInvalidArgument},
		{"k above MaxSearchK", q, "parcel", driver.MaxSearchK + 1, memory.ErrInvalidArgument},
		{"invalid UTF-8", q, "parcel \xff", 5, memory.ErrInvalidArgument},
		{"a NUL byte", q, "parcel\x00", 5, memory.ErrInvalidArgument},
		{"a text above MaxSearchTextBytes", q, strings.Repeat("a ", driver.MaxSearchTextBytes), 5, memory.ErrTooLarge},
		{"a query without a tenant", driver.Query{}, "parcel", 5, memory.ErrIncompleteScope},
	} {
		_, err := ts.SearchText(ctx, c.q, c.text, c.k)
		wantErr(r, "SearchText with "+c.name, err, c.want)
	}
	if got, err := ts.SearchText(ctx, q, "... !!! the of", 5); noErr(r, "SearchText of a text without words", err) && len(got) != 0 {
		r.Errorf("SearchText of a text without words returned %s, want nothing", matchIDs(got))
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ts.SearchText(cancelled, q, "parcel", 5); !errors.Is(err, context.Canceled) {
		r.Errorf("SearchText with a cancelled context = %v, want context.Canceled", err)
	}
	mustNoErr(r, "Close", d.Close())
	_, err := ts.SearchText(ctx, q, "parcel", 5)
	wantErr(r, "SearchText on a closed driver", err, memory.ErrClosed)
}

// textIDs returns the ids of ms, space-separated.
func textIDs(ms []driver.Match) string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.Record.ID
	}
	return strings.Join(ids, " ")
}

// searchFilter is one query shape the search checks run: a name and the
// query it makes for a caller.
type searchFilter struct {
	what string
	q    func(id memory.Identity) driver.Query
}

// searchFilters returns the query shapes of the search checks over the
// records all: a tenant, a session, a user's facts, a key, and 40 random
// ids of all.
func searchFilters(r reporter, rnd *rand.Rand, all []memory.Record) []searchFilter {
	return []searchFilter{
		{"tenant", func(id memory.Identity) driver.Query { return tenantQuery(id.Tenant) }},
		{"session", func(id memory.Identity) driver.Query {
			return driver.Query{Filter: mustFilter(r, memory.Posture{}, id, memory.LevelSession)}
		}},
		{"user, facts only", func(id memory.Identity) driver.Query {
			return driver.Query{Filter: mustFilter(r, memory.Posture{}, id, memory.LevelUser), Kinds: []memory.Kind{memory.KindFact}}
		}},
		{"tenant, one key", func(id memory.Identity) driver.Query {
			q := tenantQuery(id.Tenant)
			q.Key = "k1"
			return q
		}},
		{"tenant, 40 ids", func(id memory.Identity) driver.Query {
			q := tenantQuery(id.Tenant)
			for range 40 {
				q.IDs = append(q.IDs, all[rnd.IntN(len(all))].ID)
			}
			return q
		}},
	}
}

// randomRecords returns n records with ids prefix-0000 on, each of a
// random identity (tenants prefix-a and prefix-b, users u0 and u1, sessions
// s1 to s3), kind of kinds, key k0 to k3 and creation time within span
// seconds of t0; fill then sets each one's content and what else the check
// needs, and an eighth expire within two minutes of t0.
func randomRecords(rnd *rand.Rand, n int, prefix string, kinds []memory.Kind, span int, fill func(rec *memory.Record, i int)) []memory.Record {
	tenants := []string{prefix + "-a", prefix + "-b"}
	sessions := []string{"s1", "s2", "s3"}
	all := make([]memory.Record, 0, n)
	for i := range n {
		id := memory.Identity{
			Tenant:  tenants[rnd.IntN(len(tenants))],
			User:    fmt.Sprintf("u%d", rnd.IntN(2)),
			Agent:   "agent",
			Session: sessions[rnd.IntN(len(sessions))],
		}
		rec := memory.Record{
			ID: fmt.Sprintf("%s-%04d", prefix, i), Kind: kinds[rnd.IntN(len(kinds))], Identity: id,
			Key:     fmt.Sprintf("k%d", rnd.IntN(4)),
			Created: t0.Add(time.Duration(rnd.IntN(span)) * time.Second),
		}
		fill(&rec, i)
		if rnd.IntN(8) == 0 {
			rec.Expires = t0.Add(time.Duration(1+rnd.IntN(120)) * time.Second)
		}
		all = append(all, rec)
	}
	return all
}
