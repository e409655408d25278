package server

import (
	"context"
	"fmt"
	"net/http"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/contract"
	"github.com/agentmem/memory/tiers/tiered"
)

// scopeOf returns the level a request's scope names: session when empty.
func scopeOf(s memory.Level) memory.Level {
	if s == "" {
		return memory.LevelSession
	}
	return s
}

func (s *Server) recall(ctx context.Context, id memory.Identity, body []byte) (reply, error) {
	req, err := decode[contract.RecallRequest](body)
	if err != nil {
		return reply{}, err
	}
	level := scopeOf(req.Scope)
	if err := refuseStore(id, level); err != nil {
		return reply{}, err
	}
	opt := tiered.RecallOptions{Level: level, K: req.K, Budget: req.Budget}
	opt.NoWindow, opt.NoDigest, opt.NoFacts = contract.LeftOut(req.Include)
	rec, err := s.mem.RecallWith(ctx, id, req.Text, opt)
	if err != nil {
		return reply{}, err
	}
	return jsonReply(http.StatusOK, recallResponse(rec))
}

func (s *Server) list(ctx context.Context, id memory.Identity, body []byte) (reply, error) {
	req, err := decode[contract.ListRequest](body)
	if err != nil {
		return reply{}, err
	}
	level := scopeOf(req.Scope)
	if err := refuseStore(id, level); err != nil {
		return reply{}, err
	}
	opt := tiered.ListOptions{Level: level, Budget: req.Budget}
	opt.NoWindow, opt.NoDigest, opt.NoFacts = contract.LeftOut(req.Include)
	l, err := s.mem.List(ctx, id, opt)
	if err != nil {
		return reply{}, err
	}
	out := contract.ListResponse{Turns: contract.FromRecords(l.Window), Digest: wireRecord(l.Digest), Facts: contract.FromRecords(l.Facts)}
	return jsonReply(http.StatusOK, out)
}

// writeCall stores a write's memories, then its turns: the memories
// first, since storing a text again stores it once, so that a write that
// failed may be retried whole.
func (s *Server) writeCall(ctx context.Context, id memory.Identity, body []byte) (reply, error) {
	req, err := decode[contract.WriteRequest](body)
	if err != nil {
		return reply{}, err
	}
	out := contract.WriteResponse{Memories: []contract.Record{}}
	if req.Memories != nil {
		recs, err := s.mem.Remember(ctx, id, req.Memories...)
		if err != nil {
			return reply{}, err
		}
		out.Memories = contract.FromRecords(recs)
	}
	if req.Turns != nil || req.Memories == nil {
		key, keyed := ctx.Value(idempotencyKey{}).(string)
		turns := make([]tiered.Turn, len(req.Turns))
		for i, t := range req.Turns {
			turns[i] = tiered.Turn{Role: t.Role, Content: t.Content, Speaker: t.Speaker}
			if keyed {
				turns[i].ID = keyedTurnID(id, key, i)
			}
		}
		a, err := s.mem.Append(ctx, id, turns...)
		if err != nil {
			return reply{}, err
		}
		out.Turns, out.Folding, out.Replayed = a.Turns, a.Folding, a.Replayed
	}
	status := http.StatusOK
	if out.Folding {
		status = http.StatusAccepted
	}
	return jsonReply(status, out)
}

func (s *Server) forget(ctx context.Context, id memory.Identity, body []byte) (reply, error) {
	req, err := decode[contract.ForgetRequest](body)
	if err != nil {
		return reply{}, err
	}
	if err := refuseStore(id, req.Scope); err != nil {
		return reply{}, err
	}
	e, err := s.mem.Forget(ctx, id, req.Scope)
	if err != nil {
		return reply{}, err
	}
	return jsonReply(http.StatusOK, contract.ForgetResponse{Turns: e.Turns, Digests: e.Digests, Facts: e.Facts, Work: e.Work})
}

// recallResponse is rec's wire form.
func recallResponse(rec tiered.Recollection) contract.RecallResponse {
	out := contract.RecallResponse{
		Turns: contract.FromRecords(rec.Window), Digest: wireRecord(rec.Digest), Facts: make([]contract.Fact, len(rec.Facts)),
		Text: rec.Text, Tokens: rec.Tokens, Degraded: rec.Degraded,
		Usage: contract.Usage{ModelCalls: rec.Usage.ModelCalls, PromptTokens: rec.Usage.PromptTokens,
			CompletionTokens: rec.Usage.CompletionTokens, UnreportedCalls: rec.Usage.UnreportedCalls},
		Errors: contract.TierErrors{Short: wireError(rec.Errors.Window), Medium: wireError(rec.Errors.Digest), Long: wireError(rec.Errors.Facts)},
	}
	for i, f := range rec.Facts {
		out.Facts[i] = contract.Fact{Record: contract.FromRecord(f.Record), Score: f.Score}
	}
	return out
}

func wireRecord(r *memory.Record) *contract.Record {
	if r == nil {
		return nil
	}
	w := contract.FromRecord(*r)
	return &w
}

func wireError(err error) *contract.Error {
	if err == nil {
		return nil
	}
	e := contract.NewError(err)
	return &e
}

// keyedTurnID is the id of turn i of a write under Idempotency-Key key by
// id: the same write, at any replica, names the same turns, and the ids of
// one write increase with i, as tiered.Turn.ID requires (96 bits of a hash
// of identity and key, then i in hex).
func keyedTurnID(id memory.Identity, key string, i int) string {
	return memory.ContentID(memory.KindTurn, id, contract.HeaderIdempotencyKey, key)[:24] + fmt.Sprintf("%08x", i)
}
