package contract

import (
	"time"

	"github.com/agentmem/memory"
)

// Identity is a record's writer on the wire (memory.Identity): only ever
// in responses, never taken from a request.
type Identity struct {
	Tenant   string `json:"tenant,omitempty"`
	User     string `json:"user,omitempty"`
	Agent    string `json:"agent,omitempty"`
	Instance string `json:"instance,omitempty"`
	Squad    string `json:"squad,omitempty"`
	Session  string `json:"session,omitempty"`
}

// Record is a stored record on the wire (memory.Record without its
// vector). Times are RFC 3339 with nanoseconds; Expires is absent when the
// record never expires.
type Record struct {
	ID       string            `json:"id"`
	Kind     memory.Kind       `json:"kind"`
	Identity Identity          `json:"identity"`
	Label    string            `json:"label,omitempty"`
	Key      string            `json:"key,omitempty"`
	Content  string            `json:"content"`
	Metadata map[string]string `json:"metadata,omitempty"`
	Created  time.Time         `json:"created"`
	Expires  time.Time         `json:"expires,omitzero"`
	Tokens   int               `json:"tokens"`
	Version  int64             `json:"version"`
}

// FromRecord returns r's wire form.
func FromRecord(r memory.Record) Record {
	id := r.Identity
	return Record{
		ID: r.ID, Kind: r.Kind, Label: r.Label, Key: r.Key, Content: r.Content, Metadata: r.Metadata,
		Identity: Identity{Tenant: id.Tenant, User: id.User, Agent: id.Agent, Instance: id.Instance, Squad: id.Squad, Session: id.Session},
		Created:  r.Created, Expires: r.Expires, Tokens: r.Tokens, Version: r.Version,
	}
}

// FromRecords returns the wire form of each of rs, never nil, so that
// none is the empty list on the wire.
func FromRecords(rs []memory.Record) []Record {
	out := make([]Record, len(rs))
	for i, r := range rs {
		out[i] = FromRecord(r)
	}
	return out
}

// Memory returns the record r is the wire form of.
func (r Record) Memory() memory.Record {
	id := r.Identity
	return memory.Record{
		ID: r.ID, Kind: r.Kind, Label: r.Label, Key: r.Key, Content: r.Content, Metadata: r.Metadata,
		Identity: memory.Identity{Tenant: id.Tenant, User: id.User, Agent: id.Agent, Instance: id.Instance, Squad: id.Squad, Session: id.Session},
		Created:  r.Created, Expires: r.Expires, Tokens: r.Tokens, Version: r.Version,
	}
}

// Records returns the records rs are the wire form of; nil for none.
func Records(rs []Record) []memory.Record {
	if len(rs) == 0 {
		return nil
	}
	out := make([]memory.Record, len(rs))
	for i, r := range rs {
		out[i] = r.Memory()
	}
	return out
}
