package working

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
)

// DefaultMemoryType is the memory_type a document gets when it is written
// without one.
const DefaultMemoryType = "working"

// Levels are the six scope levels of keyed working memory, in the
// document's order. A Memory stores rows at these levels only.
var Levels = []memory.Level{
	memory.LevelSquadAgentRun, memory.LevelSquadAgent, memory.LevelAgentRun,
	memory.LevelSquadRun, memory.LevelSquad, memory.LevelParentAgent,
}

// Options configure a Memory. The zero value is the documented
// default: Update (and Put) retrying lost races until the context ends.
// The platform defaults live under the store's system tenant
// (backend.StoreOptions.SystemTenant).
type Options struct {
	// MaxUpdateAttempts bounds how many times Update (and Put) reads,
	// applies its function and tries to swap before it gives up with
	// memory.ErrConflict. Zero means no bound: retries go on until the
	// context ends. Negative is invalid.
	MaxUpdateAttempts int
}

// Document is one row of keyed working memory.
type Document struct {
	// Level is the scope the row is stored at; empty means
	// memory.LevelSquadAgentRun on input.
	Level memory.Level
	// Key is memory_key: what the row holds, unique within its scope.
	Key string
	// Type is memory_type, a label grouping related rows (for example
	// "working", "domain", "organization"); it does not define the
	// payload's shape. Empty means DefaultMemoryType on input.
	Type string
	// JSON is memory_json: any valid JSON value, at most
	// memory.MaxDocumentBytes, stored byte for byte as given.
	JSON json.RawMessage
	// Scope is the keyed identity the row is stored under: the tenant and
	// the fields Level keeps (memory.Level.Keyed); every other field is
	// empty. It is ignored on input, where the caller's identity decides it.
	Scope memory.Identity
	// Version counts the writes of the row (memory.Record.Version): the
	// version to pass to Swap as the one last read. It is ignored on
	// input. Put, Swap and Update return the version they stored — on a
	// driver without compare-and-swap, where there is no Swap to pass it
	// to, Put returns zero.
	Version int64
	// Updated is when the row was last written.
	Updated time.Time
}

// Memory is keyed JSON working memory: rows of memory_key, memory_type
// and a JSON payload (memory_json), each stored at one of the six scope
// levels of Levels, through a *backend.Store.
//
// A row's scope is the caller's identity reduced to what its level keeps
// (memory.Level.Keyed): squad-scoped rows by tenant agent instance
// (Identity.Instance), squad and run (Identity.Session) where the level
// has them; AGENT rows by the parent agent (Identity.Agent) with instance,
// squad and run empty. User is never part of a row's scope. A row is a
// memory.KindDocument record whose id derives from its scope and key
// (memory.NewDocument), so Get is one lookup by id and a second Put of the
// same key in the same scope replaces the first.
//
// Reads match a row's whole stored identity exactly: a SQUAD_AGENT read
// never returns a SQUAD_AGENT_RUN row of the same key. ListSquad lists the
// rows of the squad-scoped levels; AGENT rows have no squad, so squad
// listings never return them, and List refuses the AGENT level: AGENT rows
// are loaded only explicitly, by key (Get, LoadMerged).
//
// Every call that names a level takes the empty level to mean
// memory.LevelSquadAgentRun, the document's default scope.
//
// A Memory is safe for concurrent use.
type Memory struct {
	store    *backend.Store
	attempts int

	mergeMu sync.RWMutex
	merges  map[string]MergeRule

	locks   [lockStripes]chan struct{}
	updates atomic.Int64
	retries atomic.Int64
}

// New returns a Memory storing through store. It fails with
// memory.ErrInvalidArgument for a nil store, a negative MaxUpdateAttempts
// or a store whose system tenant is not a valid identity value.
func New(store *backend.Store, opt Options) (*Memory, error) {
	if store == nil {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "working memory needs a store")
	}
	if opt.MaxUpdateAttempts < 0 {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "working MaxUpdateAttempts is %d; it cannot be negative", opt.MaxUpdateAttempts)
	}
	if err := (memory.Identity{Tenant: store.SystemTenant()}).Validate(); err != nil {
		return nil, err
	}
	w := &Memory{store: store, attempts: opt.MaxUpdateAttempts, merges: map[string]MergeRule{}}
	for i := range w.locks {
		w.locks[i] = make(chan struct{}, 1)
	}
	return w, nil
}

