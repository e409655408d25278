// Package extract turns conversation turns into what the tiered memory
// keeps beyond its short-term window: long-term facts and a session's
// rolling digest.
//
// The service document this library follows keeps three tiers: a
// verbatim window of recent turns; "a single rolling narrative digest per
// session that preserves continuity once older turns leave the window",
// never indexed as facts; and "semantic + episodic facts extracted from
// turns and recalled by relevance", which the document's Mem0 engine
// decomposes into "atomic, individually revisable facts". When a fold
// evicts turns from the window, one model role — the document's
// "summarization" model, which "drives extraction and digest generation"
// — does two things with them, off the write path: it folds them into the
// digest (Summarizer) and extracts facts from them (Extractor). The
// tiered memory calls each once per fold, with the whole evicted batch,
// never once per turn.
//
// What is here:
//
//   - Extractor and Summarizer, the two interfaces, with Fact (text,
//     provenance: the ids of its source turns, and what known fact it
//     supersedes) and Usage (model calls and tokens, for cost accounting,
//     reported by every call, also a failed one);
//   - Rules, a deterministic implementation of both that needs no model:
//     it keeps the speaker's self-describing sentences as facts and folds
//     turns into a bounded, speaker-attributed digest (its documentation
//     says exactly what it does);
//   - ParseFacts and ParseDigest, the tolerant readers of a model's
//     reply, and Reconcile, which makes a model's facts fit the batch;
//   - CheckExtract and CheckSummarize, the input checks every
//     implementation applies before any work, and the limits they apply.
//
// The implementation over a langchaingo llms.Model is extract/llmextract;
// this package imports only the standard library and package memory.
//
// # Errors
//
// Input that can never succeed (a record that is not a turn, invalid
// UTF-8, duplicate ids, sizes over the limits) is memory.ErrInvalidArgument
// or memory.ErrTooLarge, before any model is called. A model that failed
// is memory.ErrUnavailable. A reply that cannot be used is
// memory.ErrInvalidArgument (memory.ErrTooLarge when over MaxReplyBytes)
// wrapping ErrMalformedOutput, and nothing of it is returned: a caller
// stores no facts and no digest from it, and may retry the call. Context
// errors are returned unchanged.
package extract
