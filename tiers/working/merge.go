package working

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync/atomic"

	"github.com/agentmem/memory"
)

// MergeRule combines a platform default payload with a tenant's override
// of it, as LoadMerged reads them. Both arguments are valid JSON; the
// result must be too. Shapes a rule cannot combine (an array where it
// needs an object, say) are memory.ErrInvalidArgument. Rules must be safe
// for concurrent use and must not modify their arguments. The built-in
// rules copy the values they keep as their text, white space inside them
// included, and never reformat numbers.
type MergeRule func(defaults, override json.RawMessage) (json.RawMessage, error)

var (
	_ MergeRule = Replace
	_ MergeRule = ShallowMerge
	_ MergeRule = DeepMerge
)

// Replace is the rule that keeps the override whole and ignores the
// defaults: a tenant's row replaces the platform's. It is the rule of
// every key without a registered one.
func Replace(defaults, override json.RawMessage) (json.RawMessage, error) {
	if err := checkValid("the defaults", defaults); err != nil {
		return nil, err
	}
	if err := checkValid("the override", override); err != nil {
		return nil, err
	}
	return slices.Clone(override), nil
}

// ShallowMerge is the rule for two JSON objects: each top-level member of
// the override replaces the default member of the same name, in the
// defaults' position; members only the override has follow, in its order.
// Anything but two objects is memory.ErrInvalidArgument.
func ShallowMerge(defaults, override json.RawMessage) (json.RawMessage, error) {
	dm, om, err := twoObjects("shallow merge", defaults, override)
	if err != nil {
		return nil, err
	}
	overlay(dm, om)
	return writeObject(dm), nil
}

// overlay sets om's members in dm, replacing or following its own.
func overlay(dm, om *object) {
	for _, m := range om.ms {
		dm.set(m.name, m.value)
	}
}

// DeepMerge is the rule that merges objects recursively: where both sides
// hold an object under a name, the two are deep-merged; anything else in
// the override (an array, a string, a number, true, false, null) replaces
// the default value; members only the defaults have stay. When either
// whole payload is not an object, the override replaces the defaults.
func DeepMerge(defaults, override json.RawMessage) (json.RawMessage, error) {
	if valueKind(defaults) != '{' || valueKind(override) != '{' {
		if err := checkValid("the defaults", defaults); err != nil {
			return nil, err
		}
		if err := checkValid("the override", override); err != nil {
			return nil, err
		}
		return bytes.Clone(bytes.TrimSpace(override)), nil
	}
	dm, om, err := parseBoth(defaults, override)
	if err != nil {
		return nil, err
	}
	return deepMerge(dm, om)
}

// deepMerge merges the parsed objects om into dm, whose values the
// decoder has checked.
func deepMerge(dm, om *object) (json.RawMessage, error) {
	for _, m := range om.ms {
		i := dm.find(m.name)
		if i < 0 {
			dm.set(m.name, m.value)
			continue
		}
		if valueKind(dm.ms[i].value) != '{' || valueKind(m.value) != '{' {
			dm.ms[i].value = m.value
			continue
		}
		dv, ov, err := parseBoth(dm.ms[i].value, m.value)
		if err != nil {
			return nil, err
		}
		v, err := deepMerge(dv, ov)
		if err != nil {
			return nil, err
		}
		dm.ms[i].value = v
	}
	return writeObject(dm), nil
}

// MergeListByID returns the rule for two JSON arrays of objects that each
// carry a string or number under idField: an override item whose id a
// default item has replaces that item in its place; the override's other
// items follow the defaults, in the override's order. This is how a tenant
// adds one live-chat vendor and overrides another without touching the
// rest of the platform's list. Anything but two arrays, an item that is not
// an object or lacks a string or number id, and an id given twice in one
// list are memory.ErrInvalidArgument.
func MergeListByID(idField string) MergeRule {
	// The defaults are the platform's one list, merged with every tenant's
	// override: the rule keeps the last defaults it parsed, and parses
	// them again only when their text changes.
	var last atomic.Pointer[itemList]
	return func(defaults, override json.RawMessage) (json.RawMessage, error) {
		if idField == "" {
			return nil, memory.Errorf(memory.ErrInvalidArgument, "list merge needs an id field")
		}
		dl := last.Load()
		if dl == nil || !bytes.Equal(dl.text, defaults) {
			items, err := itemsByID("defaults", idField, defaults)
			if err != nil {
				return nil, err
			}
			dl = &itemList{text: bytes.Clone(defaults), items: items, pos: make(map[string]int, len(items))}
			for i, it := range items {
				dl.pos[it.id] = i
			}
			last.Store(dl)
		}
		ol, err := itemsByID("override", idField, override)
		if err != nil {
			return nil, err
		}
		out := make([]json.RawMessage, len(dl.items), len(dl.items)+len(ol))
		for i, it := range dl.items {
			out[i] = it.raw
		}
		for _, it := range ol {
			if i, ok := dl.pos[it.id]; ok {
				out[i] = it.raw
			} else {
				out = append(out, it.raw)
			}
		}
		return writeArray(out), nil
	}
}

