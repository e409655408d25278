// Command kubernetes-agent is an agent loop driven by an Agent manifest:
// it reads spec.memory, spec.systemPrompt and spec.tools from the YAML,
// loads memory at the start of its step, runs the step, and saves memory
// at the end, as the executor of the per-agent memory document does.
//
// Where memory lives depends on where the program runs. Inside a cluster
// (rest.InClusterConfig succeeds) summary memory is the ConfigMap
// agent-memory-<agent-name> in the manifest's namespace (the pod's
// namespace when the manifest names none), and vector memory is the PVC
// mounted at /var/run/agent-memory. Anywhere else it falls back to the
// embedded default: summary memory in one SQLite file in the user cache
// directory (AGENTMEM_DB overrides), vector memory in a directory beside
// it (AGENTMEM_VECTOR_DIR overrides). MEMORY_TYPE, when the controller
// sets it, must agree with spec.memory.type.
//
// Run it twice from the repository root; the second run recalls the first
// as the [Previous execution context] block in its system prompt:
//
//	go run ./examples/kubernetes-agent
//	go run ./examples/kubernetes-agent
//
// With the vector manifest the model is also offered the vector-search
// tool, and calls it once before answering:
//
//	go run ./examples/kubernetes-agent -agent examples/kubernetes-agent/agent-vector.yaml
//
// Flags: -agent names the manifest (default examples/kubernetes-agent/agent.yaml
// under the working directory, else the copy built into the program),
// -task the step's input, -workflow and -step the names its summary is
// saved under. In a cluster the pod's service account needs the
// permissions in rbac.yaml.
//
// The model is a scripted stand-in (no network, no API key): any
// langchaingo llms.Model plugs in where it is created.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/configmap"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/tiers"
	"github.com/agentmem/memory/tiers/agentspec"
	"github.com/agentmem/memory/tiers/vectortool"
)

// defaultTask is the step's input when -task is not given.
const defaultTask = "Is the p99 latency alert on the payments API (fired 03:12 UTC) new or recurring?"

// namespaceFile is where a pod finds its own namespace.
const namespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// config is one run's settings: the flags, and the cluster access the
// tests replace.
type config struct {
	agentPath string
	task      string
	workflow  string
	step      string
	out       io.Writer
	// inCluster returns the in-cluster configuration, or an error outside
	// a cluster.
	inCluster func() (*rest.Config, error)
	// newClient reaches the ConfigMaps with an in-cluster configuration.
	newClient func(*rest.Config) (typedcorev1.ConfigMapsGetter, error)
	// namespaceFile holds the pod's namespace.
	namespaceFile string
}

func main() {
	c := config{
		out:           os.Stdout,
		inCluster:     rest.InClusterConfig,
		newClient:     clusterClient,
		namespaceFile: namespaceFile,
	}
	flag.StringVar(&c.agentPath, "agent", "", "the Agent manifest (default "+defaultAgentPath+", or the copy built into the program)")
	flag.StringVar(&c.task, "task", defaultTask, "the step's task")
	flag.StringVar(&c.workflow, "workflow", "on-call", "the workflow name, in the saved summary")
	flag.StringVar(&c.step, "step", "triage", "the step name, in the saved summary")
	flag.Parse()
	if err := run(context.Background(), c); err != nil {
		fmt.Fprintln(os.Stderr, "kubernetes-agent:", err)
		os.Exit(1)
	}
}

// clusterClient builds a clientset from the in-cluster configuration.
func clusterClient(cfg *rest.Config) (typedcorev1.ConfigMapsGetter, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return cs.CoreV1(), nil
}

