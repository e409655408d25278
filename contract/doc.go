// Package contract is the wire contract of the memory service (the service
// document's HTTP contract: POST /v1/recall, /v1/list, /v1/write,
// /v1/forget): the JSON requests and responses, the paths, the header
// names and the one table from error class to HTTP status. Package server
// answers it and package client speaks it, both through these types, so
// the two cannot drift.
//
// Identity never travels in a body. The server derives it from the
// request's credentials (a bearer token, or headers a trusted sidecar set)
// and the identity headers (HeaderSession and the others); a body names
// only what to do.
//
// Every failure is answered with the status of its class (see Class) and
// the body
//
//	{"error":{"class":"not_found","message":"..."}}
//
// which a client reads back into an *Error that matches the same memory
// sentinel with errors.Is as the server's error did.
package contract
