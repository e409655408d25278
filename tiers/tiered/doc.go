// Package tiered is the tiered, multi-tenant memory of the memory service
// origin document (001_0f0521096e641fc1.txt among the seeds in
// ../shared/seeds/; "the document" below): a short-term window of verbatim
// turns per session, a rolling digest per session, and long-term facts
// extracted from the turns and recalled by relevance, over one
// *backend.Store, the one place scope is enforced.
//
// # Short-term window
//
// Append stores turns as records of kind memory.KindTurn in the caller's
// session; an identity without a session fails with
// memory.ErrIncompleteScope and never falls back to a shared window.
// Window returns the session's turns not yet folded into its digest, the
// newest that fit a token budget (Options.Budget, default 4096) and a hard
// cap on turns (Options.MaxTurns, default 2000), always at least the
// newest; a read with a smaller budget trims lazily, and token counts are
// the ones cached on the records. A principal-bound read sees only turns
// whose attribution matches it (memory.LevelSession): a mismatch reads an
// empty window.
//
// # Folding: digest and facts
//
// When a session's unfolded turns pass Options.Trigger tokens (default the
// budget) or MaxTurns turns, Append queues a fold (a Memory tallies its own
// appends between reads of the window, at most a second apart, so across
// replicas appending to one session a fold may be queued up to a second's
// appends late; the idle flush folds whatever is left), and a background
// worker
// evicts the oldest turns until at most Options.Target tokens (default
// half the budget) remain — hysteresis — keeping at least one. One
// extract.Summarizer call folds them into the next version of the
// session's digest, and one extract.Extractor call turns them into facts:
// one of each per fold, never per turn. A session idle for
// Options.IdleFlush (default 10 minutes) has all its unfolded turns but
// the newest folded the same way; Flush does it at once.
//
// The digest is append-only and versioned: version v of a session's digest
// is a record of kind memory.KindDigest of its own (its Key is v,
// zero-padded), and the newest Options.DigestRetention versions (default
// 20) are kept. Digests are never indexed as facts. The facts of a fold
// are stored through package tiers/facts, with their source turns and the
// writer's compound attribution, deduplicated within their scope.
//
// # Exactly once
//
// Folds go through the store's work queue (driver.Claimer), so they
// survive a crash of the process that queued them, and the same code runs
// in every replica: with several processes on one SQLite file, or several
// replicas on one PostgreSQL, each fold is done once. A claim keeps other
// workers off a session's fold while its lease runs; writing digest
// version v+1 is a create, so a fold whose lease lapsed mid-way stores
// nothing when the fold that took over stored first; and a fold's facts
// are queued, tagged with its claim, before its digest version is
// written, and stored only if the version stored is that fold's, so a
// worker killed after writing its version loses none of them.
// Background work runs on Options.Workers goroutines with bounded retries
// and backoff (Options.MaxAttempts, then Options.GiveUp), no lock held
// across a model call, and Close drains the folds in flight.
//
// A fold's boundary is the newest turn it folded, by creation time, and
// it evicts only turns older than Options.Settle (default 2 s): a turn
// stamped before a fold's boundary but stored after the fold read the
// window would be taken for folded, so appends must commit, and the
// clocks of replicas agree, within Settle (leases need agreeing clocks
// too).
//
// # Recall
//
// RecallWith returns, within a token budget, the session's window, its
// latest digest and the facts most relevant to a text at a level
// (memory.LevelSession, LevelAgent, LevelUser or LevelStore, as
// memory.Level filters them; package recall ranks them), as parts and as
// a rendered block (Render); Recall does the same with the default
// options in the shape every memory type shares (memory.Recaller).
// Recall is always soft: a tier that cannot be read is reported in the
// result (Degraded, Errors) and the others are returned; RecallOptions may
// leave tiers out, unread. List is the strict, complete listing: every fact
// at a level, with the session's window and digest. Remember stores facts
// an agent saves on purpose (the document's save_memory) beside those the
// folds extract. Writes and erasures report failures under the default
// FailureMode Strict, and log them under Soft.
//
// # Local or remote
//
// Interface is the calls a Memory answers — Append, Window, RecallWith,
// Recall, Remember, List, Forget — and a client of the memory service
// (package client) answers them alike, so code written against it runs
// on either. An append whose turns carry ids (Turn.ID) is idempotent: the
// service derives them from a request's Idempotency-Key, so a retried
// write is stored once whichever replica takes it.
//
// # Erasure
//
// Forget erases, synchronously, the background work queued for the
// erased sessions (driver.WorkEraser: folds, idle flushes and facts
// waiting to be stored, whose payloads hold what was said), then turns,
// digest versions and facts at a level, tier by tier, and reports the
// counts per tier.
//
// # Accounting
//
// Each recall reports what it spent (Recollection.Usage: its fact
// search's embedder requests, none for a lexical recall); each fold
// reports to Options.OnFold what it folded and what its Summarize and
// Extract calls spent (extract.Usage, as the Summarizer and Extractor
// report it), with the session's identity; Stats adds them up for the
// process.
// Appends and erasures call no model. Options.Logger receives
// background failures.
package tiered
