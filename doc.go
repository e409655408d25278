// Package memory is the vocabulary of agentmem, an embeddable memory
// library for AI agents: conversation windows, rolling summaries,
// long-term facts recalled by relevance and keyed JSON state, all strictly
// scoped by tenant, user, agent, instance, squad and session.
//
// This package defines what every other package speaks: Record and its
// kinds, Identity (who is acting, set by the host program from verified
// credentials), Level (whose records a read or erasure reaches), Posture
// (the deployment's identity requirements), the role interfaces Store,
// Recaller and Forgetter, and the classified errors. It imports only the
// standard library.
//
// # Scope
//
// Every write records the writer's whole Identity. Reads and erasures name a
// Level; Posture.Filter derives the exact-match condition from the caller's
// identity and fails with ErrIncompleteScope, before any storage is
// touched, when a field the level needs is empty:
//
//	level            matches (tenant always, exactly)
//	session          session, + user when the caller has one
//	agent            agent, + user when the caller has one
//	user             user
//	store            nothing more; administrative, needs Posture.AllowStore
//	SQUAD_AGENT_RUN  instance + squad + session
//	SQUAD_AGENT      instance + squad
//	AGENT_RUN        instance + session
//	SQUAD_RUN        squad + session
//	SQUAD            squad
//	AGENT            agent (the parent agent definition)
//
// Storage drivers live under backend/, the memory types users construct
// under tiers/.
package memory
