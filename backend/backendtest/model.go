package backendtest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/agentmem/memory"
)

// This file holds the random data set and the reference model the
// model-based checks compare a driver with. The model states the scope
// rules of the origin documents directly, one level at a time; it
// deliberately shares no code with memory.Filter.Matches or
// driver.Query.Matches, so a bug there shows up as a difference.

// tenantPool holds the tenants of generated identities, the empty tenant
// (a namespace of its own) among them, and near-duplicates of each other.
var tenantPool = []string{"", "acme", "acme2", "Acme", "ácme"}

// sharedPool holds values that appear in every identity field, so a driver
// that confuses columns, matches prefixes, folds case or normalises Unicode
// leaks. "a\u030alice" is "ålice" decomposed: a different byte string.
var sharedPool = []string{
	"alice", "alicia", "alice2", "al", "ålice", "a\u030alice", "ALICE",
	"用户", "用户2", "x", "X", "a%", "a_c", "*", "0",
	"kaos://agent/ns/alice", "o'neil\"; --", "🦊", "a b",
}

// fieldPools holds values typical of one field.
var fieldPools = map[memory.Field][]string{
	memory.FieldUser:     {"bob", "bobby", "carol"},
	memory.FieldAgent:    {"kaos://agent/ns/planner", "kaos://agent/ns/planner2", "kaos://agent/ns2/planner"},
	memory.FieldInstance: {"inst-1", "inst-10", "inst-2"},
	memory.FieldSquad:    {"squad-a", "squad-ab", "squad-b"},
	memory.FieldSession:  {"run-1", "run-11", "run-2"},
}

// personFields are the identity fields other than tenant.
var personFields = []memory.Field{memory.FieldUser, memory.FieldAgent, memory.FieldInstance, memory.FieldSquad, memory.FieldSession}

// keyPool holds record keys; "" means no key.
var keyPool = []string{"", "", "", "k", "k2", "K", "ключ", "live_chat_vendors", "wf/step"}

// idPrefixes start generated ids so ties on Created are broken by ids that
// compare differently as bytes, as text under a collation, and by case.
var idPrefixes = []string{"r", "R", "é", "用", "r-", "~"}

// pick returns a random element of s.
func pick[T any](rng *rand.Rand, s []T) T { return s[rng.IntN(len(s))] }

// randomValue returns a value for field f: empty a quarter of the time,
// else from the shared pool or the field's own.
func randomValue(rng *rand.Rand, f memory.Field) string {
	switch n := rng.IntN(100); {
	case n < 25:
		return ""
	case n < 65:
		return pick(rng, sharedPool)
	default:
		return pick(rng, fieldPools[f])
	}
}

// randomIdentity returns a fresh random identity.
func randomIdentity(rng *rand.Rand) memory.Identity {
	id := memory.Identity{Tenant: pick(rng, tenantPool)}
	for _, f := range personFields {
		id = id.With(f, randomValue(rng, f))
	}
	return id
}

// neighbour returns a copy of id with one or two fields changed, so the
// data set holds many identities that differ in exactly the field a level
// must check.
func neighbour(rng *rand.Rand, id memory.Identity) memory.Identity {
	for range 1 + rng.IntN(2) {
		if rng.IntN(8) == 0 {
			id.Tenant = pick(rng, tenantPool)
			continue
		}
		f := pick(rng, personFields)
		id = id.With(f, randomValue(rng, f))
	}
	return id
}

// workingLevels are the six levels of keyed working memory, whose rows
// keep only their level's identity fields (memory.Level.Keyed).
var workingLevels = []memory.Level{
	memory.LevelSquadAgentRun, memory.LevelSquadAgent, memory.LevelAgentRun,
	memory.LevelSquadRun, memory.LevelSquad, memory.LevelParentAgent,
}

// identities returns n distinct identities that a Store would accept as
// writers (at least one field besides tenant), none of them in avoid. Most
// are neighbours of an earlier one or of one in near; a fifth are reduced
// to the fields one working-memory level keeps, so that every level's
// keyed rows are in the data set beside fuller identities.
func identities(rng *rand.Rand, n int, near []memory.Identity, avoid map[memory.Identity]bool) []memory.Identity {
	var out []memory.Identity
	seen := make(map[memory.Identity]bool)
	for len(out) < n {
		var id memory.Identity
		switch pool := len(near) + len(out); {
		case pool > 0 && rng.IntN(100) < 60:
			if i := rng.IntN(pool); i < len(near) {
				id = neighbour(rng, near[i])
			} else {
				id = neighbour(rng, out[i-len(near)])
			}
		default:
			id = randomIdentity(rng)
		}
		if rng.IntN(5) == 0 {
			// A keyed working-memory row: only the fields its level keeps,
			// as an AGENT row has no instance, squad or run.
			id = id.Only(pick(rng, workingLevels).Keyed())
		}
		if seen[id] || avoid[id] || id.Only(memory.AllFields&^memory.FieldTenant) == (memory.Identity{}) {
			continue
		}
		seen[id] = true
		out = append(out, id)
	}
	return out
}

