package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/agentmem/memory/tiers"
	"github.com/agentmem/memory/tiers/agentspec"
)

// localConfig is a run outside a cluster, whatever machine the test runs on.
func localConfig(agentPath string) config {
	return config{
		agentPath: agentPath,
		task:      defaultTask,
		workflow:  "on-call",
		step:      "triage",
		inCluster: func() (*rest.Config, error) { return nil, rest.ErrNotInCluster },
		newClient: func(*rest.Config) (typedcorev1.ConfigMapsGetter, error) {
			panic("no cluster client outside a cluster")
		},
	}
}

// runTwice runs c twice and returns both outputs.
func runTwice(t *testing.T, c config) (first, second string) {
	t.Helper()
	var outs [2]string
	for i := range outs {
		var b bytes.Buffer
		c.out = &b
		if err := run(context.Background(), c); err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, b.String())
		}
		outs[i] = b.String()
	}
	return outs[0], outs[1]
}

// isolate points the embedded default's paths into a temporary directory
// and clears the controller's variables.
func isolate(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("AGENTMEM_DB", filepath.Join(dir, "agent.db"))
	t.Setenv("AGENTMEM_VECTOR_DIR", filepath.Join(dir, "agent-memory"))
	t.Setenv(agentspec.EnvMemoryType, "")
	t.Setenv(agentspec.EnvAgentMemory, "")
	return dir
}

func TestSecondRunRecalls(t *testing.T) {
	for _, tc := range []struct {
		manifest string
		want     []string // in the second run's output
	}{
		{"agent.yaml", []string{
			"Memory:  summary, maxEntries 10, ttl 7d",
			"Storage: SQLite file ",
			"Recalled 1 earlier step(s)",
			"  You are an anomaly monitor.",
			"Answer: Recurring: 1 of the 1 earlier run(s)",
		}},
		{"agent-vector.yaml", []string{
			"Memory:  vector, maxContextTokens 8000, PVC knowledge-retriever-memory",
			"Storage: directory ",
			"Recalled 1 earlier step(s)",
			"  You are a knowledge retrieval agent.",
			"Tool call: vector-search {\"query\":\"p99 latency alert payments API fired 03:12 UTC recurring\",\"k\":3}",
			"  1 match for ",
			"Answer: Recurring: 1 of the 1 earlier run(s)",
			"Source: memory entry ",
		}},
	} {
		t.Run(tc.manifest, func(t *testing.T) {
			dir := isolate(t)
			first, second := runTwice(t, localConfig(tc.manifest))
			if strings.Contains(first, tiers.ContextHeader) || !strings.Contains(first, "Recalled: nothing yet") {
				t.Errorf("the first run recalled something:\n%s", first)
			}
			block := "  " + tiers.ContextHeader + "\n  [on-call/triage] Task: " + defaultTask + " | Result: New: "
			if !strings.Contains(second, block) {
				t.Errorf("the second run's output lacks the recalled block %q:\n%s", block, second)
			}
			for _, w := range tc.want {
				if !strings.Contains(second, w) {
					t.Errorf("the second run's output lacks %q:\n%s", w, second)
				}
			}
			if !strings.Contains(second, dir) {
				t.Errorf("the output does not name the storage under %s:\n%s", dir, second)
			}
		})
	}
}

func TestVectorSearchNotOfferedUnlessListed(t *testing.T) {
	isolate(t)
	data, err := os.ReadFile("agent-vector.yaml")
	if err != nil {
		t.Fatal(err)
	}
	trimmed := strings.Replace(string(data), "    - name: vector-search\n      type: function\n", "", 1)
	if trimmed == string(data) {
		t.Fatal("agent-vector.yaml does not list vector-search as expected")
	}
	path := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(path, []byte(trimmed), 0o600); err != nil {
		t.Fatal(err)
	}
	_, second := runTwice(t, localConfig(path))
	if strings.Contains(second, "Tool call:") || !strings.Contains(second, "  "+tiers.ContextHeader) {
		t.Errorf("want the recalled block and no tool call:\n%s", second)
	}
}