func run(ctx context.Context, c config) error {
	out := c.out
	a, err := loadAgent(c.agentPath)
	if err != nil {
		return err
	}

	// 1. Where are we? In a cluster the manifest's namespace, else the
	//    pod's, holds the agent's ConfigMap.
	restConfig, clusterErr := c.inCluster()
	inCluster := clusterErr == nil
	ns := a.Namespace
	if ns == "" && inCluster {
		if b, err := os.ReadFile(c.namespaceFile); err == nil {
			ns = strings.TrimSpace(string(b))
		}
	}
	if ns == "" {
		ns = "default"
	}
	fmt.Fprintf(out, "Agent:   %s/%s, from %s\n", ns, a.Name, a.Source)
	switch {
	case inCluster:
		fmt.Fprintln(out, "Cluster: running in a cluster")
	case errors.Is(clusterErr, rest.ErrNotInCluster):
		fmt.Fprintln(out, "Cluster: not in a cluster, using the embedded default")
	default:
		fmt.Fprintf(out, "Cluster: no in-cluster configuration (%v), using the embedded default\n", clusterErr)
	}

	// 2. Who is acting. A real executor sets this from the pod's verified
	//    identity, never from what a model says.
	who := memory.Identity{
		Agent:   "kaos://agent/" + ns + "/" + a.Name,
		Session: fmt.Sprintf("run-%d", time.Now().UnixNano()),
	}

	// 3. Build the memory spec.memory describes: NewMemory checks it
	//    against MEMORY_TYPE; we supply the storage for where we run. Every
	//    type takes a store, the one source of the posture (here the zero
	//    posture; a host that requires a principal sets it once, here):
	//    summary memory keeps its lines in it, the other types nothing, so
	//    for them a store over the in-memory driver does.
	storeOpts := backend.StoreOptions{}
	env := agentspec.EnvironmentFromOS()
	typ := a.Memory.MemoryType()
	if env.MemoryType != "" {
		typ = agentspec.MemoryType(env.MemoryType)
	}
	fmt.Fprintf(out, "Memory:  %s\n", describeSpec(typ, a.Memory))
	var store *backend.Store
	switch typ {
	case agentspec.TypeSummary:
		if store, err = summaryStore(c, a, ns, who, inCluster, restConfig, storeOpts); err != nil {
			return err
		}
	case agentspec.TypeVector:
		dir, err := vectorDir(inCluster)
		if err != nil {
			return err
		}
		env.MountPath = dir
		fmt.Fprintf(out, "Storage: directory %s (%s)\n", dir, vectorWhere(inCluster))
		store = backend.NewStore(inmem.New(inmem.Options{}), storeOpts)
	default:
		fmt.Fprintln(out, "Storage: none, nothing outlives the step")
		store = backend.NewStore(inmem.New(inmem.Options{}), storeOpts)
	}
	defer store.Close()
	mem, err := agentspec.NewMemory(ctx, store, a.Memory, env)
	if err != nil {
		return err
	}
	if cl, ok := mem.(io.Closer); ok {
		defer cl.Close()
	}

	// 4. Step start: load memory for the task and prepend it to the system
	//    prompt.
	recalled, err := mem.Recall(ctx, who, c.task)
	if err != nil {
		return err
	}
	system := tiers.Prepend(recalled, a.SystemPrompt)
	if recalled.Text == "" {
		fmt.Fprintln(out, "\nRecalled: nothing yet, this is the agent's first run.")
	} else {
		fmt.Fprintf(out, "\nRecalled %d earlier step(s); the system prompt the model gets:\n\n%s\n", len(recalled.Records), indent(system))
	}

	// 5. Run the step. The vector-search tool is offered when the memory
	//    is vector and spec.tools lists it; it searches as who, whatever
	//    the model passes.
	var search *vectortool.Tool
	if v, ok := mem.(*tiers.Vector); ok && a.hasTool(vectortool.Name) {
		if search, err = vectortool.New(v, who); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "\nTask:   %s\n", c.task)
	var model llms.Model = scriptedModel{}
	output, err := runStep(ctx, model, system, c.task, search, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Answer: %s\n", output)

	// 6. Step end: save. Summary and vector memory keep a one-line
	//    summary; buffer and none keep nothing.
	step := tiers.Step{Workflow: c.workflow, Name: c.step, Input: c.task, Output: output}
	if err := mem.Save(ctx, who, step); err != nil {
		return err
	}
	if typ == agentspec.TypeSummary || typ == agentspec.TypeVector {
		fmt.Fprintf(out, "\nSaved for next time: %s\n", step.Summary())
		fmt.Fprintln(out, "Run the same command again to see it recalled.")
	}
	return nil
}

// summaryStore opens the store of summary memory, with opts: the agent's
// ConfigMap in a cluster, the SQLite file otherwise.
func summaryStore(c config, a agent, ns string, who memory.Identity, inCluster bool, restConfig *rest.Config, opts backend.StoreOptions) (*backend.Store, error) {
	if inCluster {
		client, err := c.newClient(restConfig)
		if err != nil {
			return nil, err
		}
		d, err := configmap.New(configmap.Options{Namespace: ns, Client: client,
			MaxEntries: a.Memory.MaxEntries, TTL: a.Memory.TTLDuration()})
		if err != nil {
			return nil, err
		}
		name, err := d.ObjectName(who.Agent)
		if err != nil {
			d.Close()
			return nil, err
		}
		fmt.Fprintf(c.out, "Storage: ConfigMap %s/%s\n", ns, name)
		return backend.NewStore(d, opts), nil
	}
	path, err := databasePath()
	if err != nil {
		return nil, err
	}
	d, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(c.out, "Storage: SQLite file %s (AGENTMEM_DB overrides)\n", path)
	return backend.NewStore(d, opts), nil
}

// databasePath is $AGENTMEM_DB, or kubernetes-agent.db in the user's cache
// directory (the system temp directory when there is none).
func databasePath() (string, error) {
	if p := os.Getenv("AGENTMEM_DB"); p != "" {
		return p, nil
	}
	dir, err := cacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "kubernetes-agent.db"), nil
}

// vectorDir is $AGENTMEM_VECTOR_DIR; else the PVC mount in a cluster, and
// kubernetes-agent-memory in the user's cache directory outside one.
func vectorDir(inCluster bool) (string, error) {
	if p := os.Getenv("AGENTMEM_VECTOR_DIR"); p != "" {
		return p, nil
	}
	if inCluster {
		return tiers.DefaultVectorDir, nil
	}
	dir, err := cacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "kubernetes-agent-memory"), nil
}

// vectorWhere says what the vector directory is, for the output.
func vectorWhere(inCluster bool) string {
	switch {
	case os.Getenv("AGENTMEM_VECTOR_DIR") != "":
		return "from AGENTMEM_VECTOR_DIR"
	case inCluster:
		return "the PVC mount"
	}
	return "AGENTMEM_VECTOR_DIR overrides"
}

// cacheDir is agentmem in the user's cache directory (the system temp
// directory when there is none), created if missing.
func cacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "agentmem")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return dir, nil
}

// describeSpec renders the memory type and the spec fields that are set.
func describeSpec(typ agentspec.MemoryType, s agentspec.Spec) string {
	parts := []string{string(typ)}
	if s.MaxEntries > 0 {
		parts = append(parts, fmt.Sprintf("maxEntries %d", s.MaxEntries))
	}
	if s.TTL != "" {
		parts = append(parts, "ttl "+s.TTL)
	}
	if s.MaxContextTokens > 0 {
		parts = append(parts, fmt.Sprintf("maxContextTokens %d", s.MaxContextTokens))
	}
	if ref := s.PersistentStorage.VolumeClaimRef; ref != "" {
		parts = append(parts, "PVC "+ref)
	}
	return strings.Join(parts, ", ")
}

// indent prefixes every non-empty line of s with two spaces.
func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	return strings.Join(lines, "\n")
}
