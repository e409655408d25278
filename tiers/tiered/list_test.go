package tiered_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/tiers/tiered"
)

// TestList checks the listing: every fact at the level (more than a
// recall returns), the window as Window returns it, the latest digest
// once a fold stored one, tiers left out unread, another principal's
// facts not listed, and the caller's mistakes refused before storage.
func TestList(t *testing.T) {
	forEachDriver(t, func(t *testing.T, open func() driver.Driver) {
		ctx := context.Background()
		m, _ := newWordMemory(t, open(), tiered.Options{Budget: 200, Trigger: 100, Target: 50, Facts: 3,
			IdleFlush: -1, Settle: time.Millisecond})
		var texts []string
		for i := range 25 {
			texts = append(texts, fmt.Sprintf("Alice keeps fact number %d in mind.", i))
		}
		if _, err := m.Remember(ctx, alice, texts...); err != nil {
			t.Fatal(err)
		}
		other := alice
		other.Session = "s2"
		if _, err := m.Remember(ctx, other, "Alice said this in another session."); err != nil {
			t.Fatal(err)
		}
		bob := alice
		bob.User = "bob"
		if _, err := m.Remember(ctx, bob, "Bob's own fact."); err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			say(t, m, alice, fmt.Sprintf("turn %d here", i))
		}

		got, err := m.List(ctx, alice, tiered.ListOptions{Level: memory.LevelAgent})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Facts) != 26 {
			t.Errorf("listed %d facts at the agent level, want 26 (alice's of both sessions)", len(got.Facts))
		}
		for _, f := range got.Facts {
			if f.Identity.User != "alice" || f.Kind != memory.KindFact {
				t.Errorf("listed %s %q of %+v", f.Kind, f.Content, f.Identity)
			}
		}
		if got.Digest != nil {
			t.Errorf("digest before any fold: %q", got.Digest.Content)
		}
		win, err := m.Window(ctx, alice, 0)
		if err != nil {
			t.Fatal(err)
		}
		if contents(got.Window) != contents(win) || len(win) != 4 {
			t.Errorf("listed window %q, Window %q", contents(got.Window), contents(win))
		}
		small, err := m.List(ctx, alice, tiered.ListOptions{Budget: 6, NoFacts: true})
		if err != nil || contents(small.Window) != "turn 2 here | turn 3 here" || small.Facts != nil {
			t.Errorf("window of budget 6 without facts: %q, %d facts, %v", contents(small.Window), len(small.Facts), err)
		}
		sess, err := m.List(ctx, alice, tiered.ListOptions{NoWindow: true})
		if err != nil || len(sess.Facts) != 25 || sess.Window != nil {
			t.Errorf("facts at the default (session) level: %d, window %d turns, %v", len(sess.Facts), len(sess.Window), err)
		}

		// A fold's digest is listed, and the window after it.
		if err := m.Flush(ctx, alice); err != nil {
			t.Fatal(err)
		}
		// A turn younger than Settle when the flush ran waits for a later
		// fold: wait until every turn but the newest is folded.
		waitFor(t, "the flush's digest of every turn but the newest", func() bool {
			_, ok, err := m.Digest(ctx, alice)
			win, werr := m.Window(ctx, alice, 0)
			return err == nil && ok && werr == nil && contents(win) == "turn 3 here"
		})
		d, _, _ := m.Digest(ctx, alice)
		got, err = m.List(ctx, alice, tiered.ListOptions{NoFacts: true})
		if err != nil || got.Digest == nil || got.Digest.ID != d.ID || got.Digest.Content != d.Content {
			t.Fatalf("listed digest %+v, want %q: %v", got.Digest, d.Content, err)
		}
		if contents(got.Window) != "turn 3 here" {
			t.Errorf("window after the flush: %q", contents(got.Window))
		}
		if got, err := m.List(ctx, alice, tiered.ListOptions{NoDigest: true, NoFacts: true}); err != nil || got.Digest != nil {
			t.Errorf("digest left out: %+v, %v", got.Digest, err)
		}

		noSession := alice
		noSession.Session = ""
		if _, err := m.List(ctx, noSession, tiered.ListOptions{Level: memory.LevelUser}); !errors.Is(err, memory.ErrIncompleteScope) {
			t.Errorf("List of the window without a session: %v", err)
		}
		if got, err := m.List(ctx, noSession, tiered.ListOptions{Level: memory.LevelUser, NoWindow: true, NoDigest: true}); err != nil || len(got.Facts) != 26 {
			t.Errorf("facts alone at the user level without a session: %d, %v", len(got.Facts), err)
		}
		noUser := alice
		noUser.User = ""
		if _, err := m.List(ctx, noUser, tiered.ListOptions{Level: memory.LevelUser}); !errors.Is(err, memory.ErrIncompleteScope) {
			t.Errorf("List at the user level without a user: %v", err)
		}
		if _, err := m.List(ctx, alice, tiered.ListOptions{Level: memory.LevelStore}); !errors.Is(err, memory.ErrPermissionDenied) {
			t.Errorf("List at the store level under the default posture: %v", err)
		}
		if _, err := m.List(ctx, alice, tiered.ListOptions{Level: "everything"}); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("List at an unknown level: %v", err)
		}
		if _, err := m.List(ctx, alice, tiered.ListOptions{Budget: -1}); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("List with a negative budget: %v", err)
		}
		_ = m.Close()
		if _, err := m.List(ctx, alice, tiered.ListOptions{}); !errors.Is(err, memory.ErrClosed) {
			t.Errorf("List after Close: %v", err)
		}
	})
}
