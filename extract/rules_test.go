package extract_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
)

func extractRules(t *testing.T, r extract.Rules, turns, known []memory.Record) []extract.Fact {
	t.Helper()
	facts, usage, err := r.Extract(context.Background(), turns, known)
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if usage != (extract.Usage{}) {
		t.Errorf("Rules reported usage %+v", usage)
	}
	return facts
}

// TestRulesKeepsFactsAboutTheSpeaker checks, sentence by sentence, what
// the default keeps as a fact and what it leaves out.
func TestRulesKeepsFactsAboutTheSpeaker(t *testing.T) {
	cases := []struct {
		said string
		want []string
	}{
		{"I'm vegetarian.", []string{"I'm vegetarian."}},
		{"i’m allergic to peanuts", []string{"I’m allergic to peanuts"}},
		{"My sister's wedding is on June 14.", []string{"My sister's wedding is on June 14."}},
		{"We are flying to Lisbon next week!", []string{"We are flying to Lisbon next week!"}},
		{"The dentist appointment is on Friday.", []string{"The dentist appointment is on Friday."}},
		{"The contract ends in 2026.", []string{"The contract ends in 2026."}},
		{"The launch moved to May 21st.", []string{"The launch moved to May 21st."}},
		{"Hi, I'm Sam.", []string{"I'm Sam."}},
		{"Actually, btw, i moved to Berlin last month.", []string{"I moved to Berlin last month."}},
		{"Remember that my passport expires in March.", []string{"My passport expires in March."}},
		{"- I run every morning\n- I hate mornings", []string{"I run every morning", "I hate mornings"}},
		{"Dr. Lee is my doctor. I see her monthly.", []string{"Dr. Lee is my doctor.", "I see her monthly."}},
		{"I paid 3.50 for my coffee. It was cold.", []string{"I paid 3.50 for my coffee."}},
		{"  I   like\tgreen\u00a0tea.  ", []string{"I like green tea."}},
		// Questions.
		{"Can you suggest a recipe?", nil},
		{"Should I move to Berlin?", nil},
		{"what do I need for my visa", nil},
		{"Is my flight on time", nil},
		{"I wonder if my flight is late?", nil},
		// Greetings, thanks, acknowledgements, filler.
		{"Hi! Hello there. Thanks so much. Ok, great.", nil},
		{"I see. I agree. I don't know. I'm fine. I think so.", nil},
		{"Good morning!", nil},
		{"Thanks, Caroline! Wow, Melanie! I totally agree, Mel. That's so great, Caroline.", nil},
		{"Hey Caroline, since we last chatted, I ran a race.", []string{"Since we last chatted, I ran a race."}},
		{"Hi there! I'm Sam, Sam Lee.", []string{"I'm Sam, Sam Lee."}},
		// Requests and reactions addressed to the listener.
		{"Tell me a joke about my cat.", nil},
		{"Please book my flight for Friday.", nil},
		{"I want you to write a poem about my dog.", nil},
		{"I think you are right.", nil},
		// Neither about the speaker nor a date.
		{"The sky is blue.", nil},
		{"That makes sense.", nil},
		// Code.
		{"my_list = {1, 2} <- my code", nil},
		// One word.
		{"Me.", nil},
	}
	for _, c := range cases {
		facts := extractRules(t, extract.Rules{}, conversation(user(c.said)), nil)
		if diff := cmp.Diff(c.want, texts(facts), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%q (-want +got):\n%s", c.said, diff)
		}
		for _, f := range facts {
			if !cmp.Equal(f.Sources, []string{"t1"}) || f.Supersedes != "" {
				t.Errorf("%q: fact %+v, want source t1 and no supersedes", c.said, f)
			}
		}
	}
}

