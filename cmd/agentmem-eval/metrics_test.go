package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestTally(t *testing.T) {
	var tl Tally
	for _, rank := range []int{1, 2, 5, 6, 10, 11, 20, 21, 0} {
		tl.Add(rank)
	}
	if tl.N != 9 {
		t.Fatalf("N = %d, want 9", tl.N)
	}
	// Hits at 1, 5, 10, 20: {1}, {1,2,5}, {1,2,5,6,10}, {..., 11, 20}.
	if tl.Hits != [4]int{1, 3, 5, 7} {
		t.Errorf("hits %v, want [1 3 5 7]", tl.Hits)
	}
	wantRR := 1 + 1.0/2 + 1.0/5 + 1.0/6 + 1.0/10 + 1.0/11 + 1.0/20
	if math.Abs(tl.RR-wantRR) > 1e-12 || math.Abs(tl.MRR()-wantRR/9) > 1e-12 {
		t.Errorf("RR %v MRR %v, want %v and %v", tl.RR, tl.MRR(), wantRR, wantRR/9)
	}
	if got := tl.Hit(2); got != 5.0/9 {
		t.Errorf("hit@10 = %v, want 5/9", got)
	}
	var empty Tally
	if empty.Hit(0) != 0 || empty.MRR() != 0 {
		t.Error("an empty tally does not score 0")
	}
	var m Tally
	m.Merge(tl)
	m.Merge(tl)
	if m.N != 18 || m.Hits != [4]int{2, 6, 10, 14} || m.RR != 2*tl.RR {
		t.Errorf("merged %+v", m)
	}
}

func TestFirstRank(t *testing.T) {
	for _, tc := range []struct {
		dias, evidence []string
		want           int
	}{
		{[]string{"a", "b", "c"}, []string{"b"}, 2},
		{[]string{"a", "b", "c"}, []string{"c", "a"}, 1},
		{[]string{"a", "b"}, []string{"z"}, 0},
		{nil, []string{"a"}, 0},
	} {
		if got := FirstRank(tc.dias, tc.evidence); got != tc.want {
			t.Errorf("FirstRank(%v, %v) = %d, want %d", tc.dias, tc.evidence, got, tc.want)
		}
	}
}

func TestReportWrite(t *testing.T) {
	r := &Report{Skipped: map[string]int{skipNoEvidence: 2}, Conversations: 1, Turns: 10, Questions: 6}
	r.ByCategory[1].Add(1)
	r.ByCategory[2].Add(7)
	r.ByCategory[5].Add(1)
	r.ByCategory[5].Add(0)
	r.Latencies = []time.Duration{2 * time.Millisecond, time.Millisecond}
	var b strings.Builder
	if err := r.Write(&b, "heading"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if last := lines[len(lines)-1]; last != "overall hit@1=0.500 hit@5=0.500 hit@10=1.000 hit@20=1.000 mrr=0.571" {
		t.Errorf("last line %q", last)
	}
	for _, want := range []string{
		"heading\n",
		"1 conversations, 10 turns, 6 questions (4 scored, 2 skipped)\n",
		"  skipped, no evidence: 2\n",
		"category  n  hit@1  hit@5  hit@10  hit@20    mrr\n",
		"       1  1  1.000  1.000   1.000   1.000  1.000\n",
		"       2  1  0.000  0.000   1.000   1.000  0.143\n",
		"       3  0  0.000  0.000   0.000   0.000  0.000\n",
		"     1-4  2  0.500  0.500   1.000   1.000  0.571\n",
		"       5  2  0.500  0.500   0.500   0.500  0.500\n",
		"     1-5  4  0.500  0.500   0.750   0.750  0.536\n",
		"recall latency over 2 recalls: p50=1ms p95=2ms",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if r.Latencies[0] != 2*time.Millisecond {
		t.Error("writing the report reordered its latencies")
	}
}
