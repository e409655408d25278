package tokens

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
)

// goldenFile holds the counts OpenAI's tiktoken gives for goldenCases, as
// its official npm build (the tiktoken package, a WebAssembly build of
// tiktoken's Rust core) computed them; golden_gen_test.go writes it.
const goldenFile = "testdata/golden.json"

type golden struct {
	Reference string       `json:"reference"`
	Cases     []goldenCase `json:"cases"`
}

type goldenCase struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"` // of the generated text, to catch a changed generator
	Cl100k int    `json:"cl100k_base"`
	O200k  int    `json:"o200k_base"`
}

// goldenCases are the generated inputs with reference counts: random
// Unicode, and the adversarial runs at lengths tiktoken's own quadratic
// merge can still count.
func goldenCases() []genCase {
	var cs []genCase
	cs = append(cs, randomCases(1, 3000, 24)...)
	cs = append(cs, randomCases(2, 500, 300)...)
	cs = append(cs, adversarialCases(7)...)
	cs = append(cs, adversarialCases(100)...)
	cs = append(cs, adversarialCases(3000)...)
	return cs
}

func textHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// TestGolden compares both encodings with tiktoken's counts on the
// generated inputs.
func TestGolden(t *testing.T) {
	data, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	cases := goldenCases()
	if len(cases) != len(g.Cases) {
		t.Fatalf("%d generated cases, %d in %s: regenerate it (see golden_gen_test.go)", len(cases), len(g.Cases), goldenFile)
	}
	cl, o := mustNew(t, Cl100kBase), mustNew(t, O200kBase)
	bad := 0
	for i, c := range cases {
		want := g.Cases[i]
		if c.name != want.Name || textHash(c.text) != want.SHA256 {
			t.Fatalf("case %d is %q (%s), %s has %q (%s): regenerate it", i, c.name, textHash(c.text), goldenFile, want.Name, want.SHA256)
		}
		for _, x := range []struct {
			c    Counter
			want int
		}{{cl, want.Cl100k}, {o, want.O200k}} {
			got, err := x.c.CountTokens(context.Background(), c.text)
			if err != nil || got != x.want {
				bad++
				if bad <= 20 {
					t.Errorf("%s %s %q: got %d, %v; tiktoken %d", x.c.Name(), c.name, clip(c.text), got, err, x.want)
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d counts differ from tiktoken's", bad, 2*len(cases))
	}
}

func mustNew(t testing.TB, name string) Counter {
	t.Helper()
	c, err := New(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// clip shortens s for a message.
func clip(s string) string {
	if len(s) <= 80 {
		return s
	}
	return s[:60] + "…" + s[len(s)-16:]
}
