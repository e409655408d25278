package configmap_test

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/configmap"
	"github.com/agentmem/memory/tiers"
)

func ExampleNew() {
	ctx := context.Background()
	// In a cluster: kubernetes.NewForConfig(cfg) and its CoreV1().
	client := fake.NewClientset().CoreV1()
	d, err := configmap.New(configmap.Options{Client: client, Namespace: "ai-agents"})
	if err != nil {
		fmt.Println(err)
		return
	}
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	store := backend.NewStore(d, backend.StoreOptions{Clock: func() time.Time { return now }})
	defer store.Close()
	mem, err := tiers.NewSummary(store, tiers.SummaryOptions{MaxEntries: 10})
	if err != nil {
		fmt.Println(err)
		return
	}

	who := memory.Identity{Agent: "kaos://agent/ai-agents/monitor", Session: "run-1"}
	err = mem.Save(ctx, who, tiers.Step{Workflow: "nightly", Name: "scan", Input: "Scan payments", Output: "p99 spike at 03:12"})
	if err != nil {
		fmt.Println(err)
		return
	}
	name, _ := d.ObjectName(who.Agent)
	fmt.Println("stored in", d.Namespace()+"/"+name)

	who.Session = "run-2"
	recalled, err := mem.Recall(ctx, who, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(recalled.Text)
	// Output:
	// stored in ai-agents/agent-memory-monitor
	// [Previous execution context]
	// [nightly/scan] Task: Scan payments | Result: p99 spike at 03:12
	//
	// [Current task follows]
}
