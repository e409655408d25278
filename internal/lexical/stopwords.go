package lexical

// stopwords are the English words the analyzer drops: the Snowball
// project's English stop list (snowballstem.org, english/stop.txt) —
// pronouns, forms of "be", "have" and "do", articles, conjunctions,
// prepositions, question words and a few adverbs — without its
// contractions, whose pieces are listed instead ("don't" is analysed as
// "don" and "t"; "t", "s", "m", "re", "ve", "ll" and "d" are stopwords).
// Memory is searched with questions in natural language ("when did she
// go?"), whose asking words and pronouns name no topic: on the LoCoMo
// development conversations this list ranks an evidence turn into the top
// 10 for 4–5 points more of the questions than the 33-word list of
// classic search engines (BENCHMARKS.md, "Recall quality").
var stopwords = map[string]bool{
	"a": true, "about": true, "above": true, "after": true, "again": true, "against": true,
	"all": true, "am": true, "an": true, "and": true, "any": true, "are": true, "as": true,
	"at": true, "be": true, "because": true, "been": true, "before": true, "being": true,
	"below": true, "between": true, "both": true, "but": true, "by": true, "cannot": true,
	"could": true, "d": true, "did": true, "do": true, "does": true, "doing": true, "down": true,
	"during": true, "each": true, "few": true, "for": true, "from": true, "further": true,
	"had": true, "has": true, "have": true, "having": true, "he": true, "her": true, "here": true,
	"hers": true, "herself": true, "him": true, "himself": true, "his": true, "how": true,
	"i": true, "if": true, "in": true, "into": true, "is": true, "it": true, "its": true,
	"itself": true, "ll": true, "m": true, "me": true, "more": true, "most": true, "my": true,
	"myself": true, "no": true, "nor": true, "not": true, "of": true, "off": true, "on": true,
	"once": true, "only": true, "or": true, "other": true, "ought": true, "our": true,
	"ours": true, "ourselves": true, "out": true, "over": true, "own": true, "re": true,
	"s": true, "same": true, "she": true, "should": true, "so": true, "some": true, "such": true,
	"t": true, "than": true, "that": true, "the": true, "their": true, "theirs": true,
	"them": true, "themselves": true, "then": true, "there": true, "these": true, "they": true,
	"this": true, "those": true, "through": true, "to": true, "too": true, "under": true,
	"until": true, "up": true, "ve": true, "very": true, "was": true, "we": true, "were": true,
	"what": true, "when": true, "where": true, "which": true, "while": true, "who": true,
	"whom": true, "why": true, "with": true, "would": true, "you": true, "your": true,
	"yours": true, "yourself": true, "yourselves": true,
}

// maxStopword is the length of the longest stopword.
const maxStopword = 10

// IsStopword reports whether the folded word w is one of the English
// stopwords Analyze drops (the Snowball English stop list; see stopwords).
func IsStopword(w string) bool {
	return len(w) <= maxStopword && stopwords[w]
}
