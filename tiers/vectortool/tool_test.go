package vectortool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/tiers"
	"github.com/agentmem/memory/tiers/vectortool"
)

// langchainTool is langchaingo's tools.Tool interface, spelled out: Tool
// must satisfy it.
type langchainTool interface {
	Name() string
	Description() string
	Call(ctx context.Context, input string) (string, error)
}

var _ langchainTool = (*vectortool.Tool)(nil)

var (
	scanner = memory.Identity{Tenant: "acme", Agent: "kaos://agent/ai/scanner", Session: "run-1"}
	other   = memory.Identity{Tenant: "acme", Agent: "kaos://agent/ai/other", Session: "run-1"}
)

func newMemory(t *testing.T) *tiers.Vector {
	t.Helper()
	v, err := tiers.NewVector(context.Background(), tiers.VectorOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = v.Close() })
	for _, s := range []tiers.Step{
		{Workflow: "scan", Name: "cve", Input: "check openssl", Output: "CVE-2024-1 in openssl, upgrade to 3.0.14"},
		{Workflow: "scan", Name: "cve", Input: "check zlib", Output: "clean"},
	} {
		if err := v.Save(context.Background(), scanner, s); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

func TestToolCall(t *testing.T) {
	v := newMemory(t)
	tool, err := vectortool.New(v, scanner)
	if err != nil {
		t.Fatal(err)
	}
	if tool.Name() != "vector-search" || !strings.Contains(tool.Description(), "cite") {
		t.Fatalf("name %q, description %q", tool.Name(), tool.Description())
	}
	ctx := context.Background()
	want, err := v.Search(ctx, scanner, "openssl upgrade", 1)
	if err != nil || len(want) != 1 {
		t.Fatalf("search: %v, %v", want, err)
	}
	for _, input := range []string{
		`{"query": "openssl upgrade", "k": 1}`,
		` {"query":"openssl upgrade","k":1.0} `,
		`{"k": 1, "query": "  openssl upgrade  "}`,
	} {
		out, err := tool.Call(ctx, input)
		if err != nil {
			t.Fatalf("Call(%s): %v", input, err)
		}
		if !strings.Contains(out, "entry "+want[0].Entry+" (score 3,") || !strings.Contains(out, want[0].Text) || strings.Contains(out, "zlib") {
			t.Fatalf("Call(%s) =\n%s", input, out)
		}
	}
	out, err := tool.Call(ctx, "zlib") // plain text is the query
	if err != nil || !strings.HasPrefix(out, `1 match for "zlib"`) {
		t.Fatalf("plain text: %q, %v", out, err)
	}
	out, err = tool.Call(ctx, `{"query": "kubernetes"}`)
	if err != nil || out != "No memory entries match \"kubernetes\".\n" {
		t.Fatalf("no match: %q, %v", out, err)
	}

	// The tool searches only the scope it was bound to.
	foreign, err := vectortool.New(v, other)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := foreign.Call(ctx, "openssl"); err != nil || !strings.HasPrefix(out, "No memory entries match") {
		t.Fatalf("another agent's tool found %q, %v", out, err)
	}
}

func TestToolCallBadInput(t *testing.T) {
	tool, err := vectortool.New(newMemory(t), scanner)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		input string
		kind  error
	}{
		{``, memory.ErrInvalidArgument},
		{`   `, memory.ErrInvalidArgument},
		{`{`, memory.ErrInvalidArgument},
		{`{"query": "x"`, memory.ErrInvalidArgument},
		{`{"k": 3}`, memory.ErrInvalidArgument},
		{`{"query": ""}`, memory.ErrInvalidArgument},
		{`{"query": "   "}`, memory.ErrInvalidArgument},
		{`{"query": 7}`, memory.ErrInvalidArgument},
		{`{"query": "x", "k": 0}`, memory.ErrInvalidArgument},
		{`{"query": "x", "k": -1}`, memory.ErrInvalidArgument},
		{`{"query": "x", "k": 101}`, memory.ErrInvalidArgument},
		{`{"query": "x", "k": 2.5}`, memory.ErrInvalidArgument},
		{`{"query": "x", "k": 1e400}`, memory.ErrInvalidArgument},
		{`{"query": "x", "k": "many"}`, memory.ErrInvalidArgument},
		{`{"query": "x", "scope": "all"}`, memory.ErrInvalidArgument},
		{`{"query": "x"} {"query": "y"}`, memory.ErrInvalidArgument},
		{`{"query": "--"}`, memory.ErrInvalidArgument},
		{"open\xffssl", memory.ErrInvalidArgument},
		{strings.Repeat("a", vectortool.MaxInputBytes+1), memory.ErrTooLarge},
	} {
		if out, err := tool.Call(context.Background(), tc.input); !errors.Is(err, tc.kind) {
			t.Errorf("Call(%.40q) = %q, %v; want %v", tc.input, out, err, tc.kind)
		}
	}
	if _, err := vectortool.New(nil, scanner); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("New(nil) = %v", err)
	}
	if _, err := vectortool.New(newMemory(t), memory.Identity{Agent: " x"}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("New with a malformed identity = %v", err)
	}
}

func TestDefinition(t *testing.T) {
	def := vectortool.Definition()
	tool := vectortool.LLMTool()
	if tool.Type != "function" || tool.Function == nil || tool.Function.Name != "vector-search" {
		t.Fatalf("LLMTool = %+v", tool)
	}
	data, err := json.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Name       string `json:"name"`
		Parameters struct {
			Type       string                    `json:"type"`
			Properties map[string]map[string]any `json:"properties"`
			Required   []string                  `json:"required"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	p := got.Parameters
	if got.Name != "vector-search" || p.Type != "object" || p.Properties["query"]["type"] != "string" ||
		p.Properties["k"]["type"] != "integer" || len(p.Required) != 1 || p.Required[0] != "query" {
		t.Fatalf("definition JSON: %s", data)
	}
}

func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{`{"query": "a", "k": 3}`, `plain words`, `{"k": 1e3}`, `{"query": null}`, "{\"query\": \"\xff\"}", `{}`, `{"query":"x","k":"5"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		args, err := vectortool.ParseArgs(input)
		if err != nil {
			if !errors.Is(err, memory.ErrInvalidArgument) && !errors.Is(err, memory.ErrTooLarge) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		if strings.TrimSpace(args.Query) != args.Query || args.Query == "" || args.K < 1 || args.K > tiers.MaxSearchResults {
			t.Fatalf("ParseArgs(%q) = %+v", input, args)
		}
	})
}
