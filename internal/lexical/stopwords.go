package lexical

// stopwords are the English words the analyzer drops: the 33 words of the
// classic English stop list search engines have long shipped as their
// default (articles, conjunctions, prepositions, forms of "be", pronouns
// that carry no topic). The list is kept small on purpose: words such as
// "what", "who" or "when" stay, since a question's asking word can matter
// in a short memory entry.
var stopwords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true,
	"be": true, "but": true, "by": true, "for": true, "if": true, "in": true,
	"into": true, "is": true, "it": true, "no": true, "not": true, "of": true,
	"on": true, "or": true, "such": true, "that": true, "the": true,
	"their": true, "then": true, "there": true, "these": true, "they": true,
	"this": true, "to": true, "was": true, "will": true, "with": true,
}

// IsStopword reports whether the folded word w is one of the English
// stopwords Analyze drops: a, an, and, are, as, at, be, but, by, for, if,
// in, into, is, it, no, not, of, on, or, such, that, the, their, then,
// there, these, they, this, to, was, will, with.
func IsStopword(w string) bool {
	return len(w) <= 5 && stopwords[w]
}
