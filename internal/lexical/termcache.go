package lexical

import (
	"hash/maphash"
	"strings"
	"sync/atomic"
)

// termCacheSize is how many words the term cache holds: a power of two.
const termCacheSize = 1 << 16

// termCache remembers the terms of recently analyzed words, as eachWord
// cuts them (not yet folded), since folding allocates and the Porter2
// stemmer costs far more than looking a word up (BENCHMARKS.md).
// It is direct-mapped: a word has one slot, chosen by its hash, and a
// newer word taking the slot evicts the older. Slots are read and written
// atomically, so the cache is safe for concurrent use without locks, and
// it never holds more than termCacheSize words of at most MaxWordBytes
// bytes each, whatever the input: a few MiB for English text, at most
// about 20 MiB for hostile input. 1 << 16 slots rather than 1 << 14
// halve the time to analyze a synthetic fact (BENCHMARKS.md). Analysis of a word is a pure function, so the
// cache changes only how fast Analyze is, never what it yields.
var termCache struct {
	seed  maphash.Seed
	slots [termCacheSize]atomic.Pointer[termEntry]
}

type termEntry struct {
	word, term string
	stop       bool // word is a stopword
}

func init() { termCache.seed = maphash.MakeSeed() }

// cachedTerm returns term(w), from the cache when it holds w. The term
// returned never shares memory with w.
func cachedTerm(w string) (string, bool) {
	slot := &termCache.slots[maphash.String(termCache.seed, w)&(termCacheSize-1)]
	if e := slot.Load(); e != nil && e.word == w {
		return e.term, !e.stop
	}
	t, ok := term(w)
	e := &termEntry{word: strings.Clone(w), stop: !ok}
	if t == w {
		e.term = e.word
	} else {
		e.term = strings.Clone(t)
	}
	slot.Store(e)
	return e.term, ok
}
