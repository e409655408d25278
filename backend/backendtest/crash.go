package backendtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/proctest"
)

// CrashRounds is how many times CrashTest kills its child.
const CrashRounds = 20

var crashScope = memory.Identity{Tenant: "crash", Session: "crash"}

// CrashChild is the body of the child test CrashTest starts: it opens the
// durable store with open and writes records, single and batched, until it
// is killed, printing "ACK <id>" for each record after its Put returns.
// Outside a CrashTest child it skips.
func CrashChild(t *testing.T, open func() (driver.Driver, error)) {
	proctest.Child(t)
	d, err := open()
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Println("READY")
	for i := 0; ; i++ {
		batch := []memory.Record{memory.NewTurn(crashScope, memory.RoleUser, fmt.Sprintf("write %d", i), time.Now())}
		if i%7 == 0 {
			for j := range 50 {
				batch = append(batch, memory.NewTurn(crashScope, memory.RoleTool, fmt.Sprintf("write %d.%d", i, j), time.Now()))
			}
		}
		if err := d.Put(context.Background(), batch); err != nil {
			fmt.Println("ERR", err)
			os.Exit(1)
		}
		for _, r := range batch {
			fmt.Println("ACK", r.ID)
		}
	}
}

// CrashTest kills a writing child process with SIGKILL at a random moment,
// CrashRounds times over one store. The child is this test binary running
// the test named child, which calls CrashChild; env is added to its
// environment so it opens the same store. After each kill the store must
// reopen cleanly with open and hold every write the child acknowledged.
func CrashTest(t *testing.T, child string, env []string, open func() (driver.Driver, error)) {
	if proctest.IsChild() {
		t.Skip("this is the child")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	acked := map[string]bool{}
	for round := range CrashRounds {
		p := proctest.Start(t, child, proctest.Options{Env: env})
		for line := range p.Lines() {
			switch {
			case line == "READY":
				after := time.Duration(20+rng.IntN(300)) * time.Millisecond
				time.AfterFunc(after, p.Kill)
			case strings.HasPrefix(line, "ACK "):
				acked[strings.TrimPrefix(line, "ACK ")] = true
			case strings.HasPrefix(line, "ERR "):
				p.Kill()
				t.Fatalf("round %d: child failed: %s", round, line)
			}
		}
		_, _ = p.Wait() // killed

		d, err := open()
		if err != nil {
			t.Fatalf("round %d: reopening after SIGKILL: %v", round, err)
		}
		q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldSession, Identity: crashScope}}
		recs, err := d.List(context.Background(), q)
		_ = d.Close()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		stored := make(map[string]bool, len(recs))
		for _, r := range recs {
			stored[r.ID] = true
		}
		missing := 0
		for id := range acked {
			if !stored[id] {
				missing++
			}
		}
		if missing > 0 {
			t.Fatalf("round %d: %d of %d acknowledged writes missing after SIGKILL", round, missing, len(acked))
		}
	}
	if len(acked) == 0 {
		t.Fatal("the child acknowledged no write: nothing was tested")
	}
	t.Logf("%d acknowledged writes, all present after %d SIGKILLs", len(acked), CrashRounds)
}
