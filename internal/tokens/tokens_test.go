package tokens

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/agentmem/memory"
	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// The expected counts are OpenAI's tiktoken's (npm tiktoken 1.0.22).
func TestCountTokensExact(t *testing.T) {
	cases := []struct {
		text          string
		cl100k, o200k int
	}{
		{"", 0, 0},
		{"hello world", 2, 2},
		{"tiktoken is great!", 6, 6},
		{"<|endoftext|>", 7, 7}, // special-token text counts as ordinary text
		{"antidisestablishmentarianism", 6, 6},
		{"2 + 2 = 4", 7, 7}, // digits never merge with the space before them
		{"お誕生日おめでとう", 9, 8},
		{"today\n ", 3, 3},
		{"today\n \n", 2, 2},
		{"x\n  ", 3, 3}, // trailing whitespace holding a line break (see split.go)
		{"I'M HERE'S", 4, 4},
		{"Hey Mel! Good to see you! How have you been?", 13, 13},
		{"Ставка 12345 руб.", 9, 8},
		{"naïve café ÉCOLE", 7, 7},
	}
	var zero Counter
	o200k := mustNew(t, O200kBase)
	for _, tc := range cases {
		if got, err := zero.CountTokens(context.Background(), tc.text); err != nil || got != tc.cl100k {
			t.Errorf("cl100k_base %q: got %d, %v; want %d", tc.text, got, err, tc.cl100k)
		}
		if got, err := o200k.CountTokens(context.Background(), tc.text); err != nil || got != tc.o200k {
			t.Errorf("o200k_base %q: got %d, %v; want %d", tc.text, got, err, tc.o200k)
		}
	}
}

func TestNew(t *testing.T) {
	for _, name := range []string{Cl100kBase, O200kBase} {
		c, err := New(name)
		if err != nil || c.Name() != name {
			t.Errorf("New(%q) = %v, %v", name, c.Name(), err)
		}
	}
	if got := (Counter{}).Name(); got != Cl100kBase {
		t.Errorf("the zero Counter counts %s", got)
	}
	for _, name := range []string{"", "o200k", "CL100K_BASE", "p50k_base", "gpt-4o"} {
		if _, err := New(name); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("New(%q): %v, want an ErrInvalidArgument", name, err)
		}
	}
	if err := Load(); err != nil {
		t.Error(err)
	}
	if err := Load(Cl100kBase, O200kBase); err != nil {
		t.Error(err)
	}
	if err := Load("nope"); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("Load(nope): %v", err)
	}
}

// The embedded rank files must be the ones OpenAI publishes: tiktoken
// checks these SHA-256 hashes when it downloads them.
func TestEmbeddedRanksAreOpenAIs(t *testing.T) {
	want := map[string]string{
		Cl100kBase: "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
		O200kBase:  "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
	}
	for name, hash := range want {
		data, err := assets.Assets.ReadFile(encodings[name].file)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != hash {
			t.Errorf("%s: SHA-256 %s, want %s", name, got, hash)
		}
		v, err := encodings[name].load()
		if err != nil {
			t.Fatal(err)
		}
		wantSize := map[string]int{Cl100kBase: 100256, O200kBase: 199998}[name]
		if v.size() != wantSize {
			t.Errorf("%s: %d tokens, want %d", name, v.size(), wantSize)
		}
		for r := range uint32(v.size()) {
			if got := v.rank(v.token(r)); got != r {
				t.Fatalf("%s: token %d %q looks up as %d", name, r, v.token(r), got)
			}
		}
	}
}

// split.go follows the original form of cl100k_base's pattern, which
// differs from tiktoken's current form only in splitting trailing
// whitespace after its last line break. That gives the same tokens only
// if no token has a byte other than a line break after a line break.
func TestNoTokenContinuesPastNewline(t *testing.T) {
	v, err := encodings[Cl100kBase].load()
	if err != nil {
		t.Fatal(err)
	}
	for r := range uint32(v.size()) {
		tok := v.token(r)
		if i := strings.LastIndexAny(tok, "\r\n"); i >= 0 && i < len(tok)-1 {
			t.Errorf("token %d %q continues past a line break", r, tok)
		}
	}
}

// Every LoCoMo dev turn, and the whole of each conversation as one text,
// counts as the Go reference counts it, in both encodings.
func TestLocomoExact(t *testing.T) {
	turns := locomoTurns(t)
	whole := strings.Join(turns, "\n")
	bad := 0
	for _, name := range Names() {
		c := mustNew(t, name)
		for _, text := range append(turns, whole) {
			if !knownToGo(text) {
				continue
			}
			got, err := c.CountTokens(context.Background(), text)
			if want := refCount(t, name, text); err != nil || got != want {
				if bad++; bad <= 10 {
					t.Errorf("%s %q: got %d, %v; reference %d", name, clip(text), got, err, want)
				}
			}
		}
	}
	t.Logf("%d turns, %d bytes, in both encodings", len(turns), len(whole))
}

