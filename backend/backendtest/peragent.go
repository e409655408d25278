package backendtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// PerAgent declares the narrowings of a driver that keeps each agent's
// records in one object of its own, as the ConfigMap driver keeps them in
// the ConfigMap agent-memory-<agent-name>:
//
//   - every record names an agent, and only agent ids of the driver's own
//     form (Agent) are accepted;
//   - one Put spans one agent's object, since the objects cannot be
//     updated atomically together;
//   - one agent's object holds only so much (Fits);
//   - the store's vector dimension lives in its records, so it is
//     forgotten once every record is deleted (DimensionInRecords).
//
// Under it the suite adapts the data of the checks that allow it: it
// renames every agent value of their identities, the empty one included,
// one to one into an id Agent returns, so that every filter selects
// exactly the records it selected before the renaming, and it splits each
// of their batches into one Put per agent where the check does not depend
// on the batch being one. The checks whose data cannot be adapted skip,
// each giving the narrowing it breaks.
type PerAgent struct {
	// Agent returns the agent id that driver d (one NewDriver returned)
	// accepts for name, a DNS-1123 label the suite makes up: "a",
	// "x-0f1e2d3c4b5a6978". Required.
	Agent func(d driver.Driver, name string) string
	// Fits reports whether one agent's object can hold recs, all records
	// of one agent, at once. Checks that store more in one agent skip.
	// Nil means any number fits.
	Fits func(recs []memory.Record) bool
	// DimensionInRecords declares that the driver forgets the store's
	// vector dimension once every record is deleted, instead of keeping
	// it for the store's life.
	DimensionInRecords bool
}

// perAgentName returns the name that the agent value v is renamed to
// under PerAgent: v itself when it is a DNS-1123 label not starting with
// "x-", else "x-" and 16 hex digits of its SHA-256 — one to one, so the
// renaming keeps every identity distinct.
func perAgentName(v string) string {
	if !strings.HasPrefix(v, "x-") && dnsLabel(v) {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	return "x-" + hex.EncodeToString(sum[:8])
}

// dnsLabel reports whether v is a DNS-1123 label: 1 to 63 lower-case
// letters, digits and '-', starting and ending with a letter or digit.
func dnsLabel(v string) bool {
	if v == "" || len(v) > 63 || v[0] == '-' || v[len(v)-1] == '-' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// agentID returns id with its agent renamed for d under PerAgent, or id
// unchanged when the driver declares no PerAgent.
func (e *env) agentID(d driver.Driver, id memory.Identity) memory.Identity {
	if e.cfg.PerAgent == nil {
		return id
	}
	id.Agent = e.cfg.PerAgent.Agent(d, perAgentName(id.Agent))
	return id
}

// agentRecords returns recs with their agents renamed (see agentID).
func (e *env) agentRecords(d driver.Driver, recs []memory.Record) []memory.Record {
	if e.cfg.PerAgent == nil {
		return recs
	}
	out := make([]memory.Record, len(recs))
	for i, r := range recs {
		r.Identity = e.agentID(d, r.Identity)
		out[i] = r
	}
	return out
}

// agentDataset returns ds with every identity's agent renamed (see
// agentID): writers, probes and records alike.
func (e *env) agentDataset(d driver.Driver, ds *dataset) *dataset {
	if e.cfg.PerAgent == nil {
		return ds
	}
	out := &dataset{recs: e.agentRecords(d, ds.recs)}
	for _, w := range ds.writers {
		out.writers = append(out.writers, e.agentID(d, w))
	}
	for _, p := range ds.probes {
		out.probes = append(out.probes, e.agentID(d, p))
	}
	return out
}

// byAgent splits recs into one batch per agent, in the order of each
// agent's first record, keeping the records' order within each: the Puts
// a PerAgent driver takes. Without PerAgent it is recs, whole.
func (e *env) byAgent(recs []memory.Record) [][]memory.Record {
	if e.cfg.PerAgent == nil || len(recs) == 0 {
		return [][]memory.Record{recs}
	}
	var out [][]memory.Record
	at := make(map[string]int)
	for _, r := range recs {
		i, ok := at[r.Identity.Agent]
		if !ok {
			i = len(out)
			at[r.Identity.Agent] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], r)
	}
	return out
}

// put is mustPut for a check whose batch need not be one Put: a PerAgent
// driver gets one Put per agent.
func (e *env) put(r reporter, d driver.Driver, what string, recs []memory.Record) {
	r.Helper()
	for _, b := range e.byAgent(recs) {
		mustPut(r, d, what, b)
	}
}

// putAll is putAll with one series of batches per agent under PerAgent.
func (e *env) putAll(r reporter, d driver.Driver, what string, recs []memory.Record) {
	r.Helper()
	for _, b := range e.byAgent(recs) {
		putAll(r, d, what, b)
	}
}

// putBatch is d.Put for a check whose batch need not be one Put, one Put
// per agent under PerAgent; it stops at the first error.
func (e *env) putBatch(ctx context.Context, d driver.Driver, recs []memory.Record) error {
	for _, b := range e.byAgent(recs) {
		if err := d.Put(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// perAgentSkip skips a check whose data break a PerAgent driver's
// narrowing, giving the narrowing (why); it reports whether it skipped.
// Without PerAgent it does nothing.
func (e *env) perAgentSkip(r reporter, why string, args ...any) bool {
	r.Helper()
	if e.cfg.PerAgent == nil {
		return false
	}
	skip(r, "the driver keeps each agent's records in one object (Config.PerAgent): "+why, args...)
	return true
}

// fitsOneAgent reports whether a PerAgent driver's object holds recs, all
// of one agent; true without PerAgent or Fits.
func (e *env) fitsOneAgent(recs []memory.Record) bool {
	if e.cfg.PerAgent == nil || e.cfg.PerAgent.Fits == nil {
		return true
	}
	return e.cfg.PerAgent.Fits(recs)
}
