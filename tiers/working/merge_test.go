package working_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/tiers/working"
)

func TestMergeRules(t *testing.T) {
	vendors := working.MergeListByID("id")
	cases := []struct {
		name               string
		rule               working.MergeRule
		defaults, override string
		want               string // compact JSON, or "" when an error is wanted
		wantErr            string // part of the error message
	}{
		{"replace objects", working.Replace, `{"a":1,"b":2}`, `{"b":3}`, `{"b":3}`, ""},
		{"replace shapes", working.Replace, `[1]`, `"x"`, `"x"`, ""},
		{"replace invalid", working.Replace, `[1]`, `{`, "", "override is not valid JSON"},

		{"shallow", working.ShallowMerge, `{"a":1,"b":{"x":1,"y":2},"c":3}`, `{"b":{"x":9},"d":4}`, `{"a":1,"b":{"x":9},"c":3,"d":4}`, ""},
		{"shallow keeps numbers and HTML", working.ShallowMerge, `{"n":1.50,"h":"<b>&</b>"}`, `{"m":1e400}`, `{"n":1.50,"h":"<b>&</b>","m":1e400}`, ""},
		{"shallow null replaces", working.ShallowMerge, `{"a":1}`, `{"a":null}`, `{"a":null}`, ""},
		{"shallow duplicate names", working.ShallowMerge, `{"a":1,"a":2}`, `{}`, `{"a":2}`, ""},
		{"shallow array defaults", working.ShallowMerge, `[1]`, `{}`, "", "defaults are an array, not an object"},
		{"shallow string override", working.ShallowMerge, `{}`, `"x"`, "", "override is a string, not an object"},

		{"deep", working.DeepMerge, `{"a":{"x":1,"y":{"p":1,"q":2}},"b":[1,2]}`, `{"a":{"y":{"q":3,"r":4}},"b":[3]}`, `{"a":{"x":1,"y":{"p":1,"q":3,"r":4}},"b":[3]}`, ""},
		{"deep non-object replaces", working.DeepMerge, `{"a":{"x":1}}`, `{"a":"flat"}`, `{"a":"flat"}`, ""},
		{"deep object over scalar", working.DeepMerge, `{"a":1}`, `{"a":{"x":1}}`, `{"a":{"x":1}}`, ""},
		{"deep top-level array", working.DeepMerge, `{"a":1}`, ` [1, 2] `, `[1, 2]`, ""},

		{"list by id", vendors,
			`[{"id":"intercom","label":"Intercom"},{"id":"tidio","label":"Tidio"},{"id":"hubspot","label":"HubSpot"}]`,
			`[{"id":"zendesk","label":"Zendesk"},{"id":"tidio","label":"Tidio Chat","signals":["tidio-chat"]}]`,
			`[{"id":"intercom","label":"Intercom"},{"id":"tidio","label":"Tidio Chat","signals":["tidio-chat"]},{"id":"hubspot","label":"HubSpot"},{"id":"zendesk","label":"Zendesk"}]`, ""},
		{"list by numeric id", vendors, `[{"id":1},{"id":2}]`, `[{"id":2,"x":true}]`, `[{"id":1},{"id":2,"x":true}]`, ""},
		{"list ids by value", vendors, `[{"id":"a"}]`, `[{"id":"\u0061","v":1}]`, `[{"id":"\u0061","v":1}]`, ""},
		{"list string and number ids differ", vendors, `[{"id":"1"}]`, `[{"id":1}]`, `[{"id":"1"},{"id":1}]`, ""},
		{"list empty", vendors, `[]`, `[]`, `[]`, ""},
		{"list object defaults", vendors, `{"vendors":[]}`, `[]`, "", "defaults are an object, not an array"},
		{"list item without id", vendors, `[{"id":"a"}]`, `[{"name":"b"}]`, "", `item 0 of the override has no "id"`},
		{"list item not an object", vendors, `[1]`, `[]`, "", "item 0 of the defaults is a number"},
		{"list id not a scalar", vendors, `[{"id":{"x":1}}]`, `[]`, "", "not a string or a number"},
		{"list duplicate id", vendors, `[{"id":"a"},{"id":"a"}]`, `[]`, "", "id a twice"},
		{"list without field name", working.MergeListByID(""), `[]`, `[]`, "", "needs an id field"},

		{"merge at", working.MergeAt("vendors", vendors),
			`{"version":1,"vendors":[{"id":"a","v":1},{"id":"b","v":1}]}`,
			`{"vendors":[{"id":"b","v":2},{"id":"c","v":2}],"note":"tenant"}`,
			`{"version":1,"vendors":[{"id":"a","v":1},{"id":"b","v":2},{"id":"c","v":2}],"note":"tenant"}`, ""},
		{"merge at, one side", working.MergeAt("vendors", vendors), `{"vendors":[{"id":"a"}]}`, `{"x":1}`, `{"vendors":[{"id":"a"}],"x":1}`, ""},
		{"merge at, inner error", working.MergeAt("vendors", vendors), `{"vendors":{}}`, `{"vendors":[]}`, "", `field "vendors": list merge`},
		{"merge at, array", working.MergeAt("vendors", vendors), `[]`, `{}`, "", "not an object"},

		{"shallow keeps white space in values", working.ShallowMerge, " {\n \"a\" : [1, 2] ,\t\"b\":{ \"x\" : 1 } } ", `{ "c" : 1.0 }`, `{"a":[1, 2],"b":{ "x" : 1 },"c":1.0}`, ""},
		{"shallow names by value", working.ShallowMerge, `{"\u0061":1,"<&>":2}`, `{"a":3,"\u003c&\u003e":4}`, `{"a":3,"<&>":4}`, ""},
		{"shallow duplicate object names", working.ShallowMerge, `{"a":{"x":1},"b":2,"a":{"y":2}}`, `{"c":3}`, `{"a":{"y":2},"b":2,"c":3}`, ""},
		{"shallow data after the object", working.ShallowMerge, `{"a":1} {"b":2}`, `{}`, "", "defaults is not valid JSON"},
		{"shallow trailing comma", working.ShallowMerge, `{}`, `{"a":1,}`, "", "override is not valid JSON"},
		{"shallow invalid before shape", working.ShallowMerge, `[1]`, `{"a":`, "", "override is not valid JSON"},
		{"deep keeps white space", working.DeepMerge, `{ "a" : { "x" : 1 , "y" : [ 2 ] } }`, `{"a":{ "y" : 3 }}`, `{"a":{"x":1,"y":3}}`, ""},
		{"deep invalid nested", working.DeepMerge, `{"a":{"x":1}}`, `{"a":{"x":}}`, "", "override is not valid JSON"},
		{"deep invalid non-object", working.DeepMerge, `[1,]`, `{}`, "", "defaults is not valid JSON"},
		{"list invalid", vendors, `[{"id":"a"}`, `[]`, "", "defaults is not valid JSON"},
		{"list invalid override", vendors, `[]`, `[{"id":"a"},]`, "", "override is not valid JSON"},
		{"list duplicate id names", vendors, `[{"id":"a","id":"b"}]`, `[{"id":"b","v":1}]`, `[{"id":"b","v":1}]`, ""},
		{"list white space", vendors, ` [ { "id" : 1 } , { "id" : 2 } ] `, `[{"id":2,"v":1}]`, `[{ "id" : 1 },{"id":2,"v":1}]`, ""},
	}
	for _, c := range cases {
		got, err := c.rule(json.RawMessage(c.defaults), json.RawMessage(c.override))
		if c.wantErr != "" {
			if !errors.Is(err, memory.ErrInvalidArgument) || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: %s, %v; want ErrInvalidArgument mentioning %q", c.name, got, err, c.wantErr)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("%s: got %s, %v\nwant %s", c.name, got, err, c.want)
		}
	}
}

