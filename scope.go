package memory

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxIdentityFieldBytes is the longest value, in bytes, any Identity field
// may hold. It fits a Kubernetes-style agent identity such as
// kaos://agent/<namespace>/<name> with room to spare.
const MaxIdentityFieldBytes = 512

// Identity is who is acting. The host program sets it from verified
// credentials — never from a model's or a tool's arguments. An empty field
// means "not known"; every write records the whole identity (compound
// attribution), and reads select which fields must match through a Level.
type Identity struct {
	// Tenant is the customer the data belongs to. It is always matched
	// exactly; the empty tenant is a namespace of its own, so single-tenant
	// programs can leave it empty.
	Tenant string
	// User is the verified principal (user_id).
	User string
	// Agent is the agent type, e.g. kaos://agent/<ns>/<name> (agent_id). For
	// keyed working memory it is the parent agent definition's id.
	Agent string
	// Instance is the tenant agent instance (tenant_agent_id).
	Instance string
	// Squad is the squad the agent runs in (squad_id).
	Squad string
	// Session is the conversation or run (kaos_run, run_id).
	Session string
}

// Field names one Identity field; Fields combine as a bit set.
type Field uint8

// The identity fields a Filter can match on.
const (
	FieldTenant Field = 1 << iota
	FieldUser
	FieldAgent
	FieldInstance
	FieldSquad
	FieldSession
)

// AllFields is every identity field.
const AllFields = FieldTenant | FieldUser | FieldAgent | FieldInstance | FieldSquad | FieldSession

var fieldNames = [...]struct {
	f    Field
	name string
}{
	{FieldTenant, "tenant"},
	{FieldUser, "user"},
	{FieldAgent, "agent"},
	{FieldInstance, "instance"},
	{FieldSquad, "squad"},
	{FieldSession, "session"},
}

// Has reports whether every field in g is in f.
func (f Field) Has(g Field) bool { return f&g == g }

