package contract

import "github.com/agentmem/memory"

// The service's paths. The four /v1 paths take a POST with a JSON body;
// the probes take a GET.
const (
	// PathRecall recalls what an identity should remember before a turn
	// (RecallRequest, RecallResponse).
	PathRecall = "/v1/recall"
	// PathList lists every fact at a scope and the session's window and
	// digest (ListRequest, ListResponse).
	PathList = "/v1/list"
	// PathWrite stores turns and explicitly saved memories (WriteRequest,
	// WriteResponse).
	PathWrite = "/v1/write"
	// PathForget erases every tier at a scope (ForgetRequest,
	// ForgetResponse).
	PathForget = "/v1/forget"
	// PathHealth is liveness: 200 while the process serves HTTP.
	PathHealth = "/healthz"
	// PathReady is readiness: 200 while the store can be read, 503 once
	// the server is shutting down.
	PathReady = "/readyz"
)

// The identity headers: one per memory.Identity field. Under bearer
// tokens the token speaks for tenant, user and agent, and a header naming
// another value than the token's is refused; session, instance and squad
// come from the headers. Behind a trusted sidecar every field comes from
// them.
const (
	HeaderTenant   = "Agentmem-Tenant"
	HeaderUser     = "Agentmem-User"
	HeaderAgent    = "Agentmem-Agent"
	HeaderInstance = "Agentmem-Instance"
	HeaderSquad    = "Agentmem-Squad"
	HeaderSession  = "Agentmem-Session"
)

// IdentityHeaders are the identity headers, each with the field of
// memory.Identity it carries, in the order of the fields.
var IdentityHeaders = []struct {
	Name  string
	Field memory.Field
}{
	{HeaderTenant, memory.FieldTenant},
	{HeaderUser, memory.FieldUser},
	{HeaderAgent, memory.FieldAgent},
	{HeaderInstance, memory.FieldInstance},
	{HeaderSquad, memory.FieldSquad},
	{HeaderSession, memory.FieldSession},
}

// HeaderIdempotencyKey names a write or an erasure: a request repeated
// with the same key, by the same identity, within the server's memory of
// keys is answered with the first one's response instead of being done
// again (see package server).
const HeaderIdempotencyKey = "Idempotency-Key"

// HeaderReplayed is set to "true" on a response replayed for a repeated
// Idempotency-Key.
const HeaderReplayed = "Idempotent-Replayed"

// MaxIdempotencyKeyBytes is the longest Idempotency-Key accepted.
const MaxIdempotencyKeyBytes = 128
