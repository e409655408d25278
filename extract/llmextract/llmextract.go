package llmextract

import (
	"cmp"
	"context"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
)

// Defaults of Options.
const (
	// DefaultDigestWords is the digest length Summarize asks for when
	// Options.DigestWords is zero.
	DefaultDigestWords = 300
	// MaxDigestWords is the largest Options.DigestWords.
	MaxDigestWords = 10000
	// DefaultMaxDigestBytes is the size a digest is cut to when
	// Options.MaxDigestBytes is zero: room for DefaultDigestWords words
	// of most languages, and for a model that runs a little over.
	DefaultMaxDigestBytes = 8192
)

// Options configure an Extractor. The zero value is the documented
// default: the package's prompts, a 300-word digest cut at 8 KiB, and no
// call options.
type Options struct {
	// FactPrompt is the system prompt of Extract; empty means FactPrompt.
	// A prompt of your own must still ask for the reply extract.ParseFacts
	// reads, and describe the user message as FactPrompt does.
	FactPrompt string
	// DigestPrompt is the system prompt of Summarize; empty means
	// DigestPrompt, with the same proviso.
	DigestPrompt string
	// DigestWords is the longest digest Summarize asks the model for (the
	// request's "max_words"). Zero means DefaultDigestWords; at most
	// MaxDigestWords.
	DigestWords int
	// MaxDigestBytes is what Summarize cuts a longer digest to (see
	// extract.ParseDigest). Zero means DefaultMaxDigestBytes; others must
	// be from extract.MinDigestBytes to memory.MaxContentBytes.
	MaxDigestBytes int
	// CallOptions are passed to every GenerateContent call: the model
	// name, temperature, a JSON mode and so on. Nil passes none, and the
	// provider's defaults apply.
	CallOptions []llms.CallOption
}

// Extractor is an extract.Extractor and an extract.Summarizer over a
// langchaingo llms.Model: each Extract or Summarize call makes exactly
// one GenerateContent call (none when there are no turns), with the
// system prompt and a user message holding the input as JSON, and reads
// the reply with extract.ParseFacts or extract.ParseDigest.
//
// The model sees turns and known facts under short labels (T1, T2, ...
// and F1, F2, ...), which Extract maps back to record ids; its facts then
// go through extract.Reconcile, so every fact has sources among the turns
// and supersedes only a known fact.
//
// Token usage is read from the reply's GenerationInfo, under the first
// of these pairs of keys that holds a count: "PromptTokens" and
// "CompletionTokens" (langchaingo's openai, ollama, googleai and maritaca
// providers), "InputTokens" and "OutputTokens" (anthropic),
// "input_tokens" and "output_tokens" (bedrock, vertex); from the first
// choice that has one, as providers repeat a request's totals in every
// choice. Where a provider reports none (mistral keeps a struct under
// "usage", which is not read), or the call failed, nothing is counted and
// the call is one of Usage.UnreportedCalls: no tokens are estimated. An
// Extractor is safe for concurrent use when its model is, as
// langchaingo's are.
type Extractor struct {
	model llms.Model
	opt   Options
}

var (
	_ extract.Extractor  = (*Extractor)(nil)
	_ extract.Summarizer = (*Extractor)(nil)
)

// New returns an Extractor over model. A nil model, or an option out of
// range, is memory.ErrInvalidArgument.
func New(model llms.Model, opt Options) (*Extractor, error) {
	if model == nil {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "llmextract: no model")
	}
	switch {
	case opt.DigestWords < 0 || opt.DigestWords > MaxDigestWords:
		return nil, memory.Errorf(memory.ErrInvalidArgument, "llmextract: DigestWords is %d; it must be from 0 to %d", opt.DigestWords, MaxDigestWords)
	case opt.MaxDigestBytes != 0 && (opt.MaxDigestBytes < extract.MinDigestBytes || opt.MaxDigestBytes > memory.MaxContentBytes):
		return nil, memory.Errorf(memory.ErrInvalidArgument, "llmextract: MaxDigestBytes is %d; it must be 0 or from %d to %d",
			opt.MaxDigestBytes, extract.MinDigestBytes, memory.MaxContentBytes)
	}
	opt.FactPrompt = cmp.Or(opt.FactPrompt, FactPrompt)
	opt.DigestPrompt = cmp.Or(opt.DigestPrompt, DigestPrompt)
	opt.DigestWords = cmp.Or(opt.DigestWords, DefaultDigestWords)
	opt.MaxDigestBytes = cmp.Or(opt.MaxDigestBytes, DefaultMaxDigestBytes)
	opt.CallOptions = append([]llms.CallOption(nil), opt.CallOptions...)
	return &Extractor{model: model, opt: opt}, nil
}

