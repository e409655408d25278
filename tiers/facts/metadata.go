package facts

import (
	"encoding/json"
	"time"

	"github.com/agentmem/memory"
)

// The metadata keys of a fact record (memory.Record.Metadata). A fact is
// valid from its creation time (memory.Record.Created) until the time under
// SupersededAtKey, which only a superseded fact (memory.KindSuperseded)
// has.
const (
	// SourcesKey holds the fact's provenance: the ids of the turns it was
	// taken from, as a JSON array of strings. A fact without sources has
	// no such key.
	SourcesKey = "sources"
	// SupersedesKey holds the id of the fact this one superseded when it
	// was created; absent when it superseded none.
	SupersedesKey = "supersedes"
	// SupersededByKey holds, on a superseded fact, the id of the fact that
	// superseded it.
	SupersededByKey = "superseded_by"
	// SupersededAtKey holds, on a superseded fact, when its validity
	// ended: an RFC 3339 time with nanoseconds, in UTC. It is the creation
	// time of the fact that superseded it, or, when that fact's text was
	// stored already, the time of the update.
	SupersededAtKey = "superseded_at"
)

// Sources returns the provenance of a fact record: the turn ids under
// SourcesKey, or nil when it has none. Metadata that is not a JSON array
// of strings is memory.ErrInvalidArgument.
func Sources(r memory.Record) ([]string, error) {
	v, ok := r.Metadata[SourcesKey]
	if !ok {
		return nil, nil
	}
	var out []string
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		return nil, memory.Wrap(memory.ErrInvalidArgument, err, "fact "+r.ID+": metadata "+SourcesKey+" is not a JSON array of strings")
	}
	return out, nil
}

// Validity returns when a fact record was valid: from its creation until
// the time it was superseded (SupersededAtKey), or until now — a zero
// until — when it is still a live fact. A superseded record whose
// SupersededAtKey is missing or not an RFC 3339 time is
// memory.ErrInvalidArgument.
func Validity(r memory.Record) (from, until time.Time, err error) {
	if r.Kind != memory.KindSuperseded {
		return r.Created, time.Time{}, nil
	}
	until, err = time.Parse(time.RFC3339Nano, r.Metadata[SupersededAtKey])
	if err != nil {
		return r.Created, time.Time{}, memory.Wrap(memory.ErrInvalidArgument, err, "superseded fact "+r.ID+": metadata "+SupersededAtKey+" is not an RFC 3339 time")
	}
	return r.Created, until, nil
}

// encodeSources returns the SourcesKey value of sources.
func encodeSources(sources []string) string {
	b, _ := json.Marshal(sources) // a []string always marshals
	return string(b)
}