// TestMergeListByIDDefaultsChange checks a list rule merges the defaults
// it is given, when they change between calls and when calls overlap.
func TestMergeListByIDDefaultsChange(t *testing.T) {
	rule := working.MergeListByID("id")
	cases := []struct{ defaults, override, want string }{
		{`[{"id":"a"},{"id":"b"}]`, `[{"id":"b","v":1}]`, `[{"id":"a"},{"id":"b","v":1}]`},
		{`[{"id":"a"},{"id":"c"}]`, `[{"id":"b","v":1}]`, `[{"id":"a"},{"id":"c"},{"id":"b","v":1}]`},
		{`[{"id":"a"},{"id":"c"}]`, `[{"id":"c","v":2}]`, `[{"id":"a"},{"id":"c","v":2}]`},
		{`[{"id":"a"},{"id":"b"}]`, `[]`, `[{"id":"a"},{"id":"b"}]`},
	}
	for _, c := range cases {
		got, err := rule(json.RawMessage(c.defaults), json.RawMessage(c.override))
		if err != nil || string(got) != c.want {
			t.Errorf("%s + %s: got %s, %v; want %s", c.defaults, c.override, got, err, c.want)
		}
	}
	// The rule must not keep the caller's buffer: changing it after a
	// merge changes nothing the next merge of other defaults gives.
	buf := []byte(`[{"id":"a"}]`)
	if _, err := rule(buf, json.RawMessage(`[]`)); err != nil {
		t.Fatal(err)
	}
	copy(buf, `[{"id":"z"}]`)
	if got, err := rule(buf, json.RawMessage(`[]`)); err != nil || string(got) != `[{"id":"z"}]` {
		t.Errorf("after the defaults' buffer changed: %s, %v", got, err)
	}
	// Invalid defaults after valid ones are still refused.
	if _, err := rule(json.RawMessage(`[{"id":"a"},{"id":"a"}]`), json.RawMessage(`[]`)); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("duplicate ids after a good merge: %v", err)
	}
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 200 {
				c := cases[(g+i)%len(cases)]
				if got, err := rule(json.RawMessage(c.defaults), json.RawMessage(c.override)); err != nil || string(got) != c.want {
					t.Errorf("concurrent %s + %s: got %s, %v; want %s", c.defaults, c.override, got, err, c.want)
					return
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
}

// vendorDefaults and vendorOverride are the live-chat vendor fingerprints
// of the document: platform defaults, and one tenant that adds a vendor
// and overrides another.
const (
	vendorDefaults = `[{"id":"intercom","label":"Intercom","signals":["widget.intercom.io"]},` +
		`{"id":"tidio","label":"Tidio","signals":["code.tidio.co"]},` +
		`{"id":"hubspot","label":"HubSpot","signals":["js.hs-scripts.com"]}]`
	vendorOverride = `[{"id":"tidio","label":"Tidio (EU)","signals":["code.tidio.co","eu.tidio.co"]},` +
		`{"id":"acmechat","label":"Acme Chat","signals":["chat.acme.example"]}]`
)

func TestWorkingLoadMerged(t *testing.T) {
	forEachWorkingDriver(t, func(t *testing.T, open func() driver.Driver) {
		ctx := context.Background()
		d := open()
		w, _ := newWorking(t, d, working.Options{})
		admin := platformWorking(t, d, "")
		agent := analyst.Agent
		system := memory.Identity{Tenant: backend.DefaultSystemTenant, Agent: agent}
		acme := memory.Identity{Tenant: "acme", Agent: agent, Instance: "ta-1", Squad: "s", Session: "r"}
		globex := memory.Identity{Tenant: "globex", Agent: agent}
		initech := memory.Identity{Tenant: "initech", Agent: agent}
		put := func(id memory.Identity, key, payload string) {
			t.Helper()
			doc := working.Document{Level: memory.LevelParentAgent, Key: key, Type: "organization", JSON: json.RawMessage(payload)}
			var err error
			if id == system {
				_, err = admin.PutDefault(ctx, id.Agent, doc)
			} else {
				_, err = w.Put(ctx, id, doc)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		w.RegisterMerge("live_chat_vendors", working.MergeListByID("id"))
		w.RegisterMerge("settings", working.ShallowMerge)
		w.RegisterMerge("profile", working.DeepMerge)
		w.RegisterMerge("bad_shape", working.ShallowMerge)

		put(system, "live_chat_vendors", vendorDefaults)
		put(acme, "live_chat_vendors", vendorOverride)
		put(globex, "live_chat_vendors", `[{"id":"intercom","label":"GLOBEX SECRET"}]`)
		put(system, "settings", `{"depth":2,"lang":"en"}`)
		put(acme, "settings", `{"depth":5}`)
		put(system, "profile", `{"tone":{"formal":true,"emoji":false},"limit":3}`)
		put(acme, "profile", `{"tone":{"emoji":true}}`)
		put(system, "prompt", `"platform prompt"`) // no rule: Replace
		put(acme, "prompt", `"acme prompt"`)
		put(system, "defaults_only", `{"x":1}`)
		put(acme, "override_only", `{"y":2}`)
		put(system, "bad_shape", `{"a":1}`)
		put(acme, "bad_shape", `[1]`)

		want := map[string]string{
			"live_chat_vendors": `[{"id":"intercom","label":"Intercom","signals":["widget.intercom.io"]},` +
				`{"id":"tidio","label":"Tidio (EU)","signals":["code.tidio.co","eu.tidio.co"]},` +
				`{"id":"hubspot","label":"HubSpot","signals":["js.hs-scripts.com"]},` +
				`{"id":"acmechat","label":"Acme Chat","signals":["chat.acme.example"]}]`,
			"settings":      `{"depth":5,"lang":"en"}`,
			"profile":       `{"tone":{"formal":true,"emoji":true},"limit":3}`,
			"prompt":        `"acme prompt"`,
			"defaults_only": `{"x":1}`,
			"override_only": `{"y":2}`,
		}
		for key, wantJSON := range want {
			m, err := w.LoadMerged(ctx, acme, key)
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			if string(m.JSON) != wantJSON {
				t.Errorf("%s: merged %s\nwant %s", key, m.JSON, wantJSON)
			}
			if m.Key != key || (m.Defaults == nil) != (key == "override_only") || (m.Override == nil) != (key == "defaults_only") {
				t.Errorf("%s: sources defaults=%v override=%v", key, m.Defaults != nil, m.Override != nil)
			}
			if m.Defaults != nil && m.Defaults.Scope.Tenant != backend.DefaultSystemTenant {
				t.Errorf("%s: defaults from tenant %q", key, m.Defaults.Scope.Tenant)
			}
			if m.Override != nil {
				if diff := cmp.Diff(memory.Identity{Tenant: "acme", Agent: agent}, m.Override.Scope); diff != "" {
					t.Errorf("%s: override from (-want +got):\n%s", key, diff)
				}
			}
		}
		// A tenant without an override reads the defaults; never another
		// tenant's override.
		m, err := w.LoadMerged(ctx, initech, "live_chat_vendors")
		if err != nil || string(m.JSON) != vendorDefaults || m.Override != nil {
			t.Errorf("initech reads %s, %v; want the defaults alone", m.JSON, err)
		}
		m, err = w.LoadMerged(ctx, globex, "live_chat_vendors")
		if err != nil || strings.Contains(string(m.JSON), "acmechat") || !strings.Contains(string(m.JSON), "GLOBEX SECRET") {
			t.Errorf("globex reads %s, %v", m.JSON, err)
		}
		m, err = w.LoadMerged(ctx, acme, "live_chat_vendors")
		if err != nil || strings.Contains(string(m.JSON), "GLOBEX") {
			t.Errorf("acme reads %s, %v: another tenant's row leaked", m.JSON, err)
		}
		// No caller is the system tenant.
		if _, err := w.LoadMerged(ctx, system, "live_chat_vendors"); !errors.Is(err, memory.ErrPermissionDenied) {
			t.Errorf("LoadMerged as the system tenant: %v, want ErrPermissionDenied", err)
		}
		// The platform's rows stay out of a tenant's own reads.
		if _, err := w.Get(ctx, initech, memory.LevelParentAgent, "live_chat_vendors"); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("initech Get of the platform row: %v, want ErrNotFound", err)
		}
		// Another agent's defaults are not this agent's.
		if _, err := w.LoadMerged(ctx, acme.With(memory.FieldAgent, "kaos://agent/other"), "live_chat_vendors"); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("another agent: %v, want ErrNotFound", err)
		}
		if _, err := w.LoadMerged(ctx, acme, "nothing"); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("neither row: %v, want ErrNotFound", err)
		}
		if _, err := w.LoadMerged(ctx, acme, "bad_shape"); !errors.Is(err, memory.ErrInvalidArgument) || !strings.Contains(err.Error(), `"bad_shape"`) {
			t.Errorf("wrong shapes: %v, want ErrInvalidArgument naming the key", err)
		}
		if _, err := w.LoadMerged(ctx, acme.With(memory.FieldAgent, ""), "settings"); !errors.Is(err, memory.ErrIncompleteScope) {
			t.Errorf("no agent: %v, want ErrIncompleteScope", err)
		}
		if _, err := w.LoadMerged(ctx, acme, ""); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("empty key: %v, want ErrInvalidArgument", err)
		}
		// A rule's unclassified error is classified; nil restores Replace.
		w.RegisterMerge("settings", func(_, _ json.RawMessage) (json.RawMessage, error) { return nil, errors.New("boom") })
		if _, err := w.LoadMerged(ctx, acme, "settings"); !errors.Is(err, memory.ErrInvalidArgument) || !strings.Contains(err.Error(), "boom") {
			t.Errorf("failing rule: %v", err)
		}
		w.RegisterMerge("settings", func(_, _ json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`{`), nil })
		if _, err := w.LoadMerged(ctx, acme, "settings"); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("rule giving invalid JSON: %v", err)
		}
		w.RegisterMerge("settings", nil)
		if m, err := w.LoadMerged(ctx, acme, "settings"); err != nil || string(m.JSON) != `{"depth":5}` {
			t.Errorf("after unregistering: %s, %v; want the override (Replace)", m.JSON, err)
		}
	})
}