// Extract asks the model for the facts of turns, given the known facts,
// in one GenerateContent call. The user message is a JSON object:
//
//	{"turns":[{"id":"T1","role":"user","name":"Sam","time":"2024-05-03T10:00:00Z","text":"..."}],
//	 "known_facts":[{"id":"F1","text":"..."}]}
//
// ("name" is the turn's memory.SpeakerKey metadata and "time" its
// creation time in UTC, each left out when it has none). The facts the
// reply gives are mapped back from labels to ids ("T2", "t2" and 2 name
// the second turn; "F1", "f1" and 1 the first known fact) and go through
// extract.Reconcile. Errors are as extract.Extractor documents them;
// Usage counts the call even when it failed.
func (e *Extractor) Extract(ctx context.Context, turns, known []memory.Record) ([]extract.Fact, extract.Usage, error) {
	if err := e.ready(ctx); err != nil {
		return nil, extract.Usage{}, err
	}
	if err := extract.CheckExtract(turns, known); err != nil {
		return nil, extract.Usage{}, err
	}
	if len(turns) == 0 {
		return nil, extract.Usage{}, nil
	}
	reply, usage, err := e.call(ctx, e.opt.FactPrompt, factMessage(turns, known))
	if err != nil {
		return nil, usage, err
	}
	facts, err := extract.ParseFacts(reply)
	if err != nil {
		return nil, usage, err
	}
	for i := range facts {
		facts[i] = unlabel(facts[i], turns, known)
	}
	return extract.Reconcile(facts, turns, known), usage, nil
}

// Summarize asks the model for the new digest in one GenerateContent
// call. The user message is a JSON object:
//
//	{"previous_digest":"...","turns":[{"role":"user","name":"Sam","time":"...","text":"..."}],"max_words":300}
//
// The reply is read by extract.ParseDigest and cut to MaxDigestBytes.
// Errors are as extract.Summarizer documents them; Usage counts the call
// even when it failed.
func (e *Extractor) Summarize(ctx context.Context, previous string, turns []memory.Record) (string, extract.Usage, error) {
	if err := e.ready(ctx); err != nil {
		return "", extract.Usage{}, err
	}
	if err := extract.CheckSummarize(previous, turns); err != nil {
		return "", extract.Usage{}, err
	}
	if len(turns) == 0 {
		return previous, extract.Usage{}, nil
	}
	reply, usage, err := e.call(ctx, e.opt.DigestPrompt, digestMessage(previous, turns, e.opt.DigestWords))
	if err != nil {
		return "", usage, err
	}
	digest, err := extract.ParseDigest(reply, e.opt.MaxDigestBytes)
	if err != nil {
		return "", usage, err
	}
	return digest, usage, nil
}

// ready reports a call that cannot start: an ended context, or an
// Extractor not made by New.
func (e *Extractor) ready(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if e == nil || e.model == nil {
		return memory.Errorf(memory.ErrInvalidArgument, "llmextract: no model (make an Extractor with New)")
	}
	return nil
}

// call makes the one GenerateContent call of Extract or Summarize and
// returns the reply's text and what the call spent. A failed call is
// ctx's error when ctx ended (providers often wrap it in their own), and
// otherwise memory.ErrUnavailable wrapping the model's error.
func (e *Extractor) call(ctx context.Context, system, user string) (string, extract.Usage, error) {
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, system),
		llms.TextParts(llms.ChatMessageTypeHuman, user),
	}
	resp, err := e.model.GenerateContent(ctx, msgs, e.opt.CallOptions...)
	usage := usageOf(resp)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return "", usage, ctxErr
		}
		return "", usage, memory.Wrap(memory.ErrUnavailable, err, "llmextract: the model's GenerateContent")
	}
	text, err := replyText(resp)
	return text, usage, err
}

// replyText returns the text of a reply: the Content of its first choice
// that has any (anthropic gives a thinking block as a choice without
// text, before the answer).
func replyText(resp *llms.ContentResponse) (string, error) {
	if resp == nil || len(resp.Choices) == 0 {
		return "", extract.Malformed("the model returned no choices")
	}
	for _, c := range resp.Choices {
		if c != nil && strings.TrimSpace(c.Content) != "" {
			return c.Content, nil
		}
	}
	return "", extract.Malformed("the model's reply has no text")
}
