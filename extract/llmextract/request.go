package llmextract

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/agentmem/memory"
)

// turnJSON is one turn as the prompts describe it.
type turnJSON struct {
	ID   string `json:"id,omitempty"`
	Role string `json:"role"`
	Name string `json:"name,omitempty"`
	Time string `json:"time,omitempty"`
	Text string `json:"text"`
}

// factJSON is one known fact as FactPrompt describes it.
type factJSON struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// factRequest is the user message of Extract.
type factRequest struct {
	Turns      []turnJSON `json:"turns"`
	KnownFacts []factJSON `json:"known_facts"`
}

// digestRequest is the user message of Summarize.
type digestRequest struct {
	PreviousDigest string     `json:"previous_digest"`
	Turns          []turnJSON `json:"turns"`
	MaxWords       int        `json:"max_words"`
}

// turnLabel and factLabel are the short ids the model sees: T1, T2, ...
// for turns and F1, F2, ... for known facts, in the order given. Short
// labels cost fewer tokens than record ids and are copied back reliably.
func turnLabel(i int) string { return "T" + strconv.Itoa(i+1) }
func factLabel(i int) string { return "F" + strconv.Itoa(i+1) }

// turnsJSON renders turns for a prompt; labelled says whether they carry
// their labels (Summarize needs none).
func turnsJSON(turns []memory.Record, labelled bool) []turnJSON {
	out := make([]turnJSON, len(turns))
	for i, t := range turns {
		out[i] = turnJSON{Role: t.Label, Name: t.Metadata[memory.SpeakerKey], Text: t.Content}
		if labelled {
			out[i].ID = turnLabel(i)
		}
		if !t.Created.IsZero() {
			out[i].Time = t.Created.UTC().Format(time.RFC3339)
		}
	}
	return out
}

// marshal renders v as the JSON of a user message. The values are checked
// text and plain structs, so it cannot fail; HTML characters are left
// as they are, which models read more easily.
func marshal(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func factMessage(turns, known []memory.Record) string {
	req := factRequest{Turns: turnsJSON(turns, true), KnownFacts: make([]factJSON, len(known))}
	for i, k := range known {
		req.KnownFacts[i] = factJSON{ID: factLabel(i), Text: k.Content}
	}
	return marshal(req)
}

func digestMessage(previous string, turns []memory.Record, words int) string {
	return marshal(digestRequest{PreviousDigest: previous, Turns: turnsJSON(turns, false), MaxWords: words})
}
