package client

import (
	"context"
	"net/http"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/contract"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/recall"
	"github.com/agentmem/memory/tiers/tiered"
)

// RecallWith returns what id should remember before a turn about text
// (tiered.Memory.RecallWith), through /v1/recall, with facts at opt.Level
// or else Options.Level. It is soft across the wire: when the service
// cannot answer within Options.RecallTimeout (down, unreachable, failing,
// too slow) it returns an empty recollection, Degraded, each tier's error
// memory.ErrUnavailable with the reason, and no error. The caller's own
// mistakes, which the service answers with a 4xx (an identity without a
// session or without what the level needs, options out of range, refused
// credentials), and the end of ctx are errors.
func (cl *Client) RecallWith(ctx context.Context, id memory.Identity, text string, opt tiered.RecallOptions) (tiered.Recollection, error) {
	if opt.Level == "" {
		opt.Level = cl.opt.Level
	}
	rctx, cancel := context.WithTimeout(ctx, cl.opt.RecallTimeout)
	defer cancel()
	var resp contract.RecallResponse
	req := contract.RecallRequest{Text: text, Scope: opt.Level, K: opt.K, Budget: opt.Budget,
		Include: contract.Include(opt.NoWindow, opt.NoDigest, opt.NoFacts)}
	if req.Include != nil && len(req.Include) == 0 { // every tier left out: nothing to recall
		if err := ctx.Err(); err != nil {
			return tiered.Recollection{}, err
		}
		return tiered.Recollection{}, id.Validate()
	}
	_, err := cl.do(rctx, id, call{path: contract.PathRecall, req: req, resp: &resp})
	switch {
	case err == nil:
		return recollection(resp), nil
	case ctx.Err() != nil:
		return tiered.Recollection{}, ctx.Err()
	case callersFault(err):
		return tiered.Recollection{}, err
	}
	e := &memory.Error{Kind: memory.ErrUnavailable, Msg: "client: the memory service could not answer the recall", Err: err}
	return tiered.Recollection{Degraded: true, Errors: tiered.TierErrors{Window: e, Digest: e, Facts: e}}, nil
}

// Recall is RecallWith with the default options, in the shape every
// memory type shares (memory.Recaller), as tiered.Memory.Recall gives it:
// the records in the order Text shows them (facts, digest, window), and
// the tiers that could not be read joined in Degraded.
func (cl *Client) Recall(ctx context.Context, id memory.Identity, about string) (memory.Recollection, error) {
	r, err := cl.RecallWith(ctx, id, about, tiered.RecallOptions{})
	if err != nil {
		return memory.Recollection{}, err
	}
	return r.Shared(), nil
}

var _ memory.Recaller = (*Client)(nil)

// callersFault reports whether err is the caller's to fix: a 4xx class.
func callersFault(err error) bool {
	s := contract.ClassOf(err).Status()
	return s >= 400 && s < 500 && s != contract.StatusClientClosedRequest && s != http.StatusRequestTimeout
}

// recollection is a recall response's tiered.Recollection.
func recollection(r contract.RecallResponse) tiered.Recollection {
	out := tiered.Recollection{
		Window: contract.Records(r.Turns), Digest: record(r.Digest), Text: r.Text, Tokens: r.Tokens, Degraded: r.Degraded,
		Usage: extract.Usage{ModelCalls: r.Usage.ModelCalls, PromptTokens: r.Usage.PromptTokens,
			CompletionTokens: r.Usage.CompletionTokens, UnreportedCalls: r.Usage.UnreportedCalls},
		Errors: tiered.TierErrors{Window: tierError(r.Errors.Short), Digest: tierError(r.Errors.Medium), Facts: tierError(r.Errors.Long)},
	}
	for _, f := range r.Facts {
		out.Facts = append(out.Facts, recall.Result{Record: f.Record.Memory(), Score: f.Score})
	}
	return out
}

// tierError is e as an error: nil when e is.
func tierError(e *contract.Error) error {
	if e == nil {
		return nil
	}
	return e
}
