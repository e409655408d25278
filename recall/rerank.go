package recall

import (
	"math"
	"time"

	"github.com/agentmem/memory/internal/lexical"
)

// Re-ranking a recall's results, both optional and off by default:
// recency (Options.RecencyHalfLife) and diversity (Options.Diversity).

// decay multiplies each result's score by its recency factor at now,
// (1 − weight) + weight · 2^(−age/halfLife), age being how long before
// now the record was created (a record from the future counts as new).
func decay(out []hit, now time.Time, halfLife time.Duration, weight float64) {
	for i := range out {
		age := max(0, now.Sub(out[i].ref.Created))
		f := (1 - weight) + weight*math.Exp2(-float64(age)/float64(halfLife))
		out[i].score *= f
	}
}

// diversify re-orders the first k of out, best first, by maximal marginal
// relevance among the best pool, whose records are read: each next result is the one of the pool
// left maximising (1 − lambda)·score/best − lambda·sim, sim being its
// greatest similarity to a result chosen before it (the cosine of the two
// contents' term counts) and best the first result's score. The results
// past the pool keep their order after it. It costs time linear in k
// times the pool's content.
func diversify(out []hit, k int, lambda float64) {
	pool := min(len(out), max(4*k, 40))
	if pool < 2 || out[0].score <= 0 {
		return
	}
	vecs := make([]termVector, pool)
	for i := range pool {
		vecs[i] = newTermVector(out[i].rec.Content)
	}
	best := out[0].score
	chosen := make([]hit, 0, pool)
	chosenVecs := make([]termVector, 0, pool)
	sim := make([]float64, pool) // greatest similarity to a chosen result
	taken := make([]bool, pool)
	for len(chosen) < min(k, pool) {
		pick, pickValue := -1, math.Inf(-1)
		for i := range pool {
			if taken[i] {
				continue
			}
			v := (1-lambda)*out[i].score/best - lambda*sim[i]
			if v > pickValue {
				pick, pickValue = i, v
			}
		}
		taken[pick] = true
		chosen = append(chosen, out[pick])
		chosenVecs = append(chosenVecs, vecs[pick])
		for i := range pool {
			if !taken[i] {
				sim[i] = max(sim[i], vecs[i].cosine(vecs[pick]))
			}
		}
	}
	// The pool's rest in their order, after the chosen.
	for i := range pool {
		if !taken[i] {
			chosen = append(chosen, out[i])
		}
	}
	copy(out, chosen)
}

// termVector is a text's term counts (lexical.Analyze) and its norm.
type termVector struct {
	counts map[string]float64
	norm   float64
}

func newTermVector(text string) termVector {
	v := termVector{counts: map[string]float64{}}
	for t := range lexical.Analyze(text) {
		v.counts[t]++
	}
	for _, c := range v.counts {
		v.norm += c * c
	}
	v.norm = math.Sqrt(v.norm)
	return v
}

// cosine returns the cosine similarity of v and o, 0 when either is empty.
func (v termVector) cosine(o termVector) float64 {
	if v.norm == 0 || o.norm == 0 {
		return 0
	}
	a, b := v, o
	if len(b.counts) < len(a.counts) {
		a, b = b, a
	}
	dot := 0.0
	for t, c := range a.counts {
		dot += c * b.counts[t]
	}
	return dot / (v.norm * o.norm)
}