// Random Unicode texts, longer than the golden ones, count as the Go
// reference counts them.
func TestRandomExact(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	checked := 0
	for _, c := range randomCases(3, n, 200) {
		if !knownToGo(c.text) {
			continue
		}
		checked++
		for _, name := range Names() {
			got, err := mustNew(t, name).CountTokens(context.Background(), c.text)
			if want := refCount(t, name, c.text); err != nil || got != want {
				t.Errorf("%s %s %q: got %d, %v; reference %d", name, c.name, clip(c.text), got, err, want)
			}
		}
	}
	if checked < n/4 {
		t.Errorf("only %d of %d random texts were comparable", checked, n)
	}
}

// rescanMerge is tiktoken's merge transcribed as plainly as possible:
// rescan all the parts for the lowest-ranked join after every join. It is
// the oracle for mergeSmall and mergeLong on pieces too long for the Go
// reference.
func rescanMerge(v *vocab, piece string) int {
	starts := make([]int, len(piece)+1)
	for i := range starts {
		starts[i] = i
	}
	for {
		best, at := noRank, -1
		for k := 0; k+2 < len(starts); k++ {
			if r := v.rank(piece[starts[k]:starts[k+2]]); r < best {
				best, at = r, k
			}
		}
		if at < 0 {
			return len(starts) - 1
		}
		starts = append(starts[:at+1], starts[at+2:]...)
	}
}

// The merges agree with the plain rescan on long adversarial pieces and
// random words, at every length around smallPiece and far beyond it.
func TestMergeMatchesRescan(t *testing.T) {
	r := rng(7)
	var pieces []string
	for _, c := range adversarialCases(900) {
		pieces = append(pieces, c.text)
	}
	letters := []string{"a", "b", "e", "t", "ab", "é", "ж", "中", " ", "\n", "1", "!", "😀"}
	for range 200 {
		var b strings.Builder
		for n := r.intn(3 * smallPiece); b.Len() < n; {
			b.WriteString(letters[r.intn(len(letters))])
		}
		pieces = append(pieces, b.String())
	}
	for _, name := range Names() {
		v, err := encodings[name].load()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pieces {
			if p == "" {
				continue
			}
			want := rescanMerge(v, p)
			if len(p) <= smallPiece {
				if got := v.mergeSmall(p); got != want {
					t.Errorf("%s mergeSmall %q: %d, rescan %d", name, clip(p), got, want)
				}
			}
			if got, err := v.mergeLong(p, &work{}); err != nil || got != want {
				t.Errorf("%s mergeLong %q: %d, %v, rescan %d", name, clip(p), got, err, want)
			}
		}
	}
}

// Invalid UTF-8 is counted deterministically without failing, each
// invalid byte as one code point of punctuation.
func TestInvalidUTF8(t *testing.T) {
	for _, name := range Names() {
		c := mustNew(t, name)
		for _, text := range []string{"\xff", "a\xffb", "\xc3", "é\x80\x80\x80 x", strings.Repeat("\xe4\xb8", 5000), "\xed\xa0\x80"} {
			n, err := c.CountTokens(context.Background(), text)
			m, _ := c.CountTokens(context.Background(), text)
			if err != nil || n < 1 || n > len(text) || n != m {
				t.Errorf("%s %q: %d, %v then %d", name, clip(text), n, err, m)
			}
		}
	}
}

// Many goroutines count at once, through both encodings and the scratch
// space of long pieces, and get the counts of a lone count.
func TestCountTokensConcurrent(t *testing.T) {
	texts := []string{"hello world", strings.Repeat("a", 5000), strings.Repeat("Я", 3000) + " and\n\n more", chatTurn}
	for _, c := range randomCases(11, 20, 300) {
		texts = append(texts, c.text)
	}
	want := map[string][]int{}
	for _, name := range Names() {
		for _, text := range texts {
			n, err := mustNew(t, name).CountTokens(context.Background(), text)
			if err != nil {
				t.Fatal(err)
			}
			want[name] = append(want[name], n)
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			name := Names()[g%2]
			c := mustNew(t, name)
			for round := range 20 {
				i := (g + round) % len(texts)
				if got, err := c.CountTokens(context.Background(), texts[i]); err != nil || got != want[name][i] {
					t.Errorf("%s text %d: got %d, %v; want %d", name, i, got, err, want[name][i])
					return
				}
			}
		})
	}
	wg.Wait()
}

