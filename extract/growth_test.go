package extract_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/internal/cputime"
)

// growth returns how many times longer big takes than small: the least
// thread CPU time of three runs each, the two sizes interleaved over up
// to eight attempts (stopping once the ratio is within limit), so that a
// neighbouring test slowing one attempt does not decide the result, while
// a real super-linear cost, in every attempt, cannot hide. The collector
// is off during the runs and run before each, so one input does not pay
// for another's garbage.
func growth(small, big func(), limit float64) (ratio float64, ts, tb time.Duration) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	timeOf := func(f func()) time.Duration {
		best := time.Duration(1<<63 - 1)
		for range 3 {
			runtime.GC()
			best = min(best, cputime.Thread(f))
		}
		return best
	}
	timeOf(small) // warm up
	ts, tb = time.Duration(1<<63-1), time.Duration(1<<63-1)
	for attempt := range 8 {
		ts, tb = min(ts, timeOf(small)), min(tb, timeOf(big))
		if float64(tb) <= limit*float64(ts) {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 50 * time.Millisecond)
	}
	return float64(tb) / float64(max(ts, time.Microsecond)), ts, tb
}

// rep returns s repeated to about n bytes.
func rep(s string, n int) string { return strings.Repeat(s, max(1, n/len(s))) }

// numbered returns about n bytes of format filled with 0, 1, 2, ...
func numbered(format string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, format, i)
	}
	return b.String()
}

