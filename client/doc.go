// Package client speaks the memory service's HTTP contract (package
// contract) and answers tiered.Interface over it, so that code written
// against a *tiered.Memory in the process — an agent loop, the langchaingo
// adapters — runs against the service unchanged.
//
// Each call sends the caller's memory.Identity as the identity headers
// (contract.HeaderSession and the others), with the bearer token of
// Options.Token when there is one: the server derives the identity from
// them (a token speaks for tenant, user and agent, and headers that
// contradict it are refused). Without a token the headers alone speak, as a
// server behind a trusted sidecar takes them.
//
// Errors come back classified: a service's error matches the same memory
// sentinel with errors.Is as it did in the server (an *contract.Error, whose
// Class errors.As finds), a 401 matches contract.ErrUnauthenticated, and a
// service that cannot be reached is memory.ErrUnavailable.
//
// Recall is soft, as the service document wants: RecallWith and Recall give
// up after Options.RecallTimeout, and when the service cannot answer (down,
// unreachable, too slow, failing) they return an empty recollection marked
// degraded, with the reason in each tier's error, and no error. Only the
// caller's own mistakes (a 4xx: an identity without a session, an unknown
// scope, refused credentials) and the end of the caller's context are
// errors.
//
// Calls that may be repeated — recall, list, window — are retried with
// backoff on transport errors and 503, up to Options.MaxAttempts. Writes and
// erasures are retried the same way carrying one Idempotency-Key for all
// their attempts: a server that did the first attempt answers a repeat with
// the stored response instead of doing it again. The server keeps the
// responses in its process, but a write's turns get ids derived from the key
// (tiered.Turn.ID), so a retry that reaches another replica of the service
// finds them stored and stores nothing (tiered.Appended.Replayed); its saved
// memories are stored once however often they are written.
package client