// SystemTenant returns the tenant whose AGENT rows are the platform
// defaults: the store's system tenant, which no caller's identity may
// carry.
func (w *Memory) SystemTenant() string { return w.store.SystemTenant() }

// Put stores doc at doc.Level (empty: memory.LevelSquadAgentRun) in id's
// scope, replacing any row with the same key there, and returns the row as
// stored, with its new Version. The key, type and JSON are checked first
// (see CheckDocument), then the level's identity fields: a level whose
// fields id lacks is memory.ErrIncompleteScope. Nothing is stored on any
// error.
//
// On a driver with compare-and-swap (driver.Swapper) Put reads the row's
// version and swaps the document in, retrying a lost race as Update does,
// so the version it returns is the one it stored; elsewhere it writes
// blindly and returns Version zero.
func (w *Memory) Put(ctx context.Context, id memory.Identity, doc Document) (Document, error) {
	return w.put(ctx, w.store, id, doc)
}

// put is Put through st: the store, or its platform view.
func (w *Memory) put(ctx context.Context, st *backend.Store, id memory.Identity, doc Document) (Document, error) {
	if err := ctx.Err(); err != nil {
		return Document{}, err
	}
	rec, err := w.record(st, id, doc)
	if err != nil {
		return Document{}, err
	}
	if _, ok := st.Driver().(driver.Swapper); !ok {
		if err := st.Add(ctx, id, rec); err != nil {
			return Document{}, named(rec, err)
		}
		return toDocument(rec), nil
	}
	payload := doc.JSON
	return w.swapLoop(ctx, st, id, Document{Level: LevelOf(rec.Identity), Key: rec.Key, Type: rec.Label},
		func(Document, bool) (json.RawMessage, error) { return payload, nil })
}

// PutDefault stores doc as a platform default: the AGENT row of agent
// under the system tenant, which LoadMerged merges with each tenant's
// override of the same key. doc.Level must be empty or AGENT. Writing
// platform defaults is administrative: the store's posture must have
// AllowPlatform (memory.Posture), or PutDefault is
// memory.ErrPermissionDenied and stores nothing. Tenants can never write
// them, since the system tenant is refused as a caller's tenant.
func (w *Memory) PutDefault(ctx context.Context, agent string, doc Document) (Document, error) {
	if doc.Level != "" && doc.Level != memory.LevelParentAgent {
		return Document{}, memory.Errorf(memory.ErrInvalidArgument, "platform defaults are AGENT rows, not %s rows", doc.Level)
	}
	doc.Level = memory.LevelParentAgent
	return w.put(ctx, w.store.Platform(), w.platformID(agent), doc)
}

// GetDefault returns the platform default stored under key for agent, or
// memory.ErrNotFound. Reading platform defaults needs no permission.
func (w *Memory) GetDefault(ctx context.Context, agent, key string) (Document, error) {
	return w.get1(ctx, w.store.Platform(), w.platformID(agent), memory.LevelParentAgent, key)
}

// DeleteDefault removes the platform default stored under key for agent
// and reports whether there was one. Like PutDefault it needs a posture
// with AllowPlatform.
func (w *Memory) DeleteDefault(ctx context.Context, agent, key string) (bool, error) {
	return w.delete(ctx, w.store.Platform(), w.platformID(agent), memory.LevelParentAgent, key)
}

// platformID is the identity platform defaults of agent are stored under.
func (w *Memory) platformID(agent string) memory.Identity {
	return memory.Identity{Tenant: w.store.SystemTenant(), Agent: agent}
}

// Get returns the row stored under key at level in id's scope, or
// memory.ErrNotFound.
func (w *Memory) Get(ctx context.Context, id memory.Identity, level memory.Level, key string) (Document, error) {
	return w.get1(ctx, w.store, id, level, key)
}

// get1 is Get through st: the store, or its platform view.
func (w *Memory) get1(ctx context.Context, st *backend.Store, id memory.Identity, level memory.Level, key string) (Document, error) {
	if err := ctx.Err(); err != nil {
		return Document{}, err
	}
	if err := checkKey(key); err != nil {
		return Document{}, err
	}
	dq, err := w.exact(st, id, level, key)
	if err != nil {
		return Document{}, err
	}
	doc, found, err := w.get(ctx, dq)
	if err != nil {
		return Document{}, err
	}
	if !found {
		return Document{}, memory.Errorf(memory.ErrNotFound, "no %s document %q in this scope", cmp.Or(level, memory.LevelSquadAgentRun), key)
	}
	return doc, nil
}