// String lists the fields in f, joined by "+".
func (f Field) String() string {
	var parts []string
	for _, n := range fieldNames {
		if f.Has(n.f) {
			parts = append(parts, n.name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "+")
}

// Get returns the value of one field of id. f must be a single field.
func (id Identity) Get(f Field) string {
	switch f {
	case FieldTenant:
		return id.Tenant
	case FieldUser:
		return id.User
	case FieldAgent:
		return id.Agent
	case FieldInstance:
		return id.Instance
	case FieldSquad:
		return id.Squad
	case FieldSession:
		return id.Session
	}
	return ""
}

// With returns a copy of id with field f set to v. f must be a single
// field; any other value returns id unchanged.
func (id Identity) With(f Field, v string) Identity {
	switch f {
	case FieldTenant:
		id.Tenant = v
	case FieldUser:
		id.User = v
	case FieldAgent:
		id.Agent = v
	case FieldInstance:
		id.Instance = v
	case FieldSquad:
		id.Squad = v
	case FieldSession:
		id.Session = v
	}
	return id
}

// Only returns a copy of id with every field outside f cleared.
func (id Identity) Only(f Field) Identity {
	var out Identity
	if f.Has(FieldTenant) {
		out.Tenant = id.Tenant
	}
	if f.Has(FieldUser) {
		out.User = id.User
	}
	if f.Has(FieldAgent) {
		out.Agent = id.Agent
	}
	if f.Has(FieldInstance) {
		out.Instance = id.Instance
	}
	if f.Has(FieldSquad) {
		out.Squad = id.Squad
	}
	if f.Has(FieldSession) {
		out.Session = id.Session
	}
	return out
}

// Validate checks every set field: valid UTF-8, no leading or trailing
// white space, no control characters, at most MaxIdentityFieldBytes bytes.
// Empty fields are allowed; levels decide which ones must be set.
func (id Identity) Validate() error {
	for _, n := range fieldNames {
		if err := validateIdentityField(n.name, id.Get(n.f)); err != nil {
			return err
		}
	}
	return nil
}

func validateIdentityField(name, v string) error {
	if v == "" {
		return nil
	}
	if plainASCII(v) && v[0] != ' ' && v[len(v)-1] != ' ' && len(v) <= MaxIdentityFieldBytes {
		return nil // the common case, decided without decoding runes
	}
	switch {
	case len(v) > MaxIdentityFieldBytes:
		return Errorf(ErrInvalidArgument, "identity %s is %d bytes, the limit is %d", name, len(v), MaxIdentityFieldBytes)
	case !utf8.ValidString(v):
		return Errorf(ErrInvalidArgument, "identity %s is not valid UTF-8", name)
	case strings.TrimSpace(v) != v:
		return Errorf(ErrInvalidArgument, "identity %s %q has leading or trailing white space", name, v)
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return Errorf(ErrInvalidArgument, "identity %s %q contains a control character", name, v)
		}
	}
	return nil
}

// plainASCII reports whether s is printable ASCII: no control characters,
// no bytes of multi-byte sequences.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// Level names the set of identity fields a read or an erasure must match.
// The first four come from the tiered memory service, the last six from
// keyed working memory; their string values are the ones those documents use.
type Level string

// The levels. Tenant participates in every one.
const (
	// LevelSession is one conversation: session, plus user when the caller
	// has one.
	LevelSession Level = "session"
	// LevelAgent is this agent's memory of the verified context: agent, plus
	// user when the caller has one (always, under RequirePrincipal).
	LevelAgent Level = "agent"
	// LevelUser is everything the user contributed through any agent or session.
	LevelUser Level = "user"
	// LevelStore is the whole store (within the tenant): administrative, and
	// refused unless the posture allows it.
	LevelStore Level = "store"

	// LevelSquadAgentRun is one run of one tenant agent instance in one squad.
	LevelSquadAgentRun Level = "SQUAD_AGENT_RUN"
	// LevelSquadAgent is one tenant agent instance in one squad, any run.
	LevelSquadAgent Level = "SQUAD_AGENT"
	// LevelAgentRun is one run of one tenant agent instance, any squad.
	LevelAgentRun Level = "AGENT_RUN"
	// LevelSquadRun is one run of one squad, any instance.
	LevelSquadRun Level = "SQUAD_RUN"
	// LevelSquad is one squad: any instance, any run.
	LevelSquad Level = "SQUAD"
	// LevelParentAgent is the parent agent definition, shared across all
	// squads and all instances of that agent type.
	LevelParentAgent Level = "AGENT"
)

// Levels lists every level, tiered ones first.
var Levels = []Level{
	LevelSession, LevelAgent, LevelUser, LevelStore,
	LevelSquadAgentRun, LevelSquadAgent, LevelAgentRun, LevelSquadRun, LevelSquad, LevelParentAgent,
}

// levelFields gives, per level, the fields that must be set (required) and
// the fields that join the filter when the caller has them (optional).
var levelFields = map[Level]struct{ required, optional Field }{
	LevelSession:       {FieldSession, FieldUser},
	LevelAgent:         {FieldAgent, FieldUser},
	LevelUser:          {FieldUser, 0},
	LevelStore:         {0, 0},
	LevelSquadAgentRun: {FieldInstance | FieldSquad | FieldSession, 0},
	LevelSquadAgent:    {FieldInstance | FieldSquad, 0},
	LevelAgentRun:      {FieldInstance | FieldSession, 0},
	LevelSquadRun:      {FieldSquad | FieldSession, 0},
	LevelSquad:         {FieldSquad, 0},
	LevelParentAgent:   {FieldAgent, 0},
}

// Valid reports whether l is one of the defined levels.
func (l Level) Valid() bool { _, ok := levelFields[l]; return ok }

// Check returns nil for a defined level and otherwise
// ErrInvalidArgument. A level that differs from defined ones only by case
// is refused all the same, with an error naming them: "agent" and "AGENT"
// are different levels (the tiered service's agent level and keyed working
// memory's parent agent), so no spelling is taken for another.
func (l Level) Check() error {
	if l.Valid() {
		return nil
	}
	var near []string
	for _, k := range Levels {
		if strings.EqualFold(string(k), string(l)) {
			near = append(near, strconv.Quote(string(k)))
		}
	}
	if len(near) > 0 {
		return Errorf(ErrInvalidArgument, "unknown level %q: levels are case-sensitive, and it differs only by case from %s", string(l), strings.Join(near, " and "))
	}
	return Errorf(ErrInvalidArgument, "unknown level %q", string(l))
}

// KeyedLevel returns the keyed working-memory level (one of
// SQUAD_AGENT_RUN, SQUAD_AGENT, AGENT_RUN, SQUAD_RUN, SQUAD, AGENT) whose
// kept fields (Level.Keyed) are exactly the fields scope has set, tenant
// aside, or "" when none keeps exactly those: a row stored under scope
// belongs to that level.
func KeyedLevel(scope Identity) Level {
	set := FieldTenant
	for _, n := range fieldNames[1:] {
		if scope.Get(n.f) != "" {
			set |= n.f
		}
	}
	for _, l := range keyedLevels {
		if l.Keyed() == set {
			return l
		}
	}
	return ""
}

// keyedLevels are the levels of keyed working memory.
var keyedLevels = []Level{LevelSquadAgentRun, LevelSquadAgent, LevelAgentRun, LevelSquadRun, LevelSquad, LevelParentAgent}

// Keyed returns the fields a row written at level l keeps; the others are
// stored empty (keyed working memory: an AGENT row has no instance, squad or
// run). Tenant is always kept.
func (l Level) Keyed() Field {
	lf := levelFields[l]
	return FieldTenant | lf.required | lf.optional
}

// Posture is the identity requirements of a deployment, fixed by the host
// program; agents cannot weaken it. The zero value requires nothing beyond
// each level's own fields and refuses the store level.
type Posture struct {
	// RequirePrincipal makes writes without a user fail closed, and binds
	// the user into session- and agent-level reads (MEMORY_REQUIRE_PRINCIPAL).
	RequirePrincipal bool
	// RequireAgentIdentity makes writes and non-administrative reads
	// without an agent fail closed (MEMORY_REQUIRE_AGENT_IDENTITY).
	RequireAgentIdentity bool
	// AllowStore permits the administrative store level.
	AllowStore bool
	// AllowPlatform permits writing platform data: the records of the
	// system tenant (backend.StoreOptions.SystemTenant), such as the
	// platform defaults keyed working memory merges with each tenant's
	// overrides. Every tenant reads them; only a store whose posture
	// allows it writes them, since the system tenant is refused as a
	// caller's tenant.
	AllowPlatform bool
}

// Filter is a derived read or erasure condition: a record matches when each
// field in Match equals the same field of Identity exactly (an empty value
// matches only an empty value). Filters are built by Posture.Filter; a
// driver never widens one.
type Filter struct {
	Match    Field
	Identity Identity
}

// Matches reports whether a record written by w passes the filter.
func (f Filter) Matches(w Identity) bool {
	for _, n := range fieldNames {
		if f.Match.Has(n.f) && f.Identity.Get(n.f) != w.Get(n.f) {
			return false
		}
	}
	return true
}

// Filter derives the condition for caller id reading or erasing at level l.
// It fails with ErrIncompleteScope when a field the level needs is empty,
// ErrPermissionDenied for the store level without AllowStore, and
// ErrInvalidArgument for an unknown level or a malformed identity — always
// before any storage is touched.
func (p Posture) Filter(id Identity, l Level) (Filter, error) {
	lf, ok := levelFields[l]
	if !ok {
		return Filter{}, l.Check()
	}
	if err := id.Validate(); err != nil {
		return Filter{}, err
	}
	if l == LevelStore {
		if !p.AllowStore {
			return Filter{}, Errorf(ErrPermissionDenied, "the store level is administrative and not allowed by this posture")
		}
		return Filter{Match: FieldTenant, Identity: id.Only(FieldTenant)}, nil
	}
	required := lf.required
	if p.RequirePrincipal && (l == LevelSession || l == LevelAgent) {
		required |= FieldUser
	}
	if p.RequireAgentIdentity {
		required |= FieldAgent
	}
	if err := requireFields(id, required, "level "+string(l)); err != nil {
		return Filter{}, err
	}
	match := FieldTenant | lf.required
	if p.RequirePrincipal && (l == LevelSession || l == LevelAgent) {
		match |= FieldUser
	}
	for _, n := range fieldNames {
		if lf.optional.Has(n.f) && id.Get(n.f) != "" {
			match |= n.f
		}
	}
	return Filter{Match: match, Identity: id.Only(match)}, nil
}

// CheckWrite validates the writer's identity against the posture: writes
// without a user fail under RequirePrincipal, writes without an agent under
// RequireAgentIdentity. A write needs at least one field besides tenant, so
// every record is reachable through some level.
func (p Posture) CheckWrite(id Identity) error {
	if err := id.Validate(); err != nil {
		return err
	}
	var required Field
	if p.RequirePrincipal {
		required |= FieldUser
	}
	if p.RequireAgentIdentity {
		required |= FieldAgent
	}
	if err := requireFields(id, required, "a write"); err != nil {
		return err
	}
	if id.Only(AllFields&^FieldTenant) == (Identity{}) {
		return Errorf(ErrIncompleteScope, "a write needs at least one of user, agent, instance, squad or session")
	}
	return nil
}

func requireFields(id Identity, required Field, what string) error {
	var missing Field
	for _, n := range fieldNames {
		if required.Has(n.f) && id.Get(n.f) == "" {
			missing |= n.f
		}
	}
	if missing != 0 {
		return Errorf(ErrIncompleteScope, "%s needs identity %s", what, missing)
	}
	return nil
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
