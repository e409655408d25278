package lexical

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// analysisRevision is bumped by hand when analysis changes in a way the
// probe of AnalyzerVersion might not show.
const analysisRevision = 1

// analyzerProbe is text whose analysis AnalyzerVersion fingerprints:
// words every step of Analyze treats (folding of every case, cutting at
// MaxWordBytes, stopwords before and after stemming, the stemmer's
// suffix rules, digits, letters beyond ASCII, separators).
var analyzerProbe = strings.Join([]string{
	"Connection connected CONNECTING connections; running runs ran runner easily happiness",
	"generously agreed agreement feed feeding hopping hoped hoping cats caresses ponies ties",
	"relational conditional rational valenci hesitanci digitizer conformabli radicalli",
	"differentli vileli analogousli vietnamization predication operator feudalism decisiveness",
	"hopefulness callousness formaliti sensitiviti sensibiliti triplicate formative formalize",
	"electriciti electrical hopeful goodness revival allowance inference airliner gyroscopic",
	"adjustable defensible irritant replacement adjustment dependent adoption homologou",
	"communism activate angulariti homologous effective bowdlerize probate rate cease",
	"controll roll skies dying lying tying news innings outings cannings howe proceed exceed succeed",
	"ans don't it's we'll I'm you've they'd Straße ΣΊΣΥΦΟΣ ς σ K k \u212a ǅ ǆ naïve café Ünïcödé",
	"2024 3rd 1st 42nd x86_64 a-b c/d e.f 日本語 العربية",
	strings.Repeat("long", 20) + " " + strings.Repeat("é", 40),
}, " \n\t.,!?")

// AnalyzerVersion names what Analyze does: a fingerprint of the terms it
// yields for a probe text that exercises every step of analysis, of the
// stop list and of a revision number bumped by hand. A caller that keeps
// analysed texts (an encoded Index) tags them with it and uses only those
// of the version the running code has: terms analysed by other code
// would match queries analysed by this code differently.
var AnalyzerVersion = sync.OnceValue(func() string {
	h := fnv.New64a()
	var n [binary.MaxVarintLen64]byte
	write := func(s string) {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
	write(strconv.Itoa(analysisRevision))
	write(strconv.Itoa(MaxWordBytes))
	stops := make([]string, 0, len(stopwords))
	for w := range stopwords {
		stops = append(stops, w)
	}
	slices.Sort(stops)
	for _, w := range stops {
		write(w)
		for t := range Analyze(w) {
			write(t)
		}
	}
	for t := range Analyze(analyzerProbe) {
		write(t)
	}
	return strconv.Itoa(analysisRevision) + "-" + strconv.FormatUint(h.Sum64(), 16)
})
