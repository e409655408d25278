package client_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/client"
	"github.com/agentmem/memory/contract"
	"github.com/agentmem/memory/server"
	"github.com/agentmem/memory/tiers/tiered"
)

// script runs the same calls on any tiered.Interface and writes down what
// they answered: records by what identifies them (not their random ids or
// times), counts, rendered texts and token counts, error classes.
func script(ctx context.Context, m tiered.Interface) []string {
	var out []string
	note := func(what string, v any, err error) {
		if err != nil {
			out = append(out, fmt.Sprintf("%s: error %s", what, contract.ClassOf(err)))
			return
		}
		out = append(out, fmt.Sprintf("%s: %v", what, v))
	}
	bob := alice
	bob.User, bob.Session = "bob", "s9"
	a, err := m.Append(ctx, alice,
		tiered.Turn{Role: memory.RoleUser, Content: "I moved to Lisbon last spring.", Speaker: "Alice"},
		tiered.Turn{Role: memory.RoleAssistant, Content: "How do you like it?"},
		tiered.Turn{Role: memory.RoleUser, Content: "I love the trams and the grilled sardines."})
	note("append", a, err)
	a, err = m.Append(ctx, bob, tiered.Turn{Role: memory.RoleUser, Content: "Bob here."})
	note("append bob", a, err)
	a, err = m.Append(ctx, alice)
	note("append nothing", a, err)
	recs, err := m.Remember(ctx, alice, "Alice lives in Lisbon.", "Alice likes grilled sardines.")
	note("remember", records(recs), err)
	recs, err = m.Remember(ctx, alice, "Alice lives in Lisbon.")
	note("remember again", records(recs), err)
	recs, err = m.Remember(ctx, bob, "Bob lives in Porto.")
	note("remember bob", records(recs), err)
	w, err := m.Window(ctx, alice, 0)
	note("window", records(w), err)
	w, err = m.Window(ctx, alice, 12)
	note("window of 12 tokens", records(w), err)
	for _, o := range []tiered.RecallOptions{{}, {Level: memory.LevelAgent, K: 1}, {Level: memory.LevelUser, Budget: 30},
		{Level: memory.LevelAgent, Budget: 12, NoWindow: true}, {NoFacts: true}, {NoWindow: true, NoDigest: true, NoFacts: true}} {
		r, err := m.RecallWith(ctx, alice, "Where does Alice live?", o)
		note(fmt.Sprintf("recall %+v", o), recollection(r), err)
	}
	r, err := m.RecallWith(ctx, alice, "", tiered.RecallOptions{})
	note("recall of nothing", recollection(r), err)
	rc, err := m.Recall(ctx, alice, "sardines")
	note("Recall", fmt.Sprint(records(rc.Records), rc.Text, rc.Tokens, rc.Degraded), err)
	for _, o := range []tiered.ListOptions{{}, {Level: memory.LevelUser, NoWindow: true}, {Level: memory.LevelAgent, NoDigest: true, Budget: 5},
		{NoWindow: true, NoDigest: true, NoFacts: true}} {
		l, err := m.List(ctx, alice, o)
		note(fmt.Sprintf("list %+v", o), fmt.Sprint(records(l.Window), l.Digest, records(l.Facts)), err)
	}

	// The caller's mistakes.
	noSession, noUser := alice, alice
	noSession.Session, noUser.User = "", ""
	_, err = m.Append(ctx, noSession, tiered.Turn{Role: memory.RoleUser, Content: "hi"})
	note("append without a session", nil, err)
	_, err = m.Append(ctx, alice, tiered.Turn{Role: "robot", Content: "hi"})
	note("append of an unknown role", nil, err)
	_, err = m.Remember(ctx, alice, "")
	note("remember an empty text", nil, err)
	_, err = m.Window(ctx, noSession, 0)
	note("window without a session", nil, err)
	_, err = m.Window(ctx, alice, -1)
	note("window of a negative budget", nil, err)
	_, err = m.RecallWith(ctx, noUser, "x", tiered.RecallOptions{Level: memory.LevelUser})
	note("recall at the user level without a user", nil, err)
	_, err = m.RecallWith(ctx, alice, "x", tiered.RecallOptions{K: -1})
	note("recall of k -1", nil, err)
	_, err = m.Recall(ctx, noSession, "x")
	note("Recall without a session", nil, err)
	_, err = m.List(ctx, noSession, tiered.ListOptions{Level: memory.LevelUser})
	note("list without a session", nil, err)
	_, err = m.Forget(ctx, alice, memory.LevelStore)
	note("forget the store", nil, err)
	_, err = m.Forget(ctx, alice, "")
	note("forget no level", nil, err)
	_, err = m.Forget(ctx, memory.Identity{Tenant: "acme", User: "bad\x01"}, memory.LevelUser)
	note("forget as a malformed identity", nil, err)

	e, err := m.Forget(ctx, alice, memory.LevelSession)
	note("forget the session", e, err)
	l, err := m.List(ctx, alice, tiered.ListOptions{Level: memory.LevelUser})
	note("list after", fmt.Sprint(records(l.Window), l.Digest, records(l.Facts)), err)
	e, err = m.Forget(ctx, bob, memory.LevelUser)
	note("forget bob", e, err)
	return out
}

// records writes down what identifies each record but its random id and
// times (a fact's id derives from its writer and text, so it is kept).
func records(rs []memory.Record) string {
	var b strings.Builder
	for _, r := range rs {
		id := ""
		if r.Kind == memory.KindFact {
			id = r.ID
		}
		var meta []string
		for k, v := range r.Metadata {
			meta = append(meta, k+"="+v)
		}
		sort.Strings(meta)
		fmt.Fprintf(&b, "[%s %s %s %q %q %+v %v tokens=%d v=%d %s]", id, r.Kind, r.Label, r.Key, r.Content, r.Identity, meta, r.Tokens, r.Version, r.Expires)
	}
	return b.String()
}

func recollection(r tiered.Recollection) string {
	facts := make([]string, len(r.Facts))
	for i, f := range r.Facts {
		facts[i] = fmt.Sprintf("%s %.9f", records([]memory.Record{f.Record}), f.Score)
	}
	return fmt.Sprint(records(r.Window), r.Digest, facts, r.Text, r.Tokens, r.Usage, r.Degraded, r.Errors)
}

// TestParity runs the script on a Memory in the process and on a client
// of the service over another Memory alike, on each driver: every answer
// is the same, errors by class.
func TestParity(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			ctx := context.Background()
			opt := tiered.Options{IdleFlush: -1}
			local := newMemory(t, d.open(t), memory.Posture{}, opt)
			_, hs := serve(t, newMemory(t, d.open(t), memory.Posture{}, opt), server.Options{})
			want, got := script(ctx, local), script(ctx, newClient(t, hs.URL, client.Options{}))
			if len(want) != len(got) {
				t.Fatalf("%d answers locally, %d through the client", len(want), len(got))
			}
			for i := range want {
				if want[i] != got[i] {
					t.Errorf("answer %d:\n local %s\nclient %s", i, want[i], got[i])
				}
			}
		})
	}
}