func TestRulesTooLongASentence(t *testing.T) {
	long := "I like " + strings.Repeat("very ", extract.MaxFactBytes/5) + "green tea."
	facts := extractRules(t, extract.Rules{}, conversation(user(long+" I like coffee.")), nil)
	if diff := cmp.Diff([]string{"I like coffee."}, texts(facts)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRulesRolesAndSpeakers(t *testing.T) {
	turns := conversation(
		said{role: memory.RoleSystem, text: "I am the system prompt."},
		user("I live in Oslo."),
		assistant("I am an assistant and I love helping."),
		said{role: memory.RoleTool, text: "My result is 42 on Friday."},
		said{role: memory.RoleUser, text: "I went to a support group yesterday.", speaker: "Caroline"},
		said{role: memory.RoleAssistant, text: "I painted a lake sunrise last year.", speaker: "Melanie: the painter"},
	)
	got := texts(extractRules(t, extract.Rules{}, turns, nil))
	want := []string{"I live in Oslo.", "Caroline: I went to a support group yesterday."}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("default roles (-want +got):\n%s", diff)
	}
	got = texts(extractRules(t, extract.Rules{FactRoles: []memory.Role{memory.RoleUser, memory.RoleAssistant}}, turns, nil))
	want = []string{
		"I live in Oslo.",
		"I am an assistant and I love helping.",
		"Caroline: I went to a support group yesterday.",
		"Melanie the painter: I painted a lake sunrise last year.",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("user and assistant roles (-want +got):\n%s", diff)
	}
}

func TestRulesProvenanceAndDuplicates(t *testing.T) {
	turns := conversation(
		user("I'm vegetarian. I have two cats."),
		assistant("Noted."),
		user("As I said, I'm vegetarian!"),
		user("i'm VEGETARIAN"),
		user("I have two cats"),
	)
	facts := extractRules(t, extract.Rules{}, turns, knownFacts("I have two cats."))
	want := []extract.Fact{
		{Text: "I'm vegetarian.", Sources: []string{"t1", "t4"}},
		{Text: "As I said, I'm vegetarian!", Sources: []string{"t3"}},
	}
	if diff := cmp.Diff(want, facts); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRulesSupersedes(t *testing.T) {
	known := knownFacts(
		"My favourite colour is blue.",
		"I live in Paris.",
		"My brother is a doctor.",
		"Caroline: My job is teaching.",
		"I am 33 years old.",
	)
	turns := conversation(
		user("My favorite color is green."),
		user("I live in Lyon. Actually, I'm living in Berlin now."),
		user("My brother is visiting next week."),
		said{role: memory.RoleUser, text: "My job is counselling.", speaker: "Caroline"},
		said{role: memory.RoleUser, text: "My job is nursing.", speaker: "Melanie"},
		user("I'm 34 years old."),
		user("My email is sam@example.com. My email is sam@work.example."),
	)
	facts := extractRules(t, extract.Rules{}, turns, known)
	want := []extract.Fact{
		{Text: "My favorite color is green.", Sources: []string{"t1"}, Supersedes: "k1"},
		{Text: "I'm living in Berlin now.", Sources: []string{"t2"}, Supersedes: "k2"},
		{Text: "My brother is visiting next week.", Sources: []string{"t3"}}, // a brother is not one at a time
		{Text: "Caroline: My job is counselling.", Sources: []string{"t4"}, Supersedes: "k4"},
		{Text: "Melanie: My job is nursing.", Sources: []string{"t5"}}, // Caroline's job is not Melanie's
		{Text: "I'm 34 years old.", Sources: []string{"t6"}, Supersedes: "k5"},
		{Text: "My email is sam@work.example.", Sources: []string{"t7"}},
	}
	if diff := cmp.Diff(want, facts); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestRulesRestatementKeepsTheLatest checks that a slot stated, changed
// and stated again in one batch keeps the last statement, with only the
// turns that said it.
func TestRulesRestatementKeepsTheLatest(t *testing.T) {
	turns := conversation(
		user("I work at Acme."),
		user("I work at Globex."),
		user("Sorry, I work at Acme."),
		user("I work at Acme"),
	)
	facts := extractRules(t, extract.Rules{}, turns, knownFacts("I work at Acme."))
	if len(facts) != 0 {
		t.Errorf("the latest statement is the known fact, so nothing is new; got %+v", facts)
	}
	facts = extractRules(t, extract.Rules{}, turns, nil)
	want := []extract.Fact{{Text: "I work at Acme.", Sources: []string{"t3", "t4"}}}
	if diff := cmp.Diff(want, facts); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRulesIsDeterministic(t *testing.T) {
	turns := conversation(
		user("Hi! I'm Sam and I live in Oslo. My birthday is on July 2. Can you help?"),
		assistant("Of course. What do you need?"),
		user("I want to plan a party next weekend. We'll be twelve people. My budget is 300 euros."),
	)
	first := extractRules(t, extract.Rules{}, turns, knownFacts("My budget is 200 euros."))
	for range 5 {
		again := extractRules(t, extract.Rules{}, turns, knownFacts("My budget is 200 euros."))
		if diff := cmp.Diff(first, again); diff != "" {
			t.Fatalf("a second run differs (-first +again):\n%s", diff)
		}
	}
	if len(first) == 0 {
		t.Fatal("no facts")
	}
}

func TestRulesNoTurns(t *testing.T) {
	if facts := extractRules(t, extract.Rules{}, nil, knownFacts("I like tea.")); facts != nil {
		t.Errorf("no turns gave %v", facts)
	}
}