// itemList is a parsed list merged by id: its text, its items, and each
// item's position by id. It is not modified once built.
type itemList struct {
	text  []byte
	items []item
	pos   map[string]int
}

// item is one element of a list merged by id.
type item struct {
	id  string // the id's kind and value: "s" or "n", then the text
	raw json.RawMessage
}

// itemsByID parses a list merged by idField and checks every item has a
// distinct id. side names the list in errors.
func itemsByID(side, idField string, list json.RawMessage) ([]item, error) {
	if valueKind(list) != '[' {
		if err := checkValid("the "+side, list); err != nil {
			return nil, err
		}
		return nil, memory.Errorf(memory.ErrInvalidArgument, "list merge by %q: the %s are %s, not an array", idField, side, describe(list))
	}
	// Unmarshal checks the whole list is valid JSON before it splits it;
	// into raw elements, its only error is that.
	var elems []json.RawMessage
	if err := json.Unmarshal(list, &elems); err != nil {
		return nil, notValid("the " + side)
	}
	out := make([]item, len(elems))
	seen := make(map[string]bool, len(elems))
	for i, e := range elems {
		if valueKind(e) != '{' {
			return nil, memory.Errorf(memory.ErrInvalidArgument, "list merge by %q: item %d of the %s is %s, not an object", idField, i, side, describe(e))
		}
		var members map[string]json.RawMessage // a name given twice keeps its last value
		if err := json.Unmarshal(e, &members); err != nil {
			return nil, notValid("the " + side)
		}
		v, found := members[idField]
		if !found {
			return nil, memory.Errorf(memory.ErrInvalidArgument, "list merge by %q: item %d of the %s has no %q", idField, i, side, idField)
		}
		id, err := idOf(v)
		if err != nil {
			return nil, memory.Errorf(memory.ErrInvalidArgument, "list merge by %q: item %d of the %s: %v", idField, i, side, err)
		}
		if seen[id] {
			return nil, memory.Errorf(memory.ErrInvalidArgument, "list merge by %q: the %s hold id %s twice", idField, side, id[1:])
		}
		seen[id] = true
		out[i] = item{id: id, raw: e}
	}
	return out, nil
}

// idOf returns the comparable form of an id value: "s" and the decoded
// string, or "n" and the number's text.
func idOf(v json.RawMessage) (string, error) {
	switch k := valueKind(v); {
	case k == '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", err
		}
		return "s" + s, nil
	case k == '-' || k >= '0' && k <= '9':
		return "n" + string(bytes.TrimSpace(v)), nil
	}
	return "", errors.New("the id is " + describe(v) + ", not a string or a number")
}

// MergeAt returns the rule for two JSON objects that merges the member
// named field with rule and every other top-level member as ShallowMerge
// does. When only one side has field, its value is kept as is. For a
// payload such as {"vendors": [...]}, MergeAt("vendors",
// MergeListByID("id")) merges the vendor lists by id. Anything but two
// objects is memory.ErrInvalidArgument, as are rule's errors, which name
// the field.
func MergeAt(field string, rule MergeRule) MergeRule {
	return func(defaults, override json.RawMessage) (json.RawMessage, error) {
		if rule == nil {
			return nil, memory.Errorf(memory.ErrInvalidArgument, "merge at %q needs a rule", field)
		}
		dm, om, err := twoObjects("merge at "+field, defaults, override)
		if err != nil {
			return nil, err
		}
		di, oi := dm.find(field), om.find(field)
		var merged json.RawMessage
		if di >= 0 && oi >= 0 {
			merged, err = rule(dm.ms[di].value, om.ms[oi].value)
			if err != nil {
				return nil, inField(field, err)
			}
			if !json.Valid(merged) {
				return nil, memory.Errorf(memory.ErrInvalidArgument, "field %s: the rule's result is not valid JSON", quote(field))
			}
		}
		overlay(dm, om)
		if merged != nil {
			dm.ms[di].value = merged
		}
		return writeObject(dm), nil
	}
}

// twoObjects parses both sides of a merge that needs two objects.
func twoObjects(what string, defaults, override json.RawMessage) (dm, om *object, err error) {
	dm, om, err = parseBoth(defaults, override)
	if err != nil {
		return nil, nil, err
	}
	if dm == nil {
		return nil, nil, memory.Errorf(memory.ErrInvalidArgument, "%s: the defaults are %s, not an object", what, describe(defaults))
	}
	if om == nil {
		return nil, nil, memory.Errorf(memory.ErrInvalidArgument, "%s: the override is %s, not an object", what, describe(override))
	}
	return dm, om, nil
}

// parseBoth checks both sides of a merge are valid JSON, the defaults
// first, and parses each that is an object; the other is nil.
func parseBoth(defaults, override json.RawMessage) (dm, om *object, err error) {
	if dm, err = parseSide("the defaults", defaults); err != nil {
		return nil, nil, err
	}
	if om, err = parseSide("the override", override); err != nil {
		return nil, nil, err
	}
	return dm, om, nil
}

