// Package configmap is a driver.Driver that keeps memory in Kubernetes
// ConfigMaps through client-go: the `summary` memory type's storage, "the
// ConfigMap agent-memory-<agent-name> in the agent's namespace".
//
// # Objects
//
// A Driver serves one namespace, Options.Namespace (the RBAC of
// examples/kubernetes-agent grants one), and keeps each agent's records in
// the ConfigMap agent-memory-<agent-name> there. The agent is the record
// identity's Agent field, in one of two forms (ParseAgent):
//
//   - kaos://agent/<namespace>/<name>, where namespace must be the
//     driver's: the memory of another namespace's agent belongs in that
//     namespace, so the driver refuses it with memory.ErrPermissionDenied —
//     writes, and queries naming such an agent — before any API call;
//   - <name> alone, an agent of the driver's namespace.
//
// agent-memory-<name> must be a valid ConfigMap name (a DNS-1123
// subdomain). Every other form, a path such as ../x or a/../../b among
// them, is memory.ErrInvalidArgument, so neither another namespace's
// agent nor a crafted path lands in an agent's object (the two forms of
// one agent of the namespace share it); a record without an agent is
// memory.ErrIncompleteScope. Every ConfigMap the driver writes carries
// the label agentmem.io/agent-memory=v1.
//
// One agent's ConfigMap is shared by every tenant, user and session that
// writes as that agent, never their records: every record keeps its
// writer's full identity and every query filters on it. It is also one
// 1 MiB budget, shared first come, first served (see Limits); that is the
// document's model — the controller loads the whole ConfigMap into the
// agent's pod — and Kubernetes isolates namespaces, not the scopes inside
// one object, so scopes that must not share a budget need agents or
// namespaces of their own.
//
// # Layout
//
// Every record is one entry with two keys sharing a stem: 20 decimal
// digits of its creation time (sortable, oldest first), '-', and 32 hex
// digits of the SHA-256 of its tenant and id (ids are unique per tenant;
// an entry written under an earlier driver's stem, the hash of the id
// alone, is rewritten under the new one by the next write of its
// ConfigMap). Data["<stem>.txt"] is the record's
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
// # Concurrency and durability
//
// Every write is a read-modify-write of one ConfigMap carrying the
// resourceVersion it read; a lost race (Conflict, or AlreadyExists on
// Create) is retried with jittered exponential backoff for as long as the
// context allows, and at most Options.RetryTimeout (a minute by default),
// then memory.ErrConflict. Racing writers, in one process or many, lose
// no entry. A write the driver acknowledged is in etcd, through the API
// server, so it survives a crash of the API server or of the writing
// process; it is as durable as the cluster's etcd, which acknowledges a
// write once a quorum of its members has it on disk.
//
// # Expiry
//
// Expired records are never returned. Every Put also removes the expired
// entries of the ConfigMap it writes, so the data a controller loads
// carries no expired line past the next write, and the driver is a
// driver.Sweeper: Sweep removes them from every ConfigMap.
//
// # Limits and cost
//
// One ConfigMap holds at most MaxObjectBytes (1 MiB), measured on the
// whole object as JSON. A write that would exceed it first drops the
// oldest entries that Options.MaxEntries and Options.TTL let go — only
// entries of the writer's own scope (its tenant, user and agent), so one
// tenant's writes never evict another's — then fails with
// memory.ErrTooLarge storing nothing; a writer whose object is taken by
// other scopes' entries gets that error. A query whose filter names an
// agent reads one ConfigMap; any other query, and every Put (to keep each
// tenant's ids unique and the vector dimension single across the store),
// lists all of
// the namespace's agent-memory ConfigMaps. The driver keeps the records it
// decoded, by ConfigMap and resourceVersion, so that it decodes only
// ConfigMaps that changed. Give each store its own namespace.
//
// # The driver contract
//
// The ConfigMap model narrows driver.Driver: every record needs an agent
// of the forms above; one Put may not span two agents' ConfigMaps
// (Kubernetes updates one object atomically, not two) and is
// memory.ErrInvalidArgument when it does; one agent's records fit in
// 1 MiB; and the store's vector dimension lives in the records, so it is
// forgotten once every record is deleted. It has no compare-and-swap,
// vector search or work queue. It has text search (SearchText), which
// indexes the ConfigMaps it reads for each search alone.
//
// TestConformance runs the conformance suite (backend/backendtest) on the
// fake clientset and on the real API server, declaring these narrowings
// as backendtest.PerAgent. The suite then renames the agents of the data
// of the checks that allow it, one to one, into ids of the driver's
// namespace, and splits their batches per agent; so these checks run:
// RoundTrip, Upsert, DocumentJSON, DeterministicIDs, Ordering, Isolation,
// ListNarrowing, ForgetEveryLevel, DeleteNarrowing, Expiry, Sweep,
// Concurrency, Close, CancelledContext, BadBatches, BadQueries, Versions
// and TextSearch. Two run in part and then skip: BadRecords checks every
// invalid record, but not the records exactly at every limit, whose 1 MiB
// document cannot fit in a 1 MiB ConfigMap; Vectors checks vector storage,
// but not that the dimension outlives deleting every record. ForgetLarge
// skips: it stores 10,050 records of one agent, more than one ConfigMap
// holds. Swap and SwapRace, VectorSearch and VectorSearchIsolation, and
// the seven Claim checks skip for the capabilities the driver lacks. The
// renaming means the suite never checks the Agent field's own edge cases
// (non-ASCII, 512 bytes); this package's tests check the agent forms.
package configmap
