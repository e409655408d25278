package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentmem/memory/internal/latency"
)

// Cutoffs are the k of the Hit@k the command reports. The largest is how
// many records each recall asks for, and the rank cutoff of MRR.
var Cutoffs = [...]int{1, 5, 10, 20}

// Depth is how many records each recall asks for: the largest cutoff.
const Depth = 20

// Tally accumulates the scores of a group of questions.
type Tally struct {
	// N is how many questions were scored.
	N int
	// Hits counts, per cutoff in Cutoffs, the questions with evidence in
	// the top k.
	Hits [len(Cutoffs)]int
	// RR is the sum of the reciprocal ranks of the first evidence hit
	// (0 for a question with none in the top Depth).
	RR float64
}

// Add scores one question whose first evidence turn came at rank (from 1),
// or 0 when none was among the records recalled.
func (t *Tally) Add(rank int) {
	t.N++
	if rank < 1 || rank > Depth {
		return
	}
	for i, k := range Cutoffs {
		if rank <= k {
			t.Hits[i]++
		}
	}
	t.RR += 1 / float64(rank)
}

// Merge adds u's questions to t.
func (t *Tally) Merge(u Tally) {
	t.N += u.N
	for i := range t.Hits {
		t.Hits[i] += u.Hits[i]
	}
	t.RR += u.RR
}

// Hit returns the fraction of questions with evidence in the top
// Cutoffs[i]; 0 when no question was scored.
func (t Tally) Hit(i int) float64 {
	if t.N == 0 {
		return 0
	}
	return float64(t.Hits[i]) / float64(t.N)
}

// MRR returns the mean reciprocal rank; 0 when no question was scored.
func (t Tally) MRR() float64 {
	if t.N == 0 {
		return 0
	}
	return t.RR / float64(t.N)
}

// FirstRank returns the rank (from 1) of the first of dias that is in
// evidence, or 0 when none is.
func FirstRank(dias []string, evidence []string) int {
	for i, d := range dias {
		if slices.Contains(evidence, d) {
			return i + 1
		}
	}
	return 0
}

// Report is the result of one evaluation run.
type Report struct {
	// ByCategory holds the scores of categories 1 to 5 at indexes 1 to 5.
	ByCategory [6]Tally
	// Skipped counts the questions not scored, by reason.
	Skipped map[string]int
	// Conversations, Turns and Questions count what was read: every
	// question, skipped ones included.
	Conversations, Turns, Questions int
	// Latencies are the durations of the recall calls, one per question
	// asked.
	Latencies []time.Duration
	// Ingest is the time spent adding turns, stores opened included.
	Ingest time.Duration
}

// Overall returns the scores of categories 1 to 4 together: what the
// command's summary line reports. Category 5 (adversarial questions, whose
// answers are not in the conversation) is reported apart.
func (r *Report) Overall() Tally {
	var t Tally
	for c := 1; c <= 4; c++ {
		t.Merge(r.ByCategory[c])
	}
	return t
}

// Summary returns the report's last line, such as
// "overall hit@1=0.410 hit@5=0.700 hit@10=0.800 hit@20=0.860 mrr=0.550":
// categories 1 to 4, three decimals.
func (r *Report) Summary() string {
	t := r.Overall()
	var b strings.Builder
	b.WriteString("overall")
	for i, k := range Cutoffs {
		fmt.Fprintf(&b, " hit@%d=%.3f", k, t.Hit(i))
	}
	fmt.Fprintf(&b, " mrr=%.3f", t.MRR())
	return b.String()
}

// Write prints the report: the counts, a table of scores per category,
// the recall latencies, and the summary line last.
func (r *Report) Write(w io.Writer, heading string) error {
	var b strings.Builder
	if heading != "" {
		fmt.Fprintln(&b, heading)
	}
	skipped := 0
	for _, n := range r.Skipped {
		skipped += n
	}
	fmt.Fprintf(&b, "%d conversations, %d turns, %d questions (%d scored, %d skipped)\n",
		r.Conversations, r.Turns, r.Questions, r.Questions-skipped, skipped)
	reasons := make([]string, 0, len(r.Skipped))
	for reason := range r.Skipped {
		reasons = append(reasons, reason)
	}
	slices.Sort(reasons)
	for _, reason := range reasons {
		fmt.Fprintf(&b, "  skipped, %s: %d\n", reason, r.Skipped[reason])
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "category\tn\t")
	for _, k := range Cutoffs {
		fmt.Fprintf(tw, "hit@%d\t", k)
	}
	fmt.Fprint(tw, "mrr\t\n")
	row := func(name string, t Tally) {
		fmt.Fprintf(tw, "%s\t%d\t", name, t.N)
		for i := range Cutoffs {
			fmt.Fprintf(tw, "%.3f\t", t.Hit(i))
		}
		fmt.Fprintf(tw, "%.3f\t\n", t.MRR())
	}
	for c := 1; c <= 4; c++ {
		row(fmt.Sprint(c), r.ByCategory[c])
	}
	row("1-4", r.Overall())
	row("5", r.ByCategory[5])
	all := r.Overall()
	all.Merge(r.ByCategory[5])
	row("1-5", all)
	if err := tw.Flush(); err != nil {
		return err
	}
	lat := r.Latencies
	fmt.Fprintf(&b, "\nrecall latency over %d recalls: p50=%s p95=%s; ingest %s\n",
		len(lat), latency.Percentile(lat, 50).Round(time.Microsecond), latency.Percentile(lat, 95).Round(time.Microsecond), r.Ingest.Round(time.Millisecond))
	b.WriteString(r.Summary() + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}
