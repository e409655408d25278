package extract_test

import (
	"fmt"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
)

// said is one turn of a test conversation.
type said struct {
	role    memory.Role
	text    string
	speaker string // metadata memory.SpeakerKey, or ""
}

var testTime = time.Date(2024, 5, 3, 10, 0, 0, 0, time.UTC)

// conversation returns the turns of a test conversation with the ids t1,
// t2, ..., a minute apart.
func conversation(turns ...said) []memory.Record {
	id := memory.Identity{Tenant: "acme", User: "sam", Session: "s1"}
	out := make([]memory.Record, len(turns))
	for i, s := range turns {
		r := memory.NewTurn(id, s.role, s.text, testTime.Add(time.Duration(i)*time.Minute))
		r.ID = fmt.Sprintf("t%d", i+1)
		if s.speaker != "" {
			r.Metadata = map[string]string{memory.SpeakerKey: s.speaker}
		}
		out[i] = r
	}
	return out
}

func user(text string) said      { return said{role: memory.RoleUser, text: text} }
func assistant(text string) said { return said{role: memory.RoleAssistant, text: text} }

// knownFacts returns facts with the ids k1, k2, ...
func knownFacts(texts ...string) []memory.Record {
	id := memory.Identity{Tenant: "acme", User: "sam"}
	out := make([]memory.Record, len(texts))
	for i, text := range texts {
		out[i] = memory.NewFact(id, text, testTime)
		out[i].ID = fmt.Sprintf("k%d", i+1)
	}
	return out
}

// texts returns the texts of facts.
func texts(facts []extract.Fact) []string {
	out := make([]string, len(facts))
	for i, f := range facts {
		out[i] = f.Text
	}
	return out
}