// A count of an ended context returns its error unchanged, before work.
func TestCountTokensEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Counter{}).CountTokens(ctx, "hello"); err != context.Canceled {
		t.Errorf("got %v", err)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 0)
	defer dcancel()
	<-dctx.Done()
	if _, err := (Counter{}).CountTokens(dctx, "hello"); err != context.DeadlineExceeded {
		t.Errorf("got %v", err)
	}
}

// A context that ends mid-count ends the count at the next look, and the
// looks are never far apart: at most pollEvery bytes split plus one
// piece, or joinsPerPoll joins. That bounds the work a count does after
// its context ends, whatever the input.
func TestCountTokensStopsPromptly(t *testing.T) {
	mib := 1 << 20
	inputs := map[string]string{
		"one long word": strings.Repeat("a", mib),
		"long spaces":   strings.Repeat(" ", mib) + "x",
		"many pieces":   strings.Repeat("Hey Mel! Good to see you. ", mib/26),
	}
	for _, name := range Names() {
		e := encodings[name]
		v, err := e.load()
		if err != nil {
			t.Fatal(err)
		}
		for kind, text := range inputs {
			longest := 0
			for i := 0; i < len(text); {
				j := e.next(text, i)
				longest = max(longest, j-i)
				i = j
			}
			bound := max(pollEvery+longest, joinsPerPoll)
			// An uninterrupted count: looks spread through all the work.
			var at []int
			w := &work{testPoll: func(units int) error { at = append(at, units); return nil }}
			if _, err := count(v, e.next, text, w); err != nil {
				t.Fatal(err)
			}
			at = append(at, w.n)
			for i := 1; i < len(at); i++ {
				if gap := at[i] - at[i-1]; gap > bound {
					t.Errorf("%s %s: %d units between looks at the context, over %d", name, kind, gap, bound)
				}
			}
			if len(at) < w.n/bound {
				t.Errorf("%s %s: %d looks for %d units", name, kind, len(at), w.n)
			}
			// Ending at the third look: no work after it.
			looks, stopAt := 0, 0
			w = &work{testPoll: func(units int) error {
				if looks++; looks == 3 {
					stopAt = units
					return context.Canceled
				}
				if looks > 3 {
					t.Errorf("%s %s: looked again after the context ended", name, kind)
				}
				return nil
			}}
			if _, err := count(v, e.next, text, w); err != context.Canceled {
				t.Errorf("%s %s: got %v, want context.Canceled", name, kind, err)
			}
			if w.n != stopAt || stopAt > 3*bound {
				t.Errorf("%s %s: stopped after %d units (the context ended at %d, bound %d)", name, kind, w.n, stopAt, 3*bound)
			}
		}
	}
}

// FuzzCount checks that any input counts without failing, in both
// encodings, and that valid UTF-8 counts as the Go reference counts it:
//
//	go test -fuzz=FuzzCount -fuzztime=10s ./internal/tokens/
func FuzzCount(f *testing.F) {
	for _, s := range []string{"hello world", "I'M HERE'S", "x\n  ", "today\n \n", "a\u0301ABC d", " \n \n \n", "'ſa", "ǅ", "1234567", "!\n/\n//", "\xff\xfe"} {
		f.Add(s)
	}
	for _, c := range adversarialCases(5) {
		f.Add(c.text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, name := range Names() {
			got, err := mustNew(t, name).CountTokens(context.Background(), text)
			if err != nil || got < 0 || got > len(text) || (text != "" && got == 0) {
				t.Fatalf("%s %q: %d, %v", name, text, got, err)
			}
			if !utf8.ValidString(text) || !knownToGo(text) || len(text) > 4096 {
				continue
			}
			if want := refCount(t, name, text); got != want {
				t.Fatalf("%s %q: got %d; reference %d", name, text, got, want)
			}
		}
	})
}

// appendBase64 decodes every token of the rank files as encoding/base64
// does, and refuses what its strict decoder refuses.
func TestAppendBase64(t *testing.T) {
	for _, name := range Names() {
		data, err := assets.Assets.ReadFile(encodings[name].file)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			tok, _, _ := strings.Cut(line, " ")
			want, _ := base64.StdEncoding.DecodeString(tok)
			if got, ok := appendBase64(nil, []byte(tok)); !ok || string(got) != string(want) {
				t.Fatalf("%q: %q, %v; want %q", tok, got, ok, want)
			}
		}
	}
	for _, bad := range []string{"a", "ab=", "a===", "ab!=", "YQ", "YR==", "YWF=", "YW=h", "=YWE"} {
		_, err := base64.StdEncoding.Strict().DecodeString(bad)
		if _, ok := appendBase64(nil, []byte(bad)); ok || err == nil {
			t.Errorf("%q: decoded (stdlib error %v)", bad, err)
		}
	}
}
