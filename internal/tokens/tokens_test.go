package tokens

import (
	"context"
	"sync"
	"testing"
)

// The expected counts are cl100k_base's, as OpenAI's tiktoken reports them.
func TestCountTokensExact(t *testing.T) {
	cases := []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"tiktoken is great!", 6},
		{"<|endoftext|>", 7},
		{"antidisestablishmentarianism", 6},
		{"2 + 2 = 4", 7}, // digits never merge with the space before them
		{"お誕生日おめでとう", 9},
	}
	var c Counter
	for _, tc := range cases {
		if got, err := c.CountTokens(context.Background(), tc.text); err != nil || got != tc.want {
			t.Errorf("CountTokens(%q) = %d, %v; want %d", tc.text, got, err, tc.want)
		}
	}
}

func TestCountTokensConcurrent(t *testing.T) {
	var c Counter
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if got, err := c.CountTokens(context.Background(), "hello world"); err != nil || got != 2 {
					t.Errorf("got %d", got)
					return
				}
			}
		}()
	}
	wg.Wait()
}
