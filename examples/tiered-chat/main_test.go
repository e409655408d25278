package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestLaterSessionsRecall runs the example on a fresh database and checks
// that the second and third sessions recall what the earlier ones said:
// the facts and, before a session has a digest of its own, the previous
// session's digest, through one recall at the agent level.
func TestLaterSessionsRecall(t *testing.T) {
	var b bytes.Buffer
	if err := run(context.Background(), &b, t.TempDir()); err != nil {
		t.Fatalf("run: %v\n%s", err, b.String())
	}
	out := b.String()
	_, rest, ok1 := strings.Cut(out, "=== Session chat-2 ===\n")
	second, third, ok2 := strings.Cut(rest, "=== Session chat-3 ===\n")
	if !ok1 || !ok2 {
		t.Fatalf("the output lacks the later sessions:\n%s", out)
	}
	for _, c := range []struct{ session, want string }{
		{second, "User:      Where do I live?\nRecalled at the agent level:\n  [Memory]\n  Known facts:\n  - I live in Lisbon with my partner and two cats.\n  Earlier conversation:\n  User: I'm planning a trip to Porto next month.\n"},
		{second, "Assistant: From what you told me: I live in Lisbon with my partner and two cats.\n"},
		{second, "Assistant: From what you told me: My favourite food is grilled sardines.\n"},
		{third, "User:      Which instrument am I learning?\nRecalled at the agent level:\n  [Memory]\n  Known facts:\n  - I started learning the cello last winter.\n  Earlier conversation:\n  User: Where do I live?\n"},
		{third, "Assistant: From what you told me: I started learning the cello last winter.\n"},
		{third, "  Known facts:\n  - I'm allergic to peanuts.\n"},
		{third, "Assistant: From what you told me: I'm allergic to peanuts.\n"},
		{third, "  - I started learning the cello last winter.\n  - I work as a ferry engineer on the Tagus.\n"},
	} {
		if !strings.Contains(c.session, c.want) {
			t.Errorf("the output lacks %q where expected:\n%s", c.want, out)
		}
	}
	if strings.Contains(out, "I don't know that yet.") {
		t.Errorf("a question went unanswered:\n%s", out)
	}
	// Session one folded at least twice: past the trigger, then at its end.
	stats := regexp.MustCompile(`Stats: (\d+) folds, 19 turns folded, 7 facts proposed, 0 model calls`).FindStringSubmatch(out)
	if stats == nil {
		t.Fatalf("unexpected stats:\n%s", out)
	}
	if folds, _ := strconv.Atoi(stats[1]); folds < 4 {
		t.Errorf("%d folds, want at least 4", folds)
	}
}