// dataset is a random population of writers, their records, and callers
// that wrote nothing.
type dataset struct {
	writers []memory.Identity
	probes  []memory.Identity
	recs    []memory.Record
}

// genDataset returns nWriters writers with two to six records each, and
// nProbes extra callers. Ids start with tag so data sets never collide.
// Every record is unexpired at t0; some expire later.
func genDataset(rng *rand.Rand, tag string, nWriters, nProbes int) *dataset {
	ds := &dataset{writers: identities(rng, nWriters, nil, nil)}
	avoid := make(map[memory.Identity]bool)
	for _, w := range ds.writers {
		avoid[w] = true
	}
	ds.probes = identities(rng, nProbes, ds.writers, avoid)
	n := 0
	for _, w := range ds.writers {
		for range 2 + rng.IntN(5) {
			n++
			ds.recs = append(ds.recs, randomRecord(rng, w, fmt.Sprintf("%s%s-%05d", pick(rng, idPrefixes), tag, n)))
		}
	}
	rng.Shuffle(len(ds.recs), func(i, j int) { ds.recs[i], ds.recs[j] = ds.recs[j], ds.recs[i] })
	return ds
}

// randomRecord returns a valid record written by w. Content and labels
// reuse identity values so a driver that matches on the wrong column leaks;
// a document holds its content as a JSON string.
func randomRecord(rng *rand.Rand, w memory.Identity, id string) memory.Record {
	rec := memory.Record{
		ID:       id,
		Kind:     pick(rng, memory.Kinds),
		Identity: w,
		Label:    pick(rng, []string{"", "user", "assistant", "working", "domain", pick(rng, sharedPool)}),
		Key:      pick(rng, keyPool),
		Content:  pick(rng, []string{"hello", "{\"a\":1}", pick(rng, sharedPool), "用户 said: " + w.User}),
		// Few distinct instants, so many records tie on Created.
		Created: t0.Add(-time.Duration(rng.IntN(90))*time.Second + time.Duration(pick(rng, []int{0, 0, 0, 1, 999}))),
		Tokens:  rng.IntN(100),
	}
	rec.Content = contentFor(rec.Kind, rec.Content)
	if rng.IntN(3) > 0 {
		rec.Metadata = map[string]string{"source": pick(rng, sharedPool)}
	}
	if rng.IntN(5) == 0 {
		rec.Expires = t0.Add(time.Duration(1+rng.IntN(48)) * time.Hour)
	}
	return rec
}

// refRefusal is the reference statement of which reads and erasures must
// be refused: the error a caller must get at level l under posture p, or
// nil. A level fails with ErrIncompleteScope when a field it needs is
// empty; RequirePrincipal makes session and agent levels need a user,
// RequireAgentIdentity makes every level but the administrative store
// level need an agent; the store level needs the posture's permission and
// nothing else.
func refRefusal(c memory.Identity, l memory.Level, p memory.Posture) error {
	var missing bool
	switch l {
	case memory.LevelSession:
		missing = c.Session == "" || (p.RequirePrincipal && c.User == "")
	case memory.LevelAgent:
		missing = c.Agent == "" || (p.RequirePrincipal && c.User == "")
	case memory.LevelUser:
		missing = c.User == ""
	case memory.LevelStore:
		if !p.AllowStore {
			return memory.ErrPermissionDenied
		}
		return nil
	case memory.LevelSquadAgentRun:
		missing = c.Instance == "" || c.Squad == "" || c.Session == ""
	case memory.LevelSquadAgent:
		missing = c.Instance == "" || c.Squad == ""
	case memory.LevelAgentRun:
		missing = c.Instance == "" || c.Session == ""
	case memory.LevelSquadRun:
		missing = c.Squad == "" || c.Session == ""
	case memory.LevelSquad:
		missing = c.Squad == ""
	case memory.LevelParentAgent:
		missing = c.Agent == ""
	default:
		return memory.ErrInvalidArgument
	}
	if missing || (p.RequireAgentIdentity && c.Agent == "") {
		return memory.ErrIncompleteScope
	}
	return nil
}

