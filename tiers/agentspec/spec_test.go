package agentspec

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/memory"
)

func TestParseDocumentExamples(t *testing.T) {
	for _, c := range []struct {
		name string
		json string
		want Spec
	}{
		{"buffer", `{"type": "buffer"}`, Spec{Type: TypeBuffer}},
		{"summary", `{"type": "summary", "maxEntries": 10, "ttl": "7d"}`, Spec{Type: TypeSummary, MaxEntries: 10, TTL: "7d"}},
		{"vector", `{"type": "vector", "maxContextTokens": 8000, "persistentStorage": {"enabled": true, "volumeClaimRef": "my-agent-memory"}}`,
			Spec{Type: TypeVector, MaxContextTokens: 8000, PersistentStorage: PersistentStorage{Enabled: true, VolumeClaimRef: "my-agent-memory"}}},
		{"none", `{"type": "none"}`, Spec{Type: TypeNone}},
		{"every field", `{"type": "summary", "backend": "configmap", "ttl": "24h", "maxEntries": 3, "maxContextTokens": 500, "retentionPolicy": "oldest-first"}`,
			Spec{Type: TypeSummary, Backend: "configmap", TTL: "24h", MaxEntries: 3, MaxContextTokens: 500, RetentionPolicy: RetentionOldestFirst}},
		{"empty", `{}`, Spec{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse([]byte(c.json))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
	if got := (Spec{}).MemoryType(); got != TypeBuffer {
		t.Errorf("the default type is %q, want buffer", got)
	}
	if got := (Spec{TTL: "7d"}).TTLDuration(); got != 7*24*time.Hour {
		t.Errorf("TTLDuration of 7d = %s", got)
	}
}

// TestParseErrors checks that every invalid value is refused with an
// error naming the field and, where there is a list, the allowed values.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		json string
		kind error
		says []string
	}{
		{`{"type": "vectors"}`, memory.ErrInvalidArgument, []string{"spec.memory.type", `"vectors"`, "buffer, summary, vector, none"}},
		{`{"type": 3}`, memory.ErrInvalidArgument, []string{"spec.memory.type", "a string"}},
		{`{"ttl": "a week"}`, memory.ErrInvalidArgument, []string{"spec.memory.ttl", "1h, 24h or 7d"}},
		{`{"ttl": "-1h"}`, memory.ErrInvalidArgument, []string{"spec.memory.ttl"}},
		{`{"maxEntries": -1}`, memory.ErrInvalidArgument, []string{"spec.memory.maxEntries"}},
		{`{"maxEntries": "10"}`, memory.ErrInvalidArgument, []string{"spec.memory.maxEntries", "an integer"}},
		{`{"maxEntries": 1.5}`, memory.ErrInvalidArgument, []string{"spec.memory.maxEntries"}},
		{`{"maxContextTokens": -5}`, memory.ErrInvalidArgument, []string{"spec.memory.maxContextTokens"}},
		{`{"retentionPolicy": "lru"}`, memory.ErrInvalidArgument, []string{"spec.memory.retentionPolicy", "oldest-first"}},
		{`{"maxEntry": 10}`, memory.ErrInvalidArgument, []string{`"maxEntry"`, "maxEntries"}},
		{`{"persistentStorage": {"enabled": "yes"}}`, memory.ErrInvalidArgument, []string{"spec.memory.persistentStorage.enabled", "true or false"}},
		{`{"type": "vector", "persistentStorage": {"enabled": true}}`, memory.ErrInvalidArgument, []string{"persistentStorage.volumeClaimRef"}},
		{`{"type": "vector", "persistentStorage": {"enabled": true, "volumeClaimRef": "My_PVC"}}`, memory.ErrInvalidArgument, []string{"persistentStorage.volumeClaimRef", `"My_PVC"`}},
		{`{"type": "summary", "persistentStorage": {"enabled": true, "volumeClaimRef": "pvc"}}`, memory.ErrInvalidArgument, []string{"spec.memory.persistentStorage", "vector"}},
		{`{"type": "buffer"} {"type": "none"}`, memory.ErrInvalidArgument, []string{"after the object"}},
		{"type: summary\ntype: vector\n", memory.ErrInvalidArgument, []string{"already set"}},
		{"type: [unclosed", memory.ErrInvalidArgument, []string{"YAML"}},
		{"type: summary\nmaxEntries: ten\n", memory.ErrInvalidArgument, []string{"spec.memory.maxEntries", "an integer"}},
		{`["buffer"]`, memory.ErrInvalidArgument, []string{"spec.memory"}},
		{`{"type": "buffer"`, memory.ErrInvalidArgument, []string{"spec.memory"}},
		{`{"backend": "` + strings.Repeat("x", MaxSpecBytes) + `"}`, memory.ErrTooLarge, []string{"limit"}},
		{"{\"backend\": \"a\xffb\"}", memory.ErrInvalidArgument, []string{"not valid UTF-8"}}, // JSON would repair it
		{"type: buffer\nbackend: a\xffb\n", memory.ErrInvalidArgument, []string{"not valid UTF-8"}},
	} {
		_, err := Parse([]byte(c.json))
		if !errors.Is(err, c.kind) {
			t.Errorf("Parse(%.60s) = %v, want %v", c.json, err, c.kind)
			continue
		}
		for _, s := range c.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("Parse(%.60s): error %q does not say %q", c.json, err, s)
			}
		}
	}
}