// get runs an exact query and returns its row, if any.
func (w *Memory) get(ctx context.Context, dq driver.Query) (Document, bool, error) {
	recs, err := w.store.Driver().List(ctx, dq)
	if err != nil || len(recs) == 0 {
		return Document{}, false, err
	}
	return toDocument(recs[0]), true, nil
}

// List returns the rows stored at exactly level in id's scope, newest
// first, only those of memoryType unless it is empty. The AGENT level is
// memory.ErrInvalidArgument: its rows are loaded only by key (Get,
// LoadMerged).
func (w *Memory) List(ctx context.Context, id memory.Identity, level memory.Level, memoryType string) ([]Document, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if level == memory.LevelParentAgent {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "AGENT rows are not listed; load them by key with Get or LoadMerged")
	}
	dq, err := w.exact(w.store, id, level, "")
	if err != nil {
		return nil, err
	}
	recs, err := w.store.Driver().List(ctx, dq)
	if err != nil {
		return nil, err
	}
	return documents(recs, memoryType, func(memory.Level) bool { return true }), nil
}

// ListSquad returns every squad-scoped row of id's squad — the levels
// SQUAD_AGENT_RUN, SQUAD_AGENT, SQUAD_RUN and SQUAD, of any instance and
// any run of the squad — newest first, only those of memoryType unless it
// is empty. AGENT rows, which have no squad, are never among them, nor
// AGENT_RUN rows. id must have a squad (memory.ErrIncompleteScope).
func (w *Memory) ListSquad(ctx context.Context, id memory.Identity, memoryType string) ([]Document, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dq, err := w.store.Query(id, memory.Query{Level: memory.LevelSquad, Kinds: documentKind})
	if err != nil {
		return nil, err
	}
	recs, err := w.store.Driver().List(ctx, dq)
	if err != nil {
		return nil, err
	}
	return documents(recs, memoryType, func(l memory.Level) bool {
		return l != memory.LevelParentAgent && l != memory.LevelAgentRun
	}), nil
}

// Delete removes the row stored under key at level in id's scope and
// reports whether there was one.
func (w *Memory) Delete(ctx context.Context, id memory.Identity, level memory.Level, key string) (bool, error) {
	return w.delete(ctx, w.store, id, level, key)
}

// delete is Delete through st: the store, or its platform view.
func (w *Memory) delete(ctx context.Context, st *backend.Store, id memory.Identity, level memory.Level, key string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := checkKey(key); err != nil {
		return false, err
	}
	dq, err := w.exact(st, id, level, key)
	if err != nil {
		return false, err
	}
	n, err := st.DeleteQuery(ctx, dq)
	return n > 0, err
}

var documentKind = []memory.Kind{memory.KindDocument}

// documents converts records to Documents, keeping those stored at a
// working level keep accepts and of memoryType (any when empty).
func documents(recs []memory.Record, memoryType string, keep func(memory.Level) bool) []Document {
	out := make([]Document, 0, len(recs))
	for _, r := range recs {
		d := toDocument(r)
		if d.Level == "" || !keep(d.Level) || memoryType != "" && d.Type != memoryType {
			continue
		}
		out = append(out, d)
	}
	return out
}

// exact derives the driver query, through st, for id's rows at level —
// and, when key is not empty, the one row under key (callers reading one
// row check the key is not empty first). The store derives the level's
// filter (checking the tenant, the posture and the identity); exact then
// narrows it to the row's whole keyed identity, fields the level does not
// keep matching only empty values, so no row of another level or
// attribution can match.
func (w *Memory) exact(st *backend.Store, id memory.Identity, level memory.Level, key string) (driver.Query, error) {
	if level == "" {
		level = memory.LevelSquadAgentRun
	}
	if err := checkLevel(level); err != nil {
		return driver.Query{}, err
	}
	if key != "" {
		if err := checkKey(key); err != nil {
			return driver.Query{}, err
		}
	}
	dq, err := st.Query(id, memory.Query{Level: level, Kinds: documentKind, Key: key})
	if err != nil {
		return driver.Query{}, err
	}
	scope := id.Only(level.Keyed())
	if !dq.Filter.Matches(scope) {
		// Cannot happen: the keyed identity holds every field the level's
		// filter matches. Refuse rather than widen.
		return driver.Query{}, memory.Errorf(memory.ErrPermissionDenied, "the %s scope is outside the caller's filter", level)
	}
	dq.Filter = memory.Filter{Match: memory.AllFields, Identity: scope}
	if key != "" {
		dq.IDs = []string{memory.ContentID(memory.KindDocument, scope, key)}
	}
	return dq, nil
}

