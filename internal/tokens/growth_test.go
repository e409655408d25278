package tokens

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory/internal/cputime"
)

// growthCases are the inputs whose cost must grow as O(n log n): single
// long words of several scripts (one piece each, the worst case of a
// quadratic merge), a random word, and long runs of whitespace, digits
// and punctuation.
func growthCases(n int) map[string]string {
	r := rng(5)
	var random strings.Builder
	for random.Len() < n {
		random.WriteByte(byte('a' + r.intn(26)))
	}
	rep := func(s string) string { return strings.Repeat(s, n/len(s)) }
	return map[string]string{
		"a":            rep("a"),
		"ab":           rep("ab"),
		"é":            rep("é"),
		"Я":            rep("Я"),
		"中":            rep("中"),
		"😀":            rep("😀"),
		"A o200k":      rep("A"),
		"random word":  random.String(),
		"random o200k": random.String(),
		"spaces":       rep(" ") + "x",
		"newlines":     rep("\n"),
		"space-nl":     rep(" \n"),
		"digits":       rep("7"),
		"punctuation":  rep("!"),
		"apostrophes":  rep("'s"),
		"marks o200k":  "a" + rep("\u0301"),
		"upper+mark":   rep("A\u0301"),
		"words":        rep("hello "),
		"slash o200k":  "!" + rep("\n/"),
		"mixed script": rep("aЯ中😀1 "),
	}
}

// TestGrowth proves the worst case is O(n log n) by growth, not by a
// clock limit: counting 4× the input may take at most 6.5× the time
// (n log n gives 4.4× from 1 MiB to 4 MiB, and the larger input's
// leaving the CPU caches adds to it: up to 5.1× measured on a calm CI
// host; n^1.5 gives 8×, a quadratic merge 16×), 8× under the race
// detector. Each
// time is the least of several runs, in CPU time of the counting thread.
func TestGrowth(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test; -short skips it")
	}
	small, runs, limit := 1<<20, 3, 6.5
	if raceEnabled {
		// The race detector shadows every byte touched, so the larger
		// input's working set leaves the CPU caches that hold the smaller
		// one's, a constant factor on top of n log n that measured up to
		// 5.2× in CI; a quadratic merge is still 16× and fails 8×.
		small, runs, limit = 128<<10, 3, 8.0
	}
	smallCases, bigCases := growthCases(small), growthCases(4*small)
	for kind := range smallCases {
		enc := Cl100kBase
		if strings.HasSuffix(kind, "o200k") {
			enc = O200kBase
		}
		c := mustNew(t, enc)
		timeOf := func(text string) time.Duration {
			best := time.Duration(1<<63 - 1)
			for range runs {
				best = min(best, cputime.Thread(func() {
					if _, err := c.CountTokens(context.Background(), text); err != nil {
						t.Fatal(err)
					}
				}))
			}
			return best
		}
		timeOf(smallCases[kind]) // warm the scratch space
		// Interleave the two sizes so a change of machine load hits both,
		// and keep each size's least time over the attempts: other tests
		// running beside this one (go test runs packages in parallel)
		// share the caches and the memory bus, so one attempt may be slowed
		// for a while; waiting a little longer between attempts lets that
		// pass. A real quadratic cost cannot hide: it is in every attempt.
		ts, tb := time.Duration(1<<63-1), time.Duration(1<<63-1)
		for attempt := range 8 {
			ts, tb = min(ts, timeOf(smallCases[kind])), min(tb, timeOf(bigCases[kind]))
			if float64(tb) <= limit*float64(ts) {
				break
			}
			time.Sleep(time.Duration(attempt+1) * 50 * time.Millisecond)
		}
		ratio := float64(tb) / float64(max(ts, time.Microsecond))
		t.Logf("%-13s %s: %v for %d bytes, %v for 4×: ×%.2f", kind, enc, ts, len(smallCases[kind]), tb, ratio)
		if ratio > limit {
			t.Errorf("%s %s: 4× the input took %.1f× the time", kind, enc, ratio)
		}
	}
}
