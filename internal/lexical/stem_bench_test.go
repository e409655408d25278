package lexical

import (
	"testing"

	"github.com/kljensen/snowball/english"
)

var stemWords = []string{"connection", "running", "payments", "latency", "restarted", "generously", "happiness", "crashloop", "memory", "baseline", "anomaly", "upgrade", "the", "vulnerabilities", "database"}

func BenchmarkStemSnowballEnglish(b *testing.B) {
	for b.Loop() {
		for _, w := range stemWords {
			_ = english.Stem(w, true)
		}
	}
}

func BenchmarkAnalyze(b *testing.B) {
	text := "[research/collect] Task: task 1234: payments checkout Login latency | Result: spike anomaly baseline pod restart crashloop memory leak"
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		for range Analyze(text) {
		}
	}
}