// record validates doc for id writing through st and returns the record
// that stores it.
func (w *Memory) record(st *backend.Store, id memory.Identity, doc Document) (memory.Record, error) {
	if doc.Level == "" {
		doc.Level = memory.LevelSquadAgentRun
	}
	if doc.Type == "" {
		doc.Type = DefaultMemoryType
	}
	if err := CheckDocument(doc); err != nil {
		return memory.Record{}, err
	}
	if _, err := st.Query(id, memory.Query{Level: doc.Level}); err != nil {
		return memory.Record{}, err
	}
	scope := id.Only(doc.Level.Keyed())
	return memory.NewDocument(scope, doc.Key, doc.Type, string(doc.JSON), st.Now()), nil
}

// CheckDocument validates what a write stores of doc: Level is one of
// Levels; Key is not empty, at most memory.MaxKeyBytes of valid
// UTF-8 without NUL or control characters; Type is at most
// memory.MaxLabelBytes of the same; JSON passes memory.CheckJSON. It
// reports memory.ErrInvalidArgument, or memory.ErrTooLarge for a limit.
// Put, Swap and Update apply it (after filling in the defaults of Level
// and Type) before touching storage.
func CheckDocument(doc Document) error {
	if err := checkLevel(doc.Level); err != nil {
		return err
	}
	if err := checkKey(doc.Key); err != nil {
		return err
	}
	if err := checkLabel("memory_type", doc.Type, memory.MaxLabelBytes); err != nil {
		return err
	}
	if err := memory.CheckJSON(string(doc.JSON)); err != nil {
		e := err.(*memory.Error)
		return memory.Errorf(e.Kind, "document %q: %s", doc.Key, e.Msg)
	}
	return nil
}

func checkLevel(l memory.Level) error {
	for _, w := range Levels {
		if l == w {
			return nil
		}
	}
	if err := l.Check(); err != nil {
		return err
	}
	return memory.Errorf(memory.ErrInvalidArgument, "level %q is not a working-memory level (SQUAD_AGENT_RUN, SQUAD_AGENT, AGENT_RUN, SQUAD_RUN, SQUAD, AGENT)", string(l))
}

func checkKey(key string) error {
	if key == "" {
		return memory.Errorf(memory.ErrInvalidArgument, "memory_key is empty")
	}
	return checkLabel("memory_key", key, memory.MaxKeyBytes)
}

func checkLabel(what, v string, limit int) error {
	switch {
	case len(v) > limit:
		return memory.Errorf(memory.ErrTooLarge, "%s is %d bytes, the limit is %d", what, len(v), limit)
	case !utf8.ValidString(v):
		return memory.Errorf(memory.ErrInvalidArgument, "%s is not valid UTF-8", what)
	case strings.ContainsFunc(v, unicode.IsControl):
		return memory.Errorf(memory.ErrInvalidArgument, "%s %q contains a control character", what, v)
	}
	return nil
}

// toDocument converts a stored record.
func toDocument(r memory.Record) Document {
	return Document{
		Level:   LevelOf(r.Identity),
		Key:     r.Key,
		Type:    r.Label,
		JSON:    json.RawMessage(r.Content),
		Scope:   r.Identity,
		Version: r.Version,
		Updated: r.Created,
	}
}

// LevelOf returns the working level a row stored under scope belongs to:
// the level whose kept fields (memory.Level.Keyed) are exactly the fields
// scope has, tenant aside (memory.KeyedLevel). It returns "" when no level
// keeps exactly those fields (a record written with a user, say, is no
// working-memory row).
func LevelOf(scope memory.Identity) memory.Level { return memory.KeyedLevel(scope) }

// named restates a write's refusal of rec in the terms of working memory
// — its level and key — rather than the record id the store derived: a
// lost race (memory.ErrConflict) and an id held by another identity of
// the tenant (memory.ErrPermissionDenied). Other errors pass unchanged.
func named(rec memory.Record, err error) error {
	what := string(LevelOf(rec.Identity)) + " document " + quote(rec.Key)
	switch {
	case errors.Is(err, memory.ErrConflict):
		return memory.Errorf(memory.ErrConflict, "%s was written by someone else since it was read", what)
	case errors.Is(err, driver.ErrIDHeld):
		return memory.Errorf(memory.ErrPermissionDenied, "%s cannot be written in this scope: another identity of the tenant holds its record id", what)
	}
	return err
}
