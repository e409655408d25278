// Package tiers holds the step memory types: what an agent recalls at the
// start of a workflow step and saves at its end. They are the types of the
// per-agent memory origin document ("Memory", 000_f275731a208896b5.txt
// among the seeds in ../shared/seeds/; "the document" below), named as its
// spec.memory.type values:
//
//   - Buffer ("buffer", the document's default): every step starts with an
//     empty context; the turns of the current step are held in the process
//     and discarded when the step ends. Nothing is saved after the step
//     completes.
//   - Summary ("summary"): at the end of each step one line (Step.Summary)
//     is stored, keeping the last MaxEntries per agent and discarding
//     entries older than TTL; the next step's Recall returns them as the
//     "[Previous execution context]" block to prepend to the system prompt.
//   - Vector ("vector"): at the end of each step a timestamped .txt entry
//     is written into a directory (default /var/run/agent-memory, the PVC
//     mount); the next step reads entries newest first until
//     maxContextTokens is reached. Loading reads an append-only index
//     backwards, so it costs the entries read, not the entries stored;
//     ttl and maxEntries prune old entries by default. Search ranks the
//     entries by term frequency with BM25 over stemmed words, within the
//     caller's scope, for the vector-search tool (package
//     tiers/vectortool): the index holds every entry's text, so a new
//     process's first search scans that one file, and an in-memory word
//     index built in the background serves the searches after it.
//   - None ("none"): explicitly stateless; nothing is loaded or saved.
//
// The spec.memory block that chooses among them, the Agent manifest it
// sits in and the executor's MEMORY_TYPE / AGENT_MEMORY contract are
// package tiers/agentspec's, the one memory-type package that imports
// Kubernetes code; this package imports none. ParseTTL reads the
// document's ttl values (1h, 24h, 7d) for the types' options. Keyed JSON
// working memory, another origin document's, is package tiers/working.
//
// The summary line and the block are exactly the document's:
//
//	[Previous execution context]
//	[<workflow>/<step>] Task: <first 200 chars of input> | Result: <first 500 chars of output>
//
//	[Current task follows]
//
// Lines are stored in that format; when they are recalled each is rendered
// by RecalledLine, which neutralises any spelling of either delimiter in
// the recalled text (its brackets become parentheses), so a step's input
// or output can neither close the block nor open another.
//
// All four implement StepMemory, the lifecycle an agent loop drives:
//
//	rec, err := mem.Recall(ctx, id, in)        // step start: in is the step's input
//	prompt := tiers.Prepend(rec, systemPrompt)
//	... run the step ...
//	err = mem.Save(ctx, id, tiers.Step{Workflow: wf, Name: step, Input: in, Output: out}) // step end
//
// Every type is built from a *backend.Store (NewBuffer, NewSummary, NewVector,
// NewNone; agentspec.NewMemory from a spec.memory block), the one place scope
// is enforced and the one source of posture, token counter and clock: no type
// holds a posture of its own. Summary keeps its records in the store; Buffer,
// Vector and None keep nothing there but derive every write check and read
// filter through it, so a program without summary memory can pass a store over
// the in-memory driver. The caller's Identity decides what is written and what
// is visible; each type's scope is the agent level (Summary's Level option can
// choose another), and a level whose identity fields are missing fails closed
// with memory.ErrIncompleteScope before anything is read or written. Every
// Save validates its Step the same way (see Step.Validate: invalid UTF-8 is
// refused, never repaired) and passes the store's write check, so a program
// that works with one type keeps working when its configuration switches to
// another (Summary at its default level). Buffer keeps its turns per Identity,
// so sessions sharing one Buffer never see each other's turns.
//
// Token counts come from the store's memory.TokenCounter, by default the
// exact, offline cl100k_base counter. Counts are computed once, when a turn
// or summary is written, and cached on the record; recall re-counts, for its
// budget, only a record without a cached count, or a line whose rendering
// RecalledLine changed. A recalled block is counted once more, whole, for
// the recollection's Tokens: the exact count of Text by the same counter.
//
// All four recall by recency, as the document loads memory: Recall's about
// argument (what the step is about) is ignored by each of them. Each reads
// one source or none, so none sets Recollection.Degraded: a failure is the
// call's error.
//
// Every type here is safe for concurrent use and honours cancelled
// contexts.
package tiers
