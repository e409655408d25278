package extract_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
)

// exampleTurns returns a short support chat, as a fold evicts it.
func exampleTurns() []memory.Record {
	id := memory.Identity{Tenant: "acme", User: "sam", Session: "s1"}
	now := time.Date(2024, 5, 3, 10, 0, 0, 0, time.UTC)
	said := []struct {
		role memory.Role
		text string
	}{
		{memory.RoleUser, "Hi! I'm planning a trip to Lisbon in June. I'm vegetarian, by the way."},
		{memory.RoleAssistant, "Lovely. Lisbon has great vegetarian food. Do you need a hotel?"},
		{memory.RoleUser, "Yes please. Actually, I moved to Porto last year, so I'll take the train. Can you book it?"},
		{memory.RoleUser, "Thanks! My favourite colour is green."},
	}
	turns := make([]memory.Record, len(said))
	for i, s := range said {
		turns[i] = memory.NewTurn(id, s.role, s.text, now.Add(time.Duration(i)*time.Minute))
		turns[i].ID = fmt.Sprintf("t%d", i+1)
	}
	return turns
}

// The deterministic default keeps the user's self-describing sentences as
// facts, each with the turn it came from, and names the known fact a new
// one supersedes.
func ExampleRules_Extract() {
	known := memory.NewFact(memory.Identity{Tenant: "acme", User: "sam"}, "My favorite color is blue.", time.Now())
	known.ID = "f1"
	facts, usage, err := extract.Rules{}.Extract(context.Background(), exampleTurns(), []memory.Record{known})
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range facts {
		fmt.Printf("%s %v", f.Text, f.Sources)
		if f.Supersedes != "" {
			fmt.Printf(" supersedes %s", f.Supersedes)
		}
		fmt.Println()
	}
	fmt.Println("model calls:", usage.ModelCalls)
	// Output:
	// I'm planning a trip to Lisbon in June. [t1]
	// I'm vegetarian, by the way. [t1]
	// I moved to Porto last year, so I'll take the train. [t3]
	// My favourite colour is green. [t4] supersedes f1
	// model calls: 0
}

// The default digest is one line per turn, speaker first, within its
// byte budget.
func ExampleRules_Summarize() {
	previous := "User: I need help planning a trip."
	digest, _, err := extract.Rules{}.Summarize(context.Background(), previous, exampleTurns())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(digest)
	// Output:
	// User: I need help planning a trip.
	// User: I'm planning a trip to Lisbon in June. I'm vegetarian, by the way.
	// Assistant: Lovely. Lisbon has great vegetarian food.
	// User: Actually, I moved to Porto last year, so I'll take the train. Can you book it?
	// User: My favourite colour is green.
}

// A model's reply in a fence, with prose around it, a trailing comma and
// cut off by the model's token limit: the whole facts are read.
func ExampleParseFacts() {
	reply := "Here is what I found:\n```json\n" +
		`{"facts": [{"text": "Sam is vegetarian.", "sources": ["T1"]},` +
		`{"text": "Sam moved to Porto in 2023.", "sources": ["T3"], "supersedes": "F1",},` +
		`{"text": "Sam plans a trip to Lis`
	facts, err := extract.ParseFacts(reply)
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range facts {
		fmt.Printf("%q from %v, supersedes %q\n", f.Text, f.Sources, f.Supersedes)
	}

	_, err = extract.ParseFacts("I could not find any facts, sorry.")
	fmt.Println(errors.Is(err, extract.ErrMalformedOutput), errors.Is(err, memory.ErrInvalidArgument))
	// Output:
	// "Sam is vegetarian." from [T1], supersedes ""
	// "Sam moved to Porto in 2023." from [T3], supersedes "F1"
	// true true
}

func ExampleParseDigest() {
	digest, err := extract.ParseDigest("## Digest\n\nSam is planning a trip to Lisbon in June.\nHe is vegetarian.\n", 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(digest)
	// Output:
	// Sam is planning a trip to Lisbon in June.
	// He is vegetarian.
}

// Reconcile makes a model's facts fit the batch: unknown sources dropped
// (a fact with none left gets the whole batch), duplicates merged, known
// facts left out.
func ExampleReconcile() {
	turns := exampleTurns()[:2]
	facts := extract.Reconcile([]extract.Fact{
		{Text: "Sam is vegetarian.", Sources: []string{"t1", "t7"}},
		{Text: "sam is VEGETARIAN", Sources: []string{"t2"}},
		{Text: "Sam likes Lisbon."},
	}, turns, nil)
	for _, f := range facts {
		fmt.Println(f.Text, f.Sources)
	}
	// Output:
	// Sam is vegetarian. [t1 t2]
	// Sam likes Lisbon. [t1 t2]
}
