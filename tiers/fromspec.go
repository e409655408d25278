package tiers

import (
	"context"
	"os"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
)

// The environment contract of the document: what the workflow controller
// sets in the executor's pod.
const (
	// EnvMemoryType names the variable holding the memory type.
	EnvMemoryType = "MEMORY_TYPE"
	// EnvAgentMemory names the variable holding the summary lines the
	// controller loaded from the agent's ConfigMap.
	EnvAgentMemory = "AGENT_MEMORY"
)

// Environment is the executor's side of the document's contract.
type Environment struct {
	// MemoryType is MEMORY_TYPE; empty means the Spec decides.
	MemoryType string
	// AgentMemory is AGENT_MEMORY, the controller's copy of the summary
	// lines. It is informational here: the summary type reads its lines
	// from its store, which is the same ConfigMap when the store is a
	// backend/configmap driver.
	AgentMemory string
	// MountPath is where the PVC for vector memory is mounted; empty
	// means DefaultVectorDir (/var/run/agent-memory).
	MountPath string
}

// EnvironmentFromOS reads MEMORY_TYPE and AGENT_MEMORY from the process
// environment; the mount path is the document's default.
func EnvironmentFromOS() Environment {
	return Environment{MemoryType: os.Getenv(EnvMemoryType), AgentMemory: os.Getenv(EnvAgentMemory)}
}

// Deps is what the memory types built from a Spec need besides it.
type Deps struct {
	// Store holds summary memory; required for the summary type only.
	Store *backend.Store
	// Posture is the identity requirements of buffer and vector memory
	// (summary memory takes its store's).
	Posture memory.Posture
	// Tokens counts tokens; nil means exact cl100k_base counts.
	Tokens memory.TokenCounter
	// Clock is the time source; nil means time.Now.
	Clock backend.Clock
}

// FromSpec builds the memory a Spec describes, as the executor does at
// start-up: MEMORY_TYPE, when set, must be a valid type and agree with
// spec.memory.type when that is set too (a disagreement is
// memory.ErrInvalidArgument naming both); ttl, maxEntries and
// maxContextTokens carry over; vector memory lives at the mount path.
// The caller closes a *Vector it gets back.
func FromSpec(ctx context.Context, spec Spec, env Environment, deps Deps) (StepMemory, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	t := spec.MemoryType()
	if env.MemoryType != "" {
		et := MemoryType(env.MemoryType)
		if !validType(et) {
			return nil, memory.Errorf(memory.ErrInvalidArgument, "%s=%q is not a memory type; use one of %s", EnvMemoryType, env.MemoryType, typeList())
		}
		if spec.Type != "" && et != spec.Type {
			return nil, memory.Errorf(memory.ErrInvalidArgument, "%s=%q disagrees with spec.memory.type %q", EnvMemoryType, env.MemoryType, string(spec.Type))
		}
		t = et
	}
	switch t {
	case TypeNone:
		return None{}, nil
	case TypeSummary:
		if deps.Store == nil {
			return nil, memory.Errorf(memory.ErrInvalidArgument, "summary memory needs a store (Deps.Store)")
		}
		return NewSummary(deps.Store, SummaryOptions{MaxEntries: spec.MaxEntries, TTL: spec.TTLDuration(),
			MaxContextTokens: spec.MaxContextTokens, Tokens: deps.Tokens, Clock: deps.Clock})
	case TypeVector:
		return NewVector(ctx, VectorOptions{Dir: env.MountPath, MaxContextTokens: spec.MaxContextTokens,
			TTL: spec.TTLDuration(), MaxEntries: spec.MaxEntries, Posture: deps.Posture, Tokens: deps.Tokens, Clock: deps.Clock})
	}
	return NewBuffer(BufferOptions{Tokens: deps.Tokens, Clock: deps.Clock, Posture: deps.Posture})
}
