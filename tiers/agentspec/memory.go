package agentspec

import (
	"context"
	"os"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/tiers"
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
	// means tiers.DefaultVectorDir (/var/run/agent-memory).
	MountPath string
}

// EnvironmentFromOS reads MEMORY_TYPE and AGENT_MEMORY from the process
// environment; the mount path is the document's default.
func EnvironmentFromOS() Environment {
	return Environment{MemoryType: os.Getenv(EnvMemoryType), AgentMemory: os.Getenv(EnvAgentMemory)}
}

// NewMemory builds the step memory a Spec describes, as the executor does
// at start-up: MEMORY_TYPE, when set, must be a valid type and agree with
// spec.memory.type when that is set too (a disagreement is
// memory.ErrInvalidArgument naming both); ttl, maxEntries and
// maxContextTokens carry over; vector memory lives at the mount path.
//
// store is required for every type: it is the one source of posture,
// token counter and clock, so every type built from it refuses the same
// calls. Summary memory keeps its lines in it; buffer, vector and none
// memory keep nothing there (buffer holds turns in the process, vector
// writes its directory), so a program without summary memory can pass a
// store over the in-memory driver:
//
//	store := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{Posture: posture})
//	mem, err := agentspec.NewMemory(ctx, store, spec, agentspec.EnvironmentFromOS())
//
// A nil store is memory.ErrInvalidArgument, from the type's constructor.
// On any error the memory is nil. The caller closes a *tiers.Vector it
// gets back, and the store once the memory is no longer used.
func NewMemory(ctx context.Context, store *backend.Store, spec Spec, env Environment) (tiers.StepMemory, error) {
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
	var (
		mem tiers.StepMemory
		err error
	)
	switch t {
	case TypeNone:
		mem, err = tiers.NewNone(store)
	case TypeSummary:
		mem, err = tiers.NewSummary(store, tiers.SummaryOptions{MaxEntries: spec.MaxEntries, TTL: spec.TTLDuration(),
			MaxContextTokens: spec.MaxContextTokens})
	case TypeVector:
		mem, err = tiers.NewVector(ctx, store, tiers.VectorOptions{Dir: env.MountPath, MaxContextTokens: spec.MaxContextTokens,
			TTL: spec.TTLDuration(), MaxEntries: spec.MaxEntries})
	default:
		mem, err = tiers.NewBuffer(store, tiers.BufferOptions{})
	}
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return mem, nil
}
