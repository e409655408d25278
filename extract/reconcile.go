package extract

import (
	"slices"

	"github.com/agentmem/memory"
)

// Reconcile makes candidate facts what an Extractor returns for turns and
// known (see Fact), whatever a model made of them:
//
//   - each text is made one line; a fact whose text is then empty or
//     longer than MaxFactBytes is dropped;
//   - a fact with the words of a known fact (compared lower-case, without
//     punctuation) is dropped: it is known already;
//   - facts with equal words become the first of them, with the sources
//     of all and the first Supersedes any of them has;
//   - sources that are not ids of the turns are dropped, and the rest
//     kept once each, in the order of turns; a fact left with no source
//     gets every turn as its sources (it came from this batch, from which
//     turn is not known);
//   - a Supersedes that is not the id of a known fact is cleared.
//
// Facts keep the order of their first appearance; with no turns there are
// none. Reconcile does not modify facts.
func Reconcile(facts []Fact, turns, known []memory.Record) []Fact {
	if len(turns) == 0 {
		return nil
	}
	pos := make(map[string]int, len(turns))
	for i, t := range turns {
		pos[t.ID] = i
	}
	knownIDs := make(map[string]bool, len(known))
	knownKeys := make(map[string]bool, len(known))
	for _, k := range known {
		knownIDs[k.ID] = true
		knownKeys[normKey(k.Content)] = true
	}
	var out []Fact
	sources := [][]int{} // per fact of out: positions of its sources in turns
	index := map[string]int{}
	for _, f := range facts {
		text, ok := textFact(f.Text)
		key := normKey(text)
		if !ok || key == "" || knownKeys[key] {
			continue
		}
		i, seen := index[key]
		if !seen {
			i = len(out)
			index[key] = i
			out = append(out, Fact{Text: text})
			sources = append(sources, nil)
		}
		for _, s := range f.Sources {
			if p, ok := pos[s]; ok {
				sources[i] = append(sources[i], p)
			}
		}
		if out[i].Supersedes == "" && knownIDs[f.Supersedes] {
			out[i].Supersedes = f.Supersedes
		}
	}
	for i := range out {
		ps := sources[i]
		if len(ps) == 0 {
			for _, t := range turns {
				out[i].Sources = append(out[i].Sources, t.ID)
			}
			continue
		}
		slices.Sort(ps)
		for _, p := range slices.Compact(ps) {
			out[i].Sources = append(out[i].Sources, turns[p].ID)
		}
	}
	return out
}
