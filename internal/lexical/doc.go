// Package lexical is the library's one text-search engine: every text
// search (vector memory's vector-search, the drivers' fact search) ranks
// with it, so they all compute the same thing.
//
// What is computed. Text is analyzed into terms (Analyze): split into
// words, runs of Unicode letters and digits cut to MaxWordBytes; each
// word case-folded; the Snowball project's English stopwords (IsStopword) dropped; every
// other word stemmed with the Porter2 English stemmer (Stem). A query is
// its distinct terms (NewQuery). A document is scored by Okapi BM25
// (Scorer): for each query term it holds, the term's IDF (Lucene's
// non-negative ln(1 + (N − df + 0.5)/(df + 0.5))) times its frequency
// saturated by k1 and normalised by the document's length relative to
// the average under b (Params, by default k1 = 1.2, b = 0.75), summed
// over the query's terms in a fixed order. Ties are broken by an order
// the caller gives (ByScore; the library's is newest first, then id).
//
// How. An Index is an incremental inverted index keyed by the caller's
// references. A search runs over a set of Index partitions (Search), with
// the statistics of exactly those partitions added up, so a caller that
// keeps one partition per writer and searches only the ones a reader may
// see gets scores no text outside the reader's scope can influence; a
// keep filter then removes candidates before the best k are chosen, and
// tags the caller gave documents (Index.AddTagged, Query.Tags, Tagger)
// remove them without reading the caller's records. The partitions of one
// caller share a Corpus, their term dictionary, so a search over a
// thousand of them (a user's sessions) looks each term up once; the
// corpus packs its small partitions' short lists into one array from
// time to time (Corpus.Pack), so that search reads consecutive memory.
// SearchGroups' hits also carry their partition's text scored as one
// document, among the partitions searched (a writer's, a session's,
// score as a whole: Hit.Group).
// Query.Count with Stats and a Scorer scores texts without an index, and
// Rank is the brute-force reference every way of searching (and every
// driver's text search, in the conformance suite) must agree with, hit
// for hit and score for score.
//
// Every function costs time linear in its input, however hostile: one
// huge word, a word repeated a million times.
package lexical
