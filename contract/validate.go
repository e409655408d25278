package contract

import (
	"github.com/agentmem/memory"
)

// Validate checks what the server can check before any work: a scope of
// the tiered memory, known tiers, no negative k or budget, a text of at
// most MaxTextBytes. It reports memory.ErrInvalidArgument or
// memory.ErrTooLarge.
func (r RecallRequest) Validate() error {
	if len(r.Text) > MaxTextBytes {
		return memory.Errorf(memory.ErrTooLarge, "recall text is %d bytes, the limit is %d", len(r.Text), MaxTextBytes)
	}
	if r.K < 0 || r.Budget < 0 {
		return memory.Errorf(memory.ErrInvalidArgument, "recall k (%d) and budget (%d) must not be negative", r.K, r.Budget)
	}
	if err := checkScope(r.Scope, true); err != nil {
		return err
	}
	return checkInclude(r.Include)
}

// Validate checks a list request as RecallRequest.Validate does.
func (r ListRequest) Validate() error {
	if r.Budget < 0 {
		return memory.Errorf(memory.ErrInvalidArgument, "list budget %d must not be negative", r.Budget)
	}
	if err := checkScope(r.Scope, true); err != nil {
		return err
	}
	return checkInclude(r.Include)
}

// Validate checks an erasure's scope: required, and one of the tiered
// memory's.
func (r ForgetRequest) Validate() error { return checkScope(r.Scope, false) }

// Validate checks the sizes of a write: at most memory.MaxBatch turns and
// as many memories. The turns and texts themselves are checked where they
// are stored.
func (r WriteRequest) Validate() error {
	if len(r.Turns) > memory.MaxBatch || len(r.Memories) > memory.MaxBatch {
		return memory.Errorf(memory.ErrTooLarge, "a write of %d turns and %d memories, the limit is %d of each", len(r.Turns), len(r.Memories), memory.MaxBatch)
	}
	return nil
}

// checkScope accepts the four levels of the tiered memory, and the empty
// scope when it may default.
func checkScope(s memory.Level, mayDefault bool) error {
	switch s {
	case memory.LevelSession, memory.LevelAgent, memory.LevelUser, memory.LevelStore:
		return nil
	case "":
		if mayDefault {
			return nil
		}
		return memory.Errorf(memory.ErrInvalidArgument, "the scope is required: session, agent, user or store")
	}
	return memory.Errorf(memory.ErrInvalidArgument, "unknown scope %q: session, agent, user or store", string(s))
}

func checkInclude(include []Tier) error {
	for _, t := range include {
		switch t {
		case TierShort, TierMedium, TierLong:
		default:
			return memory.Errorf(memory.ErrInvalidArgument, "unknown tier %q: short, medium or long", string(t))
		}
	}
	return nil
}
