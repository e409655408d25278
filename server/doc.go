// Package server is the memory service's HTTP handler: the service
// document's contract (package contract) over one *tiered.Memory.
//
//	POST /v1/recall   what to remember before a turn; soft: a tier that
//	                  fails sets degraded and the answer is still 200
//	POST /v1/list     every fact at a scope, the session's window and digest
//	POST /v1/write    turns and saved memories; 202 when a fold was queued
//	POST /v1/forget   erase every tier at a scope, counts per tier
//	GET  /healthz     liveness
//	GET  /readyz      readiness: the store can be read, and no Shutdown began
//
// # Identity
//
// Identity is derived here, never taken from a body: an Authenticator
// (Options.Authenticator) turns a request's credentials into a
// memory.Identity. BearerTokens verifies HS256-signed JSON Web Tokens
// whose claims name tenant, user (sub) and agent, the session, instance and
// squad coming from the identity headers (contract.HeaderSession and the
// others); a header that contradicts the token is 403. TrustedHeaders takes
// every field from the headers, for a server reached only through a sidecar
// that authenticated the caller. Missing or invalid credentials are 401. A
// request whose identity has an agent (an agent actor) cannot use the store
// scope, which is administrative (403); the Memory's posture must allow it
// (memory.Posture.AllowStore) for anyone to.
//
// # Requests
//
// A body over Options.MaxBodyBytes is 413, refused by its Content-Length
// before it is read, or as soon as reading passes the limit, before any
// decoding. Decoding is strict: invalid UTF-8, unknown fields, a key
// spelt in another case or given twice, and data after the JSON value
// are 400. Each request runs under Options.HandlerTimeout
// (504 when it passes), and its connection's reads and writes under
// Options.ReadTimeout and Options.WriteTimeout. Errors are answered with the
// status of their class and an error body (package contract).
//
// # Retried writes
//
// A write or an erasure carrying an Idempotency-Key is remembered, per
// identity and path, for Options.IdempotencyTTL once it succeeded: the same
// request again is answered with the stored response (header
// Idempotent-Replayed: true) instead of being done twice, a request still in
// flight under the key is waited for, and another body under the same key is
// 409. The responses live in this process; across replicas, a write's turns
// take ids derived from its key and its identity (tiered.Turn.ID), so the
// same write reaching another replica finds its turns stored and stores
// nothing again (WriteResponse.Replayed). An erasure done again erases
// what is left.
//
// # Shutdown
//
// Shutdown refuses new requests (503, class closed; /readyz 503), waits for
// those in flight, then closes the Memory, which drains its background
// folds.
package server
