package tokens

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/pkoukk/tiktoken-go-loader/assets"
	"github.com/tiktoken-go/tokenizer"

	"github.com/agentmem/memory/internal/cputime"
)

// The benchmarks measure this package and the two Go libraries it was
// chosen against, on the same inputs:
//
//	Count:  the LoCoMo dev turns, one CountTokens a turn (MB/s is of the
//	        turns' text), and one short chat turn;
//	Word:   one piece of n bytes (a repeated letter, random letters, a
//	        repeated CJK character, spaces), the worst case of a
//	        quadratic merge;
//	Load:   parsing an encoding's ranks, as the first count in a process
//	        does.
//
//	go test -run '^$' -bench . -benchtime 2s ./internal/tokens/
//
// Besides ns/op, each reports cpu-ns/op: the CPU time of the benchmark's
// thread per op, which on a shared machine leaves out waiting for a core.

// candidate is a counter under measurement.
type candidate struct {
	name  string
	count func(string) int
}

// candidates returns the counters of encoding enc: this package's, and
// the libraries' when all is set. The libraries' set-up makes hundreds of
// megabytes of garbage, so it is collected before any timing starts.
func candidates(b *testing.B, enc string, all bool) []candidate {
	c := mustNew(b, enc)
	if err := c.Load(); err != nil {
		b.Fatal(err)
	}
	cs := []candidate{{"tokens", func(s string) int { n, _ := c.CountTokens(context.Background(), s); return n }}}
	if all {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		pk, err := tiktoken.GetEncoding(enc)
		if err != nil {
			b.Fatal(err)
		}
		tz, err := tokenizer.Get(tokenizer.Encoding(enc))
		if err != nil {
			b.Fatal(err)
		}
		cs = append(cs,
			candidate{"pkoukk", func(s string) int { return len(pk.EncodeOrdinary(s)) }},
			candidate{"tokenizer", func(s string) int { n, _ := tz.Count(s); return n }})
	}
	runtime.GC()
	return cs
}

// chatTurn is a short chat turn, the size of backendtest.BenchRecord's.
const chatTurn = "I finally finished the book you lent me last week, and honestly the ending surprised me. " +
	"Do you want to grab coffee on Saturday and talk about it? I can bring the sequel too, if you haven't read it yet."

func BenchmarkCount(b *testing.B) {
	turns := locomoTurns(b)
	total := 0
	for _, t := range turns {
		total += len(t)
	}
	for _, enc := range Names() {
		for _, c := range candidates(b, enc, true) {
			b.Run("locomo/"+enc+"/"+c.name, func(b *testing.B) {
				b.SetBytes(int64(total))
				cpuLoop(b, func() {
					for _, t := range turns {
						c.count(t)
					}
				})
			})
			b.Run("turn/"+enc+"/"+c.name, func(b *testing.B) {
				b.SetBytes(int64(len(chatTurn)))
				cpuLoop(b, func() { c.count(chatTurn) })
			})
		}
	}
}

func BenchmarkWord(b *testing.B) {
	for _, size := range []int{64 << 10, 1 << 20} {
		for _, kind := range []string{"a", "random", "中", "spaces"} {
			text := benchWord(kind, size)
			for _, enc := range Names() {
				// The libraries only on a in cl100k_base; pkoukk not on
				// 1 MiB, where its quadratic merge takes minutes.
				all := kind == "a" && enc == Cl100kBase
				for _, c := range candidates(b, enc, all) {
					if c.name == "pkoukk" && size > 64<<10 {
						continue
					}
					b.Run(sizeName(size)+"/"+kind+"/"+enc+"/"+c.name, func(b *testing.B) {
						b.SetBytes(int64(size))
						cpuLoop(b, func() { c.count(text) })
					})
				}
			}
		}
	}
}

// benchWord returns size bytes of one piece: a single word of one letter
// repeated, of random letters, of one CJK character repeated, or a run of
// spaces.
func benchWord(kind string, size int) string {
	switch kind {
	case "random":
		r := rng(1)
		b := make([]byte, size)
		for i := range b {
			b[i] = byte('a' + r.intn(26))
		}
		return string(b)
	case "spaces":
		return strings.Repeat(" ", size)
	}
	return strings.Repeat(kind, size/len(kind))
}

func BenchmarkLoad(b *testing.B) {
	for _, enc := range Names() {
		data, err := assets.Assets.ReadFile(encodings[enc].file)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(enc, func(b *testing.B) {
			b.ReportAllocs()
			cpuLoop(b, func() {
				if _, err := parseTiktoken(data); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// cpuLoop runs f b.N times and reports, besides the wall-clock ns/op,
// the CPU time of the benchmark's thread per op (cpu-ns/op), which on a
// shared machine leaves out the time spent waiting for a core.
func cpuLoop(b *testing.B, f func()) {
	cpu := cputime.Thread(func() {
		for b.Loop() {
			f()
		}
	})
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func sizeName(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return itoa(n>>20) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return itoa(n>>10) + "KiB"
	}
	return itoa(n) + "B"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
