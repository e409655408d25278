// Package agentspec is the Kubernetes side of the step memory types: the
// spec.memory block of an Agent custom resource, the executor's
// environment contract (MEMORY_TYPE, AGENT_MEMORY) and building the
// memory they describe. It implements the configuration of the per-agent
// memory origin document ("Memory", 000_f275731a208896b5.txt among the
// seeds in ../shared/seeds/); "the document" in this package means that
// one.
//
// Parse reads a spec.memory block and ParseManifest the block of a whole
// Agent manifest, both in YAML or JSON, refusing unknown fields and bad
// values with an error naming the field (memory.ErrInvalidArgument).
// NewMemory builds the memory type the Spec chooses from package tiers —
// a *tiers.Buffer, *tiers.Summary, *tiers.Vector or tiers.None — checking
// it against MEMORY_TYPE (EnvironmentFromOS) as the executor does at
// start-up:
//
//	spec, err := agentspec.ParseManifest(manifest)
//	mem, err := agentspec.NewMemory(ctx, store, spec, agentspec.EnvironmentFromOS())
//	rec, err := mem.Recall(ctx, who, task) // step start: task is the step's input
//
// This is the only memory-type package that imports Kubernetes code: a
// PersistentVolumeClaim name (persistentStorage.volumeClaimRef) is checked
// as Kubernetes checks it, a DNS-1123 subdomain, and manifests are read
// with sigs.k8s.io/yaml. A program that constructs the types directly
// imports tiers alone, which pulls in no Kubernetes package.
package agentspec