// refScope is the reference statement of the scope rules: the predicate a
// writer's identity must satisfy for caller c to see or erase its records
// at level l. Tenant is always matched exactly, the empty tenant being a
// namespace of its own; every other comparison is exact too. The posture
// never changes the predicate of an accepted caller: RequirePrincipal binds
// the user into session and agent reads, which bind it whenever the caller
// has one, and under RequirePrincipal it always has (refRefusal).
func refScope(c memory.Identity, l memory.Level) func(w memory.Identity) bool {
	switch l {
	case memory.LevelSession:
		// kaos_run = session AND user_id = principal when present.
		return func(w memory.Identity) bool {
			return w.Tenant == c.Tenant && w.Session == c.Session && (c.User == "" || w.User == c.User)
		}
	case memory.LevelAgent:
		// agent_id = agent AND user_id = principal when present.
		return func(w memory.Identity) bool {
			return w.Tenant == c.Tenant && w.Agent == c.Agent && (c.User == "" || w.User == c.User)
		}
	case memory.LevelUser:
		// Everything the user contributed through any agent or session.
		return func(w memory.Identity) bool { return w.Tenant == c.Tenant && w.User == c.User }
	case memory.LevelStore:
		// The whole store within the tenant.
		return func(w memory.Identity) bool { return w.Tenant == c.Tenant }
	case memory.LevelSquadAgentRun:
		return func(w memory.Identity) bool {
			return w.Tenant == c.Tenant && w.Instance == c.Instance && w.Squad == c.Squad && w.Session == c.Session
		}
	case memory.LevelSquadAgent:
		return func(w memory.Identity) bool {
			return w.Tenant == c.Tenant && w.Instance == c.Instance && w.Squad == c.Squad
		}
	case memory.LevelAgentRun:
		return func(w memory.Identity) bool {
			return w.Tenant == c.Tenant && w.Instance == c.Instance && w.Session == c.Session
		}
	case memory.LevelSquadRun:
		return func(w memory.Identity) bool {
			return w.Tenant == c.Tenant && w.Squad == c.Squad && w.Session == c.Session
		}
	case memory.LevelSquad:
		return func(w memory.Identity) bool { return w.Tenant == c.Tenant && w.Squad == c.Squad }
	case memory.LevelParentAgent:
		// The parent agent definition, across squads and instances.
		return func(w memory.Identity) bool { return w.Tenant == c.Tenant && w.Agent == c.Agent }
	}
	return func(memory.Identity) bool { return false }
}

// narrowing is the optional part of a query: kinds, key, ids and limit.
type narrowing struct {
	kinds []memory.Kind
	key   string
	ids   []string
	limit int
}

// String describes n for failure messages.
func (n narrowing) String() string {
	return fmt.Sprintf("kinds=%q key=%q ids=%q limit=%d", n.kinds, n.key, n.ids, n.limit)
}

// admits is the reference statement of narrowing.
func (n narrowing) admits(r memory.Record) bool {
	if len(n.kinds) > 0 && !slices.Contains(n.kinds, r.Kind) {
		return false
	}
	if n.key != "" && r.Key != n.key {
		return false
	}
	if len(n.ids) > 0 && !slices.Contains(n.ids, r.ID) {
		return false
	}
	return true
}

// model is the reference store: every record by id, and the same records
// in List order.
type model struct {
	recs   map[string]memory.Record
	sorted []memory.Record
}

func newModel(recs []memory.Record) *model {
	m := &model{recs: make(map[string]memory.Record, len(recs))}
	for _, r := range recs {
		m.recs[r.ID] = r
	}
	m.resort()
	return m
}

func (m *model) resort() {
	m.sorted = m.sorted[:0]
	for _, r := range m.recs {
		m.sorted = append(m.sorted, r)
	}
	sortNewest(m.sorted)
}

// list returns what List must return: records in scope, admitted by n and
// unexpired at now, newest first, at most n.limit of them.
func (m *model) list(scope func(memory.Identity) bool, n narrowing, now time.Time) []memory.Record {
	var out []memory.Record
	for i := range m.sorted {
		r := &m.sorted[i]
		if scope(r.Identity) && n.admits(*r) && (r.Expires.IsZero() || r.Expires.After(now)) {
			out = append(out, *r)
			if n.limit > 0 && len(out) == n.limit {
				break
			}
		}
	}
	return out
}

// remove deletes what Delete must delete (expired or not, no limit) and
// returns how many that is.
func (m *model) remove(scope func(memory.Identity) bool, n narrowing) int64 {
	var count int64
	for id, r := range m.recs {
		if scope(r.Identity) && n.admits(r) {
			delete(m.recs, id)
			count++
		}
	}
	m.resort()
	return count
}

// randomNarrowing returns a random narrowing for a query whose unnarrowed
// result is inScope; ids also name records outside the scope and ids that
// do not exist, which must never be returned.
func randomNarrowing(rng *rand.Rand, inScope, all []memory.Record) narrowing {
	var n narrowing
	parts := 1 + rng.IntN(2)
	for range parts {
		switch rng.IntN(4) {
		case 0:
			k := slices.Clone(memory.Kinds)
			rng.Shuffle(len(k), func(i, j int) { k[i], k[j] = k[j], k[i] })
			n.kinds = k[:1+rng.IntN(len(k)-1)]
		case 1:
			n.key = pick(rng, append(slices.Clone(keyPool[3:]), "no-such-key"))
		case 2:
			for range rng.IntN(4) {
				if len(inScope) > 0 {
					n.ids = append(n.ids, pick(rng, inScope).ID)
				}
			}
			for range 1 + rng.IntN(3) {
				n.ids = append(n.ids, pick(rng, all).ID)
			}
			n.ids = append(n.ids, "no-such-id")
		case 3:
			n.limit = 1 + rng.IntN(len(inScope)+1)
		}
	}
	return n
}
