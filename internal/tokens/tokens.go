// Package tokens counts tokens exactly, offline, with OpenAI's
// cl100k_base and o200k_base encodings: the counts are those of OpenAI's
// tiktoken (its encode_ordinary, so special-token text such as
// "<|endoftext|>" counts as ordinary text).
//
// Which encoding fits which models, per tiktoken's model table:
//
//   - cl100k_base: gpt-4 and gpt-4-turbo, gpt-3.5-turbo, and the
//     embedding models text-embedding-ada-002, text-embedding-3-small and
//     text-embedding-3-large. It is the default (the zero Counter).
//   - o200k_base: gpt-4o and gpt-4o-mini, gpt-4.1, gpt-4.5, gpt-5, and the
//     reasoning models o1, o3 and o4-mini.
//
// The encodings' ranks are the files OpenAI publishes, embedded in the
// module github.com/pkoukk/tiktoken-go-loader, so nothing is downloaded at
// run time; each encoding is parsed once per process, on first use (or
// by Load). The pre-tokenizer and the byte-pair merge are this package's
// own: a scanner per encoding that splits text exactly as the encoding's
// pattern does, and a merge that is O(n log n) in the length of a piece,
// so no input, however hostile, costs more than O(n log n). The split
// classes letters, numbers, marks and whitespace by Unicode 16.0.0, as
// tiktoken's regular-expression engine does (Go's unicode package is
// older); the tests check the counts against tiktoken's own (its npm
// build, tiktoken 1.0.22) and against github.com/pkoukk/tiktoken-go.
//
// Counting expects valid UTF-8 of bounded size: callers check both before
// counting (backend.Store refuses records over memory.MaxContentBytes or
// with invalid UTF-8). Invalid UTF-8 is still counted, deterministically
// and in the same time bound, each invalid byte splitting as U+FFFD does,
// but tiktoken cannot take such text, so there is no reference count for it.
package tokens

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/agentmem/memory"
	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// The names of the encodings a Counter can use.
const (
	Cl100kBase = "cl100k_base"
	O200kBase  = "o200k_base"
)

// encoding is one encoding: its split scanner and its ranks, loaded once.
type encoding struct {
	name  string
	file  string // in the loader module's assets
	next  func(s string, i int) int
	once  sync.Once
	vocab *vocab
	err   error
}

var encodings = map[string]*encoding{
	Cl100kBase: {name: Cl100kBase, file: "cl100k_base.tiktoken", next: cl100kNext},
	O200kBase:  {name: O200kBase, file: "o200k_base.tiktoken", next: o200kNext},
}

func (e *encoding) load() (*vocab, error) {
	e.once.Do(func() {
		data, err := assets.Assets.ReadFile(e.file)
		if err == nil {
			e.vocab, err = parseTiktoken(data)
		}
		if err != nil {
			e.err = fmt.Errorf("tokens: loading %s: %w", e.name, err)
		}
	})
	return e.vocab, e.err
}

// Counter counts the tokens of one encoding. The zero value counts
// cl100k_base; New gives a Counter for an encoding by name. A Counter is a
// memory.TokenCounter, small enough to copy, and safe for concurrent use.
type Counter struct {
	enc *encoding
}

var _ memory.TokenCounter = Counter{}

// New returns a Counter for the named encoding, Cl100kBase or O200kBase.
// An unknown name is an error of kind memory.ErrInvalidArgument. The
// encoding is loaded on first use; call Load to load it at start-up.
func New(name string) (Counter, error) {
	e, ok := encodings[name]
	if !ok {
		return Counter{}, memory.Errorf(memory.ErrInvalidArgument,
			"unknown token encoding %q (known: %v)", name, Names())
	}
	return Counter{enc: e}, nil
}

// Names returns the names of the encodings New accepts, sorted.
func Names() []string {
	names := make([]string, 0, len(encodings))
	for n := range encodings {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (c Counter) encoding() *encoding {
	if c.enc == nil {
		return encodings[Cl100kBase]
	}
	return c.enc
}

// Name returns the name of the encoding c counts.
func (c Counter) Name() string { return c.encoding().name }

// Load loads c's encoding now rather than on first use and reports any
// error, so that a program can fail at start-up instead of mid-turn.
func (c Counter) Load() error {
	_, err := c.encoding().load()
	return err
}

// Load loads the named encodings (cl100k_base when none is named) now
// rather than on first use.
func Load(names ...string) error {
	if len(names) == 0 {
		names = []string{Cl100kBase}
	}
	for _, n := range names {
		c, err := New(n)
		if err != nil {
			return err
		}
		if err := c.Load(); err != nil {
			return err
		}
	}
	return nil
}

// CountTokens returns the number of tokens in text. It returns ctx's
// error, unchanged, when ctx has ended before the count is done: a count
// looks at ctx every 16 KiB of text it splits and, inside the merge of a
// long piece, every 16,384 joins, so it stops within that much work once
// ctx ends (plus the split of the piece at hand, which is linear and at
// most the text). It returns an error if the embedded encoding cannot
// load, which is a build defect that Load reports at start-up.
func (c Counter) CountTokens(ctx context.Context, text string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if text == "" {
		return 0, nil
	}
	e := c.encoding()
	v, err := e.load()
	if err != nil {
		return 0, err
	}
	w := work{ctx: ctx, done: ctx.Done()}
	return count(v, e.next, text, &w)
}

// count splits text with next and merges each piece. Work is charged as
// pieces are split, and looked at before a piece is merged, so a count
// that ends early never starts merging a long piece it will not finish.
func count(v *vocab, next func(string, int) int, text string, w *work) (int, error) {
	total, since := 0, 0
	for i := 0; i < len(text); {
		j := next(text, i)
		if since += j - i; since >= pollEvery {
			if err := w.add(since); err != nil {
				return 0, err
			}
			since = 0
		}
		n, err := v.countPiece(text[i:j], w)
		if err != nil {
			return 0, err
		}
		total += n
		i = j
	}
	w.n += since
	return total, nil
}

// pollEvery is how many bytes a count splits between looks at its
// context; a long piece's merge also looks every joinsPerPoll joins.
const pollEvery = 1 << 14

// work tallies a count's work (bytes split and joins considered) and
// looks at its context as it grows.
type work struct {
	ctx  context.Context
	done <-chan struct{} // nil: ctx can never end
	n    int             // units done so far
	// testPoll, when set, replaces the look at ctx (for tests that end a
	// count at a chosen point).
	testPoll func(units int) error
}

// add records n units of work and returns ctx's error if it has ended.
func (w *work) add(n int) error {
	w.n += n
	if w.testPoll != nil {
		return w.testPoll(w.n)
	}
	if w.done == nil {
		return nil
	}
	select {
	case <-w.done:
		return w.ctx.Err()
	default:
		return nil
	}
}
