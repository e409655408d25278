package qdrant

import (
	"hash/fnv"

	"github.com/agentmem/memory/internal/lexical"
)

// termIndex is a term's dimension in the sparse text vector: its 32-bit
// FNV-1a hash. Two terms may share one (about one pair in a vocabulary
// of 100,000); the text search's filter on the terms themselves keeps a
// record that shares only a hash with the query out of its results.
func termIndex(term string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(term))
	return h.Sum32()
}

// textVector returns the distinct terms of a record's content
// (lexical.Analyze), in the order they first occur, and its sparse text
// vector: for each term's dimension, the term-frequency part of the
// library's BM25 (lexical.Scorer, with its default k1 and b),
//
//	tf · (k1 + 1) / (tf + k1 · (1 − b + b · dl / avgdl))
//
// with avgdl the driver's fixed average length (Options.TextLength), not
// the scope's, which changes with every write while a point's weights are
// fixed when it is written. A query's vector weighs each term by its IDF
// in the searched scope (queryVector), so a point's score is that BM25.
// Content without terms has none and no vector.
func (d *Driver) textVector(content string) (terms []string, indices []uint32, weights []float32) {
	pos := map[string]int{} // a term's place in terms
	var tf []int
	dl := 0
	for t := range lexical.Analyze(content) {
		i, seen := pos[t]
		if !seen {
			i = len(terms)
			pos[t] = i
			terms, tf = append(terms, t), append(tf, 0)
		}
		tf[i]++
		dl++
	}
	if dl == 0 {
		return nil, nil, nil
	}
	k1, b := lexical.DefaultK1, lexical.DefaultB
	norm := k1 * (1 - b + b*float64(dl)/d.textLen)
	at := make(map[uint32]int, len(terms))
	for n, t := range terms {
		f := float64(tf[n])
		w := f * (k1 + 1) / (f + norm)
		i := termIndex(t)
		if j, ok := at[i]; ok { // two terms, one hash: one dimension
			weights[j] += float32(w)
			continue
		}
		at[i] = len(indices)
		indices = append(indices, i)
		weights = append(weights, float32(w))
	}
	return terms, indices, weights
}

// queryVector returns the sparse vector of a query's terms, each weighed
// by idf[i], the IDF of terms[i] in the searched scope; terms that share
// a dimension add up, as they do in textVector.
func queryVector(terms []string, idf []float64) (indices []uint32, weights []float32) {
	at := make(map[uint32]int, len(terms))
	for n, t := range terms {
		i := termIndex(t)
		if j, ok := at[i]; ok {
			weights[j] += float32(idf[n])
			continue
		}
		at[i] = len(indices)
		indices = append(indices, i)
		weights = append(weights, float32(idf[n]))
	}
	return indices, weights
}
