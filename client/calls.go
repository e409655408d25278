package client

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/contract"
	"github.com/agentmem/memory/tiers/tiered"
)

// Append stores turns in id's session (tiered.Memory.Append), through
// /v1/write.
func (cl *Client) Append(ctx context.Context, id memory.Identity, turns ...tiered.Turn) (tiered.Appended, error) {
	req := contract.WriteRequest{Turns: make([]contract.Turn, len(turns))}
	for i, t := range turns {
		req.Turns[i] = contract.Turn{Role: t.Role, Content: t.Content, Speaker: t.Speaker}
	}
	var resp contract.WriteResponse
	if _, err := cl.do(ctx, id, call{path: contract.PathWrite, req: req, resp: &resp, once: true}); err != nil {
		return tiered.Appended{}, err
	}
	return tiered.Appended{Turns: resp.Turns, Folding: resp.Folding, Replayed: resp.Replayed}, nil
}

// Remember stores texts as long-term facts written by id
// (tiered.Memory.Remember), through /v1/write, and returns their records
// as stored.
func (cl *Client) Remember(ctx context.Context, id memory.Identity, texts ...string) ([]memory.Record, error) {
	req := contract.WriteRequest{Memories: append(make([]string, 0, len(texts)), texts...)}
	var resp contract.WriteResponse
	if _, err := cl.do(ctx, id, call{path: contract.PathWrite, req: req, resp: &resp, once: true}); err != nil {
		return nil, err
	}
	return contract.Records(resp.Memories), nil
}

// Window returns id's short-term window (tiered.Memory.Window), through
// /v1/list.
func (cl *Client) Window(ctx context.Context, id memory.Identity, budget int) ([]memory.Record, error) {
	l, err := cl.List(ctx, id, tiered.ListOptions{Budget: budget, NoDigest: true, NoFacts: true})
	return l.Window, err
}

// List returns the session's window and digest and every fact at a level
// (tiered.Memory.List), through /v1/list. Its level is one of the tiered
// memory's four; empty means memory.LevelSession.
func (cl *Client) List(ctx context.Context, id memory.Identity, opt tiered.ListOptions) (tiered.Listing, error) {
	include := contract.Include(opt.NoWindow, opt.NoDigest, opt.NoFacts)
	if include != nil && len(include) == 0 { // every tier left out: nothing to read
		if err := ctx.Err(); err != nil {
			return tiered.Listing{}, err
		}
		return tiered.Listing{}, id.Validate()
	}
	var resp contract.ListResponse
	req := contract.ListRequest{Scope: opt.Level, Include: include, Budget: opt.Budget}
	if _, err := cl.do(ctx, id, call{path: contract.PathList, req: req, resp: &resp}); err != nil {
		return tiered.Listing{}, err
	}
	return tiered.Listing{Window: contract.Records(resp.Turns), Digest: record(resp.Digest), Facts: contract.Records(resp.Facts)}, nil
}

// Forget erases every tier at level (tiered.Memory.Forget), through
// /v1/forget. The level is one of the tiered memory's four.
func (cl *Client) Forget(ctx context.Context, id memory.Identity, level memory.Level) (tiered.Erased, error) {
	var resp contract.ForgetResponse
	if _, err := cl.do(ctx, id, call{path: contract.PathForget, req: contract.ForgetRequest{Scope: level}, resp: &resp, once: true}); err != nil {
		return tiered.Erased{}, err
	}
	return tiered.Erased{Turns: resp.Turns, Digests: resp.Digests, Facts: resp.Facts, Work: resp.Work}, nil
}

func record(r *contract.Record) *memory.Record {
	if r == nil {
		return nil
	}
	m := r.Memory()
	return &m
}