func TestInClusterUsesConfigMap(t *testing.T) {
	isolate(t)
	client := fake.NewClientset().CoreV1()
	c := localConfig("") // the built-in copy of agent.yaml: the test runs in the package directory
	c.inCluster = func() (*rest.Config, error) { return &rest.Config{}, nil }
	c.newClient = func(*rest.Config) (typedcorev1.ConfigMapsGetter, error) { return client, nil }
	c.namespaceFile = filepath.Join(t.TempDir(), "missing")
	first, second := runTwice(t, c)
	for _, out := range []string{first, second} {
		for _, w := range []string{"from agent.yaml (built into the program)", "Cluster: running in a cluster", "Storage: ConfigMap ai-agents/agent-memory-anomaly-monitor"} {
			if !strings.Contains(out, w) {
				t.Errorf("output lacks %q:\n%s", w, out)
			}
		}
	}
	if !strings.Contains(second, "  "+tiers.ContextHeader) {
		t.Errorf("the second run's output lacks the recalled block:\n%s", second)
	}
	cm, err := client.ConfigMaps("ai-agents").Get(context.Background(), "agent-memory-anomaly-monitor", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cm.Data) != 2 {
		t.Errorf("the ConfigMap holds %d lines, want one per run: %v", len(cm.Data), cm.Data)
	}
	if _, err := os.Stat(os.Getenv("AGENTMEM_DB")); !os.IsNotExist(err) {
		t.Errorf("the in-cluster run touched the SQLite file: %v", err)
	}
}

func TestNamespaceFromPod(t *testing.T) {
	isolate(t)
	data, err := os.ReadFile("agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	trimmed := strings.Replace(string(data), "  namespace: ai-agents\n", "", 1)
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.yaml")
	nsFile := filepath.Join(dir, "namespace")
	if err := os.WriteFile(path, []byte(trimmed), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(nsFile, []byte("team-a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset().CoreV1()
	c := localConfig(path)
	c.inCluster = func() (*rest.Config, error) { return &rest.Config{}, nil }
	c.newClient = func(*rest.Config) (typedcorev1.ConfigMapsGetter, error) { return client, nil }
	c.namespaceFile = nsFile
	var b bytes.Buffer
	c.out = &b
	if err := run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Storage: ConfigMap team-a/agent-memory-anomaly-monitor") {
		t.Errorf("want the pod's namespace:\n%s", b.String())
	}
}

func TestMemoryTypeMustAgree(t *testing.T) {
	isolate(t)
	t.Setenv(agentspec.EnvMemoryType, "vector")
	c := localConfig("agent.yaml")
	c.out = &bytes.Buffer{}
	if err := run(context.Background(), c); err == nil || !strings.Contains(err.Error(), "disagrees") {
		t.Errorf("MEMORY_TYPE=vector with a summary manifest: got %v, want a disagreement", err)
	}
}

func TestBadManifest(t *testing.T) {
	for name, body := range map[string]string{
		"wrong kind":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
		"no name":      "apiVersion: purko.io/v1alpha1\nkind: Agent\nspec: {}\n",
		"memory typo":  "apiVersion: purko.io/v1alpha1\nkind: Agent\nmetadata:\n  name: x\nspec:\n  memory:\n    type: summary\n    maxEntry: 3\n",
		"invalid yaml": "kind: [",
	} {
		if _, err := parseAgent([]byte(body)); err == nil {
			t.Errorf("%s: parsed without error", name)
		}
	}
}

func TestBufferAndNoneForget(t *testing.T) {
	for _, typ := range []string{"buffer", "none"} {
		t.Run(typ, func(t *testing.T) {
			isolate(t)
			path := filepath.Join(t.TempDir(), "agent.yaml")
			body := "apiVersion: purko.io/v1alpha1\nkind: Agent\nmetadata:\n  name: reporter\nspec:\n  systemPrompt: Write the report.\n  memory:\n    type: " + typ + "\n"
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, second := runTwice(t, localConfig(path))
			for _, w := range []string{"Agent:   default/reporter", "Memory:  " + typ + "\n", "Storage: none", "Recalled: nothing yet"} {
				if !strings.Contains(second, w) {
					t.Errorf("the second run's output lacks %q:\n%s", w, second)
				}
			}
			if strings.Contains(second, "Saved for next time") {
				t.Errorf("%s memory claims to save:\n%s", typ, second)
			}
		})
	}
}
