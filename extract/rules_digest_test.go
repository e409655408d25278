package extract_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
)

func summarize(t *testing.T, r extract.Rules, previous string, turns []memory.Record) string {
	t.Helper()
	digest, usage, err := r.Summarize(context.Background(), previous, turns)
	if err != nil {
		t.Fatalf("Summarize: %v", err)
	}
	if usage != (extract.Usage{}) {
		t.Errorf("Rules reported usage %+v", usage)
	}
	return digest
}

func TestRulesDigestLines(t *testing.T) {
	turns := conversation(
		said{role: memory.RoleSystem, text: "You are a travel agent."},
		user("Hi! I'm planning a trip to Lisbon in June. I prefer window seats. I travel light."),
		assistant("Great. I found a 9:40 flight on June 3. It costs 120 euros. Shall I book it?"),
		said{role: memory.RoleTool, text: `{"flight": "TP123"}`},
		user("Thanks!"),
		assistant("Wow, Melanie! That's great, Mel."),
		said{role: memory.RoleUser, text: "Caroline said she\nwould join us.", speaker: "Melanie"},
		user(strings.Repeat("Very long sentence words ", 20)+"end."),
	)
	got := summarize(t, extract.Rules{}, "", turns)
	want := strings.Join([]string{
		"User: I'm planning a trip to Lisbon in June. I prefer window seats.",
		"Assistant: I found a 9:40 flight on June 3. It costs 120 euros.",
		"Melanie: Caroline said she would join us.",
		"User: " + strings.TrimSpace(strings.Repeat("Very long sentence words ", 9)) + " Very long…",
	}, "\n")
	if got != want {
		t.Errorf("digest:\n%s\nwant:\n%s", got, want)
	}
}

func TestRulesDigestCarriesOn(t *testing.T) {
	previous := "The user is planning a trip.\n\n  It is to Lisbon.  \n"
	got := summarize(t, extract.Rules{}, previous, conversation(user("I booked the hotel.")))
	want := "The user is planning a trip.\nIt is to Lisbon.\nUser: I booked the hotel."
	if got != want {
		t.Errorf("digest:\n%s\nwant:\n%s", got, want)
	}
	if got := summarize(t, extract.Rules{}, previous, nil); got != previous {
		t.Errorf("no turns changed the digest to %q", got)
	}
	if got := summarize(t, extract.Rules{}, "", conversation(user("Hi!"), assistant("Hello."))); got != "" {
		t.Errorf("filler only gave the digest %q", got)
	}
}

// TestRulesDigestBudget checks the order in which a digest over its
// budget gives way: older lines thinned to their first sentence, then the
// oldest dropped, then the newest cut.
func TestRulesDigestBudget(t *testing.T) {
	previous := strings.Join([]string{
		"User: I moved to Oslo. I like the fjords.",
		"Assistant: Oslo is lovely. The winters are long.",
	}, "\n")
	turns := conversation(user("I start a new job on Monday. It is at a bank."))
	newest := "User: I start a new job on Monday. It is at a bank."
	cases := []struct {
		budget int
		want   string
	}{
		{1000, previous + "\n" + newest},
		{len("User: I moved to Oslo.\nAssistant: Oslo is lovely. The winters are long.\n" + newest),
			"User: I moved to Oslo.\nAssistant: Oslo is lovely. The winters are long.\n" + newest},
		{len("User: I moved to Oslo.\nAssistant: Oslo is lovely.\n" + newest),
			"User: I moved to Oslo.\nAssistant: Oslo is lovely.\n" + newest},
		{len("Assistant: Oslo is lovely.\n" + newest), "Assistant: Oslo is lovely.\n" + newest},
		{len(newest), newest},
		{64, "User: I start a new job on Monday. It is at a bank."},
	}
	for _, c := range cases {
		got := summarize(t, extract.Rules{MaxDigestBytes: max(c.budget, extract.MinDigestBytes)}, previous, turns)
		if got != c.want {
			t.Errorf("budget %d: digest\n%s\nwant\n%s", c.budget, got, c.want)
		}
	}
	long := conversation(user(strings.Repeat("I walk. ", 40)))
	got := summarize(t, extract.Rules{MaxDigestBytes: extract.MinDigestBytes}, "", long)
	if len(got) > extract.MinDigestBytes || !strings.HasPrefix(got, "User: I walk. I walk.") {
		t.Errorf("a newest line over the budget became %q (%d bytes)", got, len(got))
	}
}

// TestRulesDigestStaysBounded folds many batches one after another, as a
// long session does, and checks every digest against its budget.
func TestRulesDigestStaysBounded(t *testing.T) {
	r := extract.Rules{MaxDigestBytes: 600}
	digest := ""
	for i := range 50 {
		turns := conversation(
			user("I am on step "+strings.Repeat("x", i%7)+" of my project. I need more time."),
			assistant("Step noted. Keep going. Ask me anything."),
		)
		digest = summarize(t, r, digest, turns)
		if len(digest) > 600 {
			t.Fatalf("fold %d: the digest is %d bytes", i, len(digest))
		}
	}
	if !strings.HasSuffix(digest, "Assistant: Step noted. Keep going.") {
		t.Errorf("the newest line is not whole at the end:\n%s", digest)
	}
}

func TestRulesOptionsAreChecked(t *testing.T) {
	for _, r := range []extract.Rules{
		{MaxDigestBytes: -1},
		{MaxDigestBytes: extract.MinDigestBytes - 1},
		{MaxDigestBytes: memory.MaxContentBytes + 1},
		{FactRoles: []memory.Role{"narrator"}},
	} {
		if _, _, err := r.Summarize(context.Background(), "", conversation(user("I like tea."))); !isInvalid(err) {
			t.Errorf("%+v: Summarize error %v, want invalid argument", r, err)
		}
		if _, _, err := r.Extract(context.Background(), conversation(user("I like tea.")), nil); !isInvalid(err) {
			t.Errorf("%+v: Extract error %v, want invalid argument", r, err)
		}
	}
}