// parseSide checks b, a side of a merge that what names, is valid JSON,
// and parses it when it is an object; otherwise the object is nil.
func parseSide(what string, b json.RawMessage) (*object, error) {
	o, ok, err := parseObject(b)
	if err != nil {
		return nil, notValid(what)
	}
	if !ok {
		return nil, checkValid(what, b)
	}
	return o, nil
}

// describe names the kind of a JSON value for error messages.
func describe(v json.RawMessage) string {
	switch k := valueKind(v); {
	case k == '{':
		return "an object"
	case k == '[':
		return "an array"
	case k == '"':
		return "a string"
	case k == 't' || k == 'f':
		return "a boolean"
	case k == 'n':
		return "null"
	case k == 0:
		return "empty"
	}
	return "a number"
}

// inField prefixes a classified error's message with the field it
// concerns; other errors pass through.
func inField(field string, err error) error {
	var e *memory.Error
	if errors.As(err, &e) {
		return &memory.Error{Kind: e.Kind, Msg: "field " + quote(field) + ": " + e.Msg, Err: e.Err}
	}
	return err
}

func quote(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return string(b)
}

// RegisterMerge sets the rule LoadMerged combines key's platform defaults
// and tenant override with, replacing any rule registered before; a nil
// rule restores the default, Replace. Agents register a rule per key they
// read, as the shape of each key's data decides how it combines.
func (w *Memory) RegisterMerge(key string, rule MergeRule) {
	w.mergeMu.Lock()
	defer w.mergeMu.Unlock()
	if rule == nil {
		delete(w.merges, key)
		return
	}
	w.merges[key] = rule
}

// mergeRule returns key's rule: the registered one, or Replace.
func (w *Memory) mergeRule(key string) MergeRule {
	w.mergeMu.RLock()
	defer w.mergeMu.RUnlock()
	if r, ok := w.merges[key]; ok {
		return r
	}
	return Replace
}

// Merged is a payload read through LoadMerged, with the rows it came from
// so callers can say where each part came from.
type Merged struct {
	// Key is the memory_key read.
	Key string
	// JSON is the merged payload: the rule's result when both rows exist,
	// otherwise the one row's payload as stored.
	JSON json.RawMessage
	// Defaults is the platform row (the system tenant's), nil when there
	// is none.
	Defaults *Document
	// Override is the caller's tenant's row, nil when there is none.
	Override *Document
}

// LoadMerged reads key at the AGENT level for id's agent twice — the
// platform defaults, stored under the store's system tenant (see
// PutDefault), and the override stored under id's own tenant — and
// combines them with the rule registered for key
// (RegisterMerge; Replace when none). With one of the two rows it returns
// that row's payload unchanged; with neither, memory.ErrNotFound. A rule's
// error is returned classified as it was (memory.ErrInvalidArgument when
// it was not), naming the key.
//
// This is the one read that crosses tenants, and it does so only here, by
// name: it reads the system tenant's AGENT row of id's agent and key, and
// never another tenant's rows. id must have an agent
// (memory.ErrIncompleteScope).
func (w *Memory) LoadMerged(ctx context.Context, id memory.Identity, key string) (Merged, error) {
	if err := ctx.Err(); err != nil {
		return Merged{}, err
	}
	if err := checkKey(key); err != nil {
		return Merged{}, err
	}
	own, err := w.exact(w.store, id, memory.LevelParentAgent, key)
	if err != nil {
		return Merged{}, err
	}
	sys, err := w.exact(w.store.Platform(), w.platformID(id.Agent), memory.LevelParentAgent, key)
	if err != nil {
		return Merged{}, err
	}
	// Two lookups by id: the filter of one read has one tenant. (Running
	// them concurrently measured slower on SQLite than one after the other.)
	out := Merged{Key: key}
	if d, found, err := w.get(ctx, sys); err != nil {
		return Merged{}, err
	} else if found {
		out.Defaults = &d
	}
	if o, found, err := w.get(ctx, own); err != nil {
		return Merged{}, err
	} else if found {
		out.Override = &o
	}
	switch {
	case out.Defaults == nil && out.Override == nil:
		return Merged{}, memory.Errorf(memory.ErrNotFound, "no AGENT document %q for agent %q, neither platform defaults nor the tenant's", key, id.Agent)
	case out.Override == nil:
		out.JSON = out.Defaults.JSON
	case out.Defaults == nil:
		out.JSON = out.Override.JSON
	default:
		v, err := w.mergeRule(key)(out.Defaults.JSON, out.Override.JSON)
		if err != nil {
			return Merged{}, inKey(key, err)
		}
		if !json.Valid(v) {
			return Merged{}, memory.Errorf(memory.ErrInvalidArgument, "merging key %q: the rule's result is not valid JSON", key)
		}
		out.JSON = v
	}
	return out, nil
}

// inKey names the key a merge failed for in a classified error; a rule's
// unclassified error becomes memory.ErrInvalidArgument wrapping it.
func inKey(key string, err error) error {
	var e *memory.Error
	if errors.As(err, &e) {
		return &memory.Error{Kind: e.Kind, Msg: "merging key " + quote(key) + ": " + e.Msg, Err: e.Err}
	}
	return memory.Wrap(memory.ErrInvalidArgument, err, "merging key "+quote(key))
}
