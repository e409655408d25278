// Package configmap is a backend.Driver that keeps memory in Kubernetes
// ConfigMaps through client-go: the `summary` memory type's storage, "the
// ConfigMap agent-memory-<agent-name> in the agent's namespace".
//
// # Objects
//
// Each agent's records live in one ConfigMap named
// agent-memory-<agent-name> in the driver's namespace (Options.Namespace).
// The agent name is taken from the record identity's Agent field: the text
// after its last '/', so kaos://agent/ai-agents/monitor gives
// agent-memory-monitor, and a plain name such as monitor is used whole.
// The resulting name must be a DNS-1123 subdomain, as Kubernetes requires
// (memory.ErrInvalidArgument otherwise); a record without an agent is
// memory.ErrIncompleteScope. Agents whose ids differ only before the last
// '/' share the object, never each other's records: every record keeps
// its writer's full identity and every query filters on it. Every
// ConfigMap the driver writes carries the label
// agentmem.io/agent-memory=v1.
//
// # Layout
//
// Every record is one entry with two keys sharing a stem: 20 decimal
// digits of its creation time (sortable, oldest first), '-', and 32 hex
// digits of the SHA-256 of its id. Data["<stem>.txt"] is the record's
// content — for a step summary the document's line
//
//	[workflow-name/step-name] Task: <first 200 chars of input> | Result: <first 500 chars of output>
//
// so a controller that loads the ConfigMap's data into AGENT_MEMORY, in key
// order, hands the executor the lines it prepends under "[Previous
// execution context]", oldest first. BinaryData["<stem>.json"] is the
// machine-readable record (id, kind, identity, label, key, metadata,
// times in unix nanoseconds, token count, version, vector) as JSON. Keys
// without the ".json" suffix in BinaryData, and Data keys without a record
// beside them, are not the driver's: it ignores them and keeps them.
//
// # Concurrency
//
// Every write is a read-modify-write of one ConfigMap carrying the
// resourceVersion it read; a lost race (Conflict, or AlreadyExists on
// Create) is retried with jittered exponential backoff, at most
// MaxAttempts times, then memory.ErrConflict. Racing writers, in one
// process or many, lose no entry.
//
// # Expiry
//
// Expired records are never returned. Every Put also removes the expired
// entries of the ConfigMap it writes, so the data a controller loads
// carries no expired line past the next write, and the driver is a
// backend.Sweeper: Sweep removes them from every ConfigMap.
//
// # Limits and cost
//
// One ConfigMap holds at most MaxObjectBytes (1 MiB), measured on the
// whole object as JSON. A write that would exceed it first drops the
// oldest entries that Options.MaxEntries and Options.TTL let go, then
// fails with memory.ErrTooLarge storing nothing. A query whose filter
// names an agent reads one ConfigMap; any other query, and every Put (to
// keep ids unique and the vector dimension single across the store), lists
// all of the namespace's agent-memory ConfigMaps. Give each store its own
// namespace.
//
// # The driver contract
//
// The ConfigMap model narrows backend.Driver in three ways, so the driver
// does not run the general conformance suite (backend/backendtest), whose
// data breaks all three; its own tests check every rule it keeps, against
// a brute-force answer where queries are concerned. Every record needs an
// agent whose name makes a valid object name; one Put may not span two
// agents' ConfigMaps (Kubernetes updates one object atomically, not two),
// and is memory.ErrInvalidArgument when it does; and one agent's records
// fit in 1 MiB. It has no compare-and-swap, vector search or work queue.
package configmap