// growthCases are the inputs most likely to cost more than linear time,
// each a function from a size in bytes to the work on an input of that
// size.
func growthCases(t *testing.T) map[string]func(n int) func() {
	parse := func(gen func(n int) string) func(int) func() {
		return func(n int) func() {
			reply := gen(n)
			return func() { _, _ = extract.ParseFacts(reply) }
		}
	}
	digest := func(gen func(n int) string) func(int) func() {
		return func(n int) func() {
			reply := gen(n)
			return func() { _, _ = extract.ParseDigest(reply, 4096) }
		}
	}
	rules := func(gen func(n int) []memory.Record, previous func(n int) string) func(int) func() {
		return func(n int) func() {
			turns := gen(n)
			prev := ""
			if previous != nil {
				prev = previous(n)
			}
			return func() {
				if _, _, err := (extract.Rules{}).Extract(context.Background(), turns, nil); err != nil {
					t.Fatal(err)
				}
				if _, _, err := (extract.Rules{}).Summarize(context.Background(), prev, turns); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	oneTurn := func(gen func(n int) string) func(int) []memory.Record {
		return func(n int) []memory.Record { return conversation(user(gen(n))) }
	}
	fact := `{"text":"The user likes green tea.","sources":["T1","T2"]},`
	return map[string]func(n int) func(){
		"open brackets":        parse(func(n int) string { return rep("[", n) }),
		"open braces":          parse(func(n int) string { return rep("{", n) }),
		"closers":              parse(func(n int) string { return rep("]}", n) }),
		"brackets in prose":    parse(func(n int) string { return rep("[x] ", n) }),
		"truncated long list":  parse(func(n int) string { return `{"facts":[` + rep(fact, n) }),
		"long list":            parse(func(n int) string { return `{"facts":[` + rep(fact, n) + `{"text":"end"}]}` }),
		"unterminated string":  parse(func(n int) string { return `[{"text":"` + rep("a", n) }),
		"escapes":              parse(func(n int) string { return `["` + rep(`\"`, n) + `"]` }),
		"commas":               parse(func(n int) string { return "[" + rep(",", n) + `"a b"]` }),
		"white space":          parse(func(n int) string { return "[" + rep(" \n", n) + `"a b"]` }),
		"typographic quotes":   parse(func(n int) string { return "[" + rep("“", n) }),
		"fences":               parse(func(n int) string { return rep("```", n) }),
		"long number":          parse(func(n int) string { return "[" + rep("1", n) + "]" }),
		"nested lists":         parse(func(n int) string { return "[" + rep("[[[]]],", n) + "]" }),
		"one key many times":   parse(func(n int) string { return "{" + rep(`"k":1,`, n) + "}" }),
		"distinct keys":        parse(func(n int) string { return "{" + numbered(`"k%d":1,`, n) + "}" }),
		"many sources":         parse(func(n int) string { return `[{"text":"a b","sources":[` + rep(`"T1",`, n) + `"T2"]}]` }),
		"sources in a string":  parse(func(n int) string { return `[{"text":"a b","sources":"` + rep("T1,", n) + `"}]` }),
		"digest lines":         digest(func(n int) string { return rep("a b.\n", n) }),
		"digest blank lines":   digest(func(n int) string { return "a" + rep("\n", n) + "b" }),
		"digest long line":     digest(func(n int) string { return rep("word ", n) }),
		"digest fences":        digest(func(n int) string { return rep("```\n", n) }),
		"digest JSON":          digest(func(n int) string { return `{"digest":"` + rep("a b. ", n) + `"}` }),
		"one fact repeated":    rules(oneTurn(func(n int) string { return rep("I like tea. ", n) }), nil),
		"distinct facts":       rules(oneTurn(func(n int) string { return numbered("I like tea number %d. ", n) }), nil),
		"alternating slot":     rules(oneTurn(func(n int) string { return rep("My name is Ann. My name is Bob. ", n) }), nil),
		"one long sentence":    rules(oneTurn(func(n int) string { return rep("word ", n) }), nil),
		"full stops":           rules(oneTurn(func(n int) string { return rep(".", n) }), nil),
		"initials":             rules(oneTurn(func(n int) string { return rep("a.", n) }), nil),
		"lead-ins":             rules(oneTurn(func(n int) string { return rep("so, ", n) }), nil),
		"line breaks":          rules(oneTurn(func(n int) string { return rep("\n", n) }), nil),
		"many turns":           rules(func(n int) []memory.Record { return manyTurns(n / 100) }, nil),
		"long previous digest": rules(oneTurn(func(int) string { return "I moved." }), func(n int) string { return rep("User: I moved. I like it.\n", n) }),
	}
}

// manyTurns returns n short turns of one session.
func manyTurns(n int) []memory.Record {
	said := make([]said, n)
	for i := range said {
		said[i] = user(fmt.Sprintf("I have %d cats. My name is Sam number %d. What about you?", i, i))
	}
	return conversation(said...)
}

// TestGrowth proves by growth, not by a clock limit, that the parsers and
// Rules cost linear time on hostile input: 4× the input may take at most
// 8× the time (10× under the race detector), with a millisecond of slack
// for inputs refused at once; quadratic work takes 16×. Linear work
// measures 3.7× to 4.7× on a quiet machine; the room above that is for a
// loaded one, where the larger input's working set is pushed out of the
// shared caches more than the smaller one's (6.5× seen once on a 2-core
// machine at a load of 7). The race detector's shadow memory grows with
// every allocation, which costs the larger input more again: the cases
// that allocate most (a list of 26,000 sources, a buffer of commas)
// measure 5.9× to 8.3× under it, at a quarter of the input size.
func TestGrowth(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test; -short skips it")
	}
	small, limit := 128<<10, 8.0
	if raceEnabled {
		small, limit = 32<<10, 10.0
	}
	for name, gen := range growthCases(t) {
		t.Run(name, func(t *testing.T) {
			ratio, ts, tb := growth(gen(small), gen(4*small), limit)
			t.Logf("%v for %d bytes, %v for 4×: ×%.2f", ts, small, tb, ratio)
			if float64(tb) > limit*float64(ts)+float64(time.Millisecond) {
				t.Errorf("4× the input took %.1f× the time (%v, then %v)", ratio, ts, tb)
			}
		})
	}
}
