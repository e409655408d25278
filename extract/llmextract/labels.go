package llmextract

import (
	"strconv"
	"strings"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
)

// unlabel maps the labels a model's fact refers to back to record ids:
// its sources to turns, its Supersedes to known facts.
func unlabel(f extract.Fact, turns, known []memory.Record) extract.Fact {
	sources := make([]string, len(f.Sources))
	for i, s := range f.Sources {
		sources[i] = resolve(s, 'T', turns)
	}
	f.Sources = sources
	if f.Supersedes != "" {
		f.Supersedes = resolve(f.Supersedes, 'F', known)
	}
	return f
}

// resolve returns the id of the record of recs that ref labels: "T2",
// "t2", "#2" and "2" label the second when prefix is 'T'. Anything else
// is returned as it is, for extract.Reconcile to drop.
func resolve(ref string, prefix byte, recs []memory.Record) string {
	s := strings.TrimPrefix(strings.TrimSpace(ref), "#")
	if s != "" && (s[0] == prefix || s[0] == prefix+'a'-'A') {
		s = s[1:]
	}
	if s == "" || s[0] < '0' || s[0] > '9' {
		return ref
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > len(recs) {
		return ref
	}
	return recs[n-1].ID
}