// TestWorkingCustomSystemTenant checks the system tenant is the store's
// option: with another name, "system" is an ordinary tenant.
func TestWorkingCustomSystemTenant(t *testing.T) {
	ctx := context.Background()
	d := workingDrivers[0].Storage(t)()
	st := backend.NewStore(d, backend.StoreOptions{SystemTenant: "primepilot"})
	w, err := working.New(st, working.Options{})
	if err != nil {
		t.Fatal(err)
	}
	admin := platformWorking(t, d, "primepilot")
	agent := analyst.Agent
	doc := func(text string) working.Document {
		return working.Document{Level: memory.LevelParentAgent, Key: "k", JSON: json.RawMessage(`"` + text + `"`)}
	}
	if _, err := admin.PutDefault(ctx, agent, doc("primepilot")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Put(ctx, memory.Identity{Tenant: "system", Agent: agent}, doc("a tenant called system")); err != nil {
		t.Fatal(err)
	}
	m, err := w.LoadMerged(ctx, memory.Identity{Tenant: "acme", Agent: agent}, "k")
	if err != nil || string(m.JSON) != `"primepilot"` {
		t.Errorf("got %s, %v; want the primepilot tenant's defaults", m.JSON, err)
	}
}

// TestWorkingPlatformDefaults checks that platform defaults are written
// only with the administrative permission: a caller whose tenant is the
// system tenant is refused every call (before, any such caller wrote the
// defaults every tenant receives), PutDefault without AllowPlatform is
// refused, and neither stores anything.
func TestWorkingPlatformDefaults(t *testing.T) {
	ctx := context.Background()
	d := inmem.New(inmem.Options{})
	w, _ := newWorking(t, d, working.Options{})
	agent := analyst.Agent
	impostor := memory.Identity{Tenant: backend.DefaultSystemTenant, Agent: agent, Instance: "i", Squad: "q", Session: "r"}
	evil := working.Document{Level: memory.LevelParentAgent, Key: "live_chat_vendors", JSON: json.RawMessage(`[{"id":"evil"}]`)}
	denied := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, memory.ErrPermissionDenied) {
			t.Errorf("%s: %v, want ErrPermissionDenied", what, err)
		}
	}
	_, err := w.Put(ctx, impostor, evil)
	denied("Put as the system tenant", err)
	_, err = w.Swap(ctx, impostor, evil, 0)
	denied("Swap as the system tenant", err)
	_, err = w.Update(ctx, impostor, memory.LevelParentAgent, "live_chat_vendors", "", func(working.Document, bool) (json.RawMessage, error) { return evil.JSON, nil })
	denied("Update as the system tenant", err)
	_, err = w.Get(ctx, impostor, memory.LevelParentAgent, "live_chat_vendors")
	denied("Get as the system tenant", err)
	_, err = w.Delete(ctx, impostor, memory.LevelParentAgent, "live_chat_vendors")
	denied("Delete as the system tenant", err)
	_, err = w.PutDefault(ctx, agent, evil)
	denied("PutDefault without AllowPlatform", err)
	_, err = w.DeleteDefault(ctx, agent, "live_chat_vendors")
	denied("DeleteDefault without AllowPlatform", err)
	if _, err := w.LoadMerged(ctx, memory.Identity{Tenant: "acme", Agent: agent}, "live_chat_vendors"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("after the refused writes a tenant reads %v, want ErrNotFound", err)
	}

	// With the permission, defaults are written, read by every tenant and
	// removed.
	admin := platformWorking(t, d, "")
	put, err := admin.PutDefault(ctx, agent, working.Document{Key: "live_chat_vendors", JSON: json.RawMessage(`[{"id":"intercom"}]`)})
	if err != nil {
		t.Fatalf("PutDefault: %v", err)
	}
	wantPut := working.Document{Version: 1, Scope: memory.Identity{Tenant: backend.DefaultSystemTenant, Agent: agent}}
	if diff := cmp.Diff(wantPut, put, cmpopts.IgnoreFields(working.Document{}, "Level", "Key", "Type", "JSON", "Updated")); diff != "" {
		t.Fatalf("PutDefault (-want +got):\n%s", diff)
	}
	if _, err := admin.PutDefault(ctx, agent, working.Document{Level: memory.LevelSquad, Key: "k", JSON: json.RawMessage(`1`)}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("PutDefault at the SQUAD level: %v, want ErrInvalidArgument", err)
	}
	m, err := w.LoadMerged(ctx, memory.Identity{Tenant: "acme", Agent: agent}, "live_chat_vendors")
	if err != nil || string(m.JSON) != `[{"id":"intercom"}]` {
		t.Errorf("a tenant reads %s, %v; want the defaults", m.JSON, err)
	}
	if got, err := w.GetDefault(ctx, agent, "live_chat_vendors"); err != nil || got.Version != 1 || string(got.JSON) != `[{"id":"intercom"}]` {
		t.Errorf("GetDefault without the permission (reads need none): %+v, %v", got, err)
	}
	if removed, err := admin.DeleteDefault(ctx, agent, "live_chat_vendors"); err != nil || !removed {
		t.Errorf("DeleteDefault: %v, %v", removed, err)
	}
	if _, err := w.GetDefault(ctx, agent, "live_chat_vendors"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("GetDefault after DeleteDefault: %v, want ErrNotFound", err)
	}
}