// The document's own spec.memory blocks, in YAML as it writes them.
const (
	docSummaryYAML = `type: summary
maxEntries: 10        # keep the last 10 summaries
ttl: 7d               # discard entries older than 7 days
`
	docVectorYAML = `type: vector
maxContextTokens: 8000
persistentStorage:
  enabled: true
  volumeClaimRef: my-agent-memory   # PVC must exist in the same namespace
`
	docAgentYAML = `apiVersion: purko.io/v1alpha1
kind: Agent
metadata:
  name: knowledge-retriever
  namespace: ai-agents
spec:
  type: retriever
  role: knowledge-retriever
  model:
    provider: anthropic
    name: claude-sonnet-4-6
    temperature: 0.1
  autonomyLevel: supervised
  systemPrompt: |
    You are a knowledge retrieval agent. Use vector-search to find
    relevant past findings before answering. Always cite the
    source entry from memory when referencing past data.
  memory:
    type: vector
    maxContextTokens: 8000
    persistentStorage:
      enabled: true
      volumeClaimRef: knowledge-retriever-memory
  tools:
    - name: vector-search
      type: function
    - name: list_resources
      type: mcp
`
)

func TestParseYAML(t *testing.T) {
	got, err := Parse([]byte(docSummaryYAML))
	if err != nil {
		t.Errorf("the document's summary block: %v", err)
	} else if diff := cmp.Diff(Spec{Type: TypeSummary, MaxEntries: 10, TTL: "7d"}, got); diff != "" {
		t.Errorf("the document's summary block (-want +got):\n%s", diff)
	}
	got, err = Parse([]byte(docVectorYAML))
	want := Spec{Type: TypeVector, MaxContextTokens: 8000, PersistentStorage: PersistentStorage{Enabled: true, VolumeClaimRef: "my-agent-memory"}}
	if err != nil {
		t.Errorf("the document's vector block: %v", err)
	} else if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the document's vector block (-want +got):\n%s", diff)
	}
	got, err = ParseManifest([]byte(docAgentYAML))
	want.PersistentStorage.VolumeClaimRef = "knowledge-retriever-memory"
	if err != nil {
		t.Errorf("the document's Agent: %v", err)
	} else if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the document's Agent (-want +got):\n%s", diff)
	}
	got, err = ParseManifest([]byte("kind: Agent\nspec:\n  role: writer\n"))
	if err != nil || got.MemoryType() != TypeBuffer {
		t.Errorf("an Agent without spec.memory = %+v, %v; want the buffer default", got, err)
	}
	if _, err := ParseManifest([]byte("spec:\n  memory:\n    type: vectr\n")); !errors.Is(err, memory.ErrInvalidArgument) || !strings.Contains(err.Error(), "spec.memory.type") {
		t.Errorf("an Agent with a bad type = %v, want an error naming spec.memory.type", err)
	}
	if _, err := ParseManifest([]byte("{\"spec\": {\"memory\": {\"backend\": \"\xff\"}}}")); !errors.Is(err, memory.ErrInvalidArgument) || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("an Agent that is not valid UTF-8 = %v, want ErrInvalidArgument", err)
	}
	if err := (Spec{Backend: "\xff"}).Validate(); !errors.Is(err, memory.ErrInvalidArgument) || !strings.Contains(err.Error(), "spec.memory.backend") {
		t.Errorf("Validate of a backend that is not valid UTF-8 = %v, want ErrInvalidArgument naming spec.memory.backend", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(docSummaryYAML))
	f.Add([]byte(docVectorYAML))
	for _, s := range []string{`{"type":"summary","maxEntries":10,"ttl":"7d"}`, `{"type":"vector","persistentStorage":{"enabled":true,"volumeClaimRef":"a"}}`, `{}`, `{"ttl":"2w"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			var me *memory.Error
			if !errors.As(err, &me) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("Parse accepted %q, which does not validate: %v", data, err)
		}
	})
}
