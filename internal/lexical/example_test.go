package lexical_test

import (
	"fmt"

	"github.com/agentmem/memory/internal/lexical"
)

// An index of entries keyed by their names, searched for the two best.
func Example() {
	texts := map[string]string{
		"a.txt": "OpenSSL upgrade needed on the payments host",
		"b.txt": "payments latency spike; payments pods restarted",
		"c.txt": "nothing to report",
	}
	x := lexical.NewIndex[string]()
	for name, text := range texts {
		x.Add(name, text)
	}
	q := lexical.NewQuery(lexical.Terms("payments spike"))
	top := lexical.NewTopK(2, func(a, b lexical.Hit[string]) bool {
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.Ref < b.Ref
	})
	x.Score(&q, top, func(string) bool { return true })
	for _, h := range top.Hits() {
		fmt.Println(h.Ref, h.Score, q.Count(texts[h.Ref]))
	}
	// Output:
	// b.txt 3 3
	// a.txt 1 1
}