// FuzzMergeRules checks every built-in rule on arbitrary inputs: valid
// JSON in gives valid JSON out or a classified error, never a panic; and
// the rules' defining properties hold.
func FuzzMergeRules(f *testing.F) {
	for _, s := range [][2]string{
		{`{"a":1}`, `{"b":2}`},
		{`{"a":{"x":[1,2]}}`, `{"a":{"y":null}}`},
		{`[{"id":"a"},{"id":"b"}]`, `[{"id":"b","v":1},{"id":3}]`},
		{`{"vendors":[{"id":1}]}`, `{"vendors":[{"id":2}]}`},
		{`[1]`, `"x"`},
		{`{"a":1,"a":{"b":2}}`, `{"a":{"c":3}}`},
		{`{"\u00e9":"<&>"}`, `{"\u00e9":1e999}`},
	} {
		f.Add(s[0], s[1])
	}
	rules := map[string]working.MergeRule{
		"replace": working.Replace,
		"shallow": working.ShallowMerge,
		"deep":    working.DeepMerge,
		"list":    working.MergeListByID("id"),
		"at":      working.MergeAt("vendors", working.MergeListByID("id")),
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		valid := json.Valid([]byte(a)) && json.Valid([]byte(b))
		for name, rule := range rules {
			out, err := rule(json.RawMessage(a), json.RawMessage(b))
			if err != nil {
				if !errors.Is(err, memory.ErrInvalidArgument) {
					t.Fatalf("%s(%q, %q): unclassified error %v", name, a, b, err)
				}
				if valid && (name == "replace" || name == "deep") {
					t.Fatalf("%s(%q, %q) failed on valid JSON: %v", name, a, b, err)
				}
				continue
			}
			if !valid {
				t.Fatalf("%s accepted invalid JSON %q, %q", name, a, b)
			}
			if !json.Valid(out) {
				t.Fatalf("%s(%q, %q) = %q, not valid JSON", name, a, b, out)
			}
		}
		if !valid {
			return
		}
		// Replace keeps the override; merging with an empty object on
		// either side changes nothing; a deep merge of a value with itself
		// is the value.
		if out, _ := working.Replace(json.RawMessage(a), json.RawMessage(b)); string(out) != b {
			t.Fatalf("Replace(%q, %q) = %q", a, b, out)
		}
		av := decode(t, a)
		if _, isObject := av.(map[string]any); isObject {
			for _, rule := range []working.MergeRule{working.ShallowMerge, working.DeepMerge} {
				for _, out := range []json.RawMessage{must(rule(json.RawMessage(a), json.RawMessage(`{}`))), must(rule(json.RawMessage(`{}`), json.RawMessage(a)))} {
					if diff := cmp.Diff(av, decode(t, string(out))); diff != "" {
						t.Fatalf("merging %q with {} gave %q (-want +got):\n%s", a, out, diff)
					}
				}
			}
		}
		out := must(working.DeepMerge(json.RawMessage(a), json.RawMessage(a)))
		if diff := cmp.Diff(av, decode(t, string(out))); diff != "" {
			t.Fatalf("DeepMerge(%q, itself) = %q (-want +got):\n%s", a, out, diff)
		}
	})
}

func must(v json.RawMessage, err error) json.RawMessage {
	if err != nil {
		panic(err)
	}
	return v
}

// decode unmarshals s, numbers as their text so 1e999 compares.
func decode(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return v
}
