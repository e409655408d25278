package backendtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/proctest"
)

// claimCrashModeEnv tells a child of ClaimCrashTest how to behave.
const claimCrashModeEnv = "AGENTMEM_CLAIM_CRASH_MODE"

// ClaimCrashRounds is how many child processes ClaimCrashTest kills.
const ClaimCrashRounds = 6

const (
	claimCrashQueue = "crash"
	// claimCrashPerRound is how many new items each round adds.
	claimCrashPerRound = 40
	claimCrashItems    = claimCrashPerRound * ClaimCrashRounds
	// claimCrashLease is the child's lease. The parent checks expiry on a
	// fake clock, so the lease may be long: it never lapses in real time
	// while the test runs.
	claimCrashLease = 10 * time.Minute
)

// ClaimCrashChild is the body of the child test ClaimCrashTest starts: it
// opens the durable store with open, on the real clock, and claims items
// of the crash queue, printing "LEASE <id> <token> <expiry in unix
// nanoseconds>" for each claim once Claim returns, and completing about
// half of them (never the first of a Claim) between "COMPLETING <id>" and
// "DONE <id>". In a round that holds, it prints "HELD" after a few claims,
// or when nothing is left to claim, and waits to be killed; otherwise it
// claims until it is killed, or prints "EMPTY" and waits when nothing is
// left. Outside a ClaimCrashTest child it skips.
func ClaimCrashChild(t *testing.T, open func() (driver.Driver, error)) {
	proctest.Child(t)
	mode := os.Getenv(claimCrashModeEnv)
	hold, seedText, _ := strings.Cut(mode, ":")
	seed, _ := strconv.ParseUint(seedText, 10, 64)
	rng := rand.New(rand.NewPCG(seed, seed))
	d, err := open()
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	cl, ok := d.(driver.Claimer)
	if !ok {
		fmt.Printf("ERR the driver (%T) does not implement driver.Claimer\n", d)
		os.Exit(1)
	}
	ctx := context.Background()
	fmt.Println("READY")
	claims := 3 + rng.IntN(4)
	for i := 0; ; i++ {
		if hold == "hold" && i == claims {
			fmt.Println("HELD")
			select {}
		}
		ls, err := cl.Claim(ctx, claimCrashQueue, 1+rng.IntN(8), claimCrashLease)
		if err != nil {
			fmt.Println("ERR", err)
			os.Exit(1)
		}
		if len(ls) == 0 && hold == "hold" {
			fmt.Println("HELD")
			select {}
		}
		if len(ls) == 0 {
			fmt.Println("EMPTY")
			select {}
		}
		for _, l := range ls {
			fmt.Println("LEASE", l.ID, l.Token, l.Expires.UnixNano())
		}
		for i, l := range ls {
			if i == 0 || rng.IntN(2) == 0 {
				continue
			}
			fmt.Println("COMPLETING", l.ID)
			if err := cl.Complete(ctx, l); err != nil {
				fmt.Println("ERR", err)
				os.Exit(1)
			}
			fmt.Println("DONE", l.ID)
		}
		if hold != "hold" {
			time.Sleep(time.Duration(rng.IntN(2)) * time.Millisecond)
		}
	}
}

// crashRound is what the parent learns from one child's output.
type crashRound struct {
	leases     map[string]driver.Lease // the child's latest claim of each item
	completing map[string]bool         // Complete called
	done       map[string]bool         // Complete returned
	held       bool
}

// ClaimCrashTest proves that claims survive the death of the process that
// made them, and lapse: ClaimCrashRounds times, a child process claims
// items of one queue (each round adds new ones to those earlier children
// left) with long leases (reporting each claim on its
// standard output once Claim returns), completes some, and is killed with
// SIGKILL: in some rounds while it holds its claims idly, in others at a
// random moment while it claims and completes. The child is this test
// binary running the test named child, which calls ClaimCrashChild; env
// is added to its environment so it opens the same store.
//
// The parent opens the store once with open, on a fake clock. While a
// holding child is alive, the parent claims everything else at once: the
// child holds no lock. After each kill it checks, by its clock, that none
// of the items the dead child held is claimable one nanosecond before
// their lease lapses, that they are at the instant it does, that the dead
// child's tokens then fail with memory.ErrConflict, and that no item the
// child completed ever comes back. It releases what it claimed for the
// next child. At the end it completes everything left, and checks that
// every item was completed exactly once, by a child or by itself.
func ClaimCrashTest(t *testing.T, child string, env []string, open func(clock memory.Clock) (driver.Driver, error)) {
	if proctest.IsChild() {
		t.Skip("this is the child")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(SeedEnv); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("random seed %d (set %s=%d to replay the children's choices)", seed, SeedEnv, seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	clk := &fakeClock{now: time.Now()}
	d, err := open(clk.Now)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	cl, ok := d.(driver.Claimer)
	if !ok {
		t.Fatalf("the driver (%T) does not implement driver.Claimer", d)
	}
	ctx := context.Background()
	var items []driver.Work
	for i := range claimCrashItems {
		items = append(items, workItem(claimCrashQueue, fmt.Sprintf("crash-%03d", i), t0.Add(time.Duration(i)*time.Millisecond)))
	}

	completed := map[string]bool{}  // by a child: Complete returned
	completing := map[string]bool{} // by a child: Complete called
	held := 0
	for round := range ClaimCrashRounds {
		mode := "run"
		if round%2 == 0 {
			mode = "hold"
		}
		fresh := items[round*claimCrashPerRound : (round+1)*claimCrashPerRound]
		mustEnqueue(t, cl, fmt.Sprintf("round %d's items", round), fresh, len(fresh))
		cr := runCrashChild(t, child, env, fmt.Sprintf("%s:%d", mode, rng.Uint64()), rng, func(cr crashRound) {
			// The child lives and holds its claims: everything else is
			// claimable, at once, and nothing it holds.
			clk.Set(time.Now())
			got := claimAll(t, cl, "claim beside a live child")
			for _, l := range got {
				if cr.leases[l.ID].Token != "" && !cr.completing[l.ID] {
					t.Errorf("round %d: item %s was claimable while a live child held it", round, l.ID)
				}
			}
			settleAll(t, "Release", got, cl.Release)
		})
		killed := time.Now()
		for id := range cr.completing {
			completing[id] = true
		}
		for id := range cr.done {
			completed[id] = true
		}
		var dead []driver.Lease // claims the dead child held
		for id, l := range cr.leases {
			if !cr.completing[id] {
				dead = append(dead, l)
			}
		}
		slices.SortFunc(dead, func(a, b driver.Lease) int { return a.Expires.Compare(b.Expires) })
		if mode == "hold" && (!cr.held || len(dead) == 0) {
			t.Fatalf("round %d: the child held no claims when it was killed (it reported %d claims)", round, len(cr.leases))
		}
		held += len(dead)
		t.Logf("round %d (%s): the child claimed %d items, completed %d, and died holding %d", round, mode, len(cr.leases), len(cr.done), len(dead))

		check := func(what string, at time.Time, mustHave, mustNotHave []driver.Lease, stale bool) {
			t.Helper()
			clk.Set(at)
			got := claimAll(t, cl, what)
			ids := map[string]bool{}
			for _, l := range got {
				ids[l.ID] = true
				if completed[l.ID] {
					t.Errorf("round %d, %s: item %s was claimed again after a child completed it", round, what, l.ID)
				}
			}
			for _, l := range mustHave {
				if !ids[l.ID] {
					t.Errorf("round %d, %s: item %s, which the dead child held until %s, is not claimable", round, what, l.ID, l.Expires.Format(time.RFC3339Nano))
				}
			}
			for _, l := range mustNotHave {
				if ids[l.ID] {
					t.Errorf("round %d, %s: item %s was claimable although the dead child's lease on it runs until %s", round, what, l.ID, l.Expires.Format(time.RFC3339Nano))
				}
			}
			if stale {
				for _, l := range dead {
					if err := cl.Complete(ctx, l); !errors.Is(err, memory.ErrConflict) {
						t.Errorf("round %d: Complete with the dead child's token for %s after the item was claimed again: got %v, want memory.ErrConflict", round, l.ID, err)
					}
				}
			}
			settleAll(t, "Release", got, cl.Release)
		}
		if len(dead) > 0 {
			first := dead[0].Expires
			var lapsed []driver.Lease
			for _, l := range dead {
				if l.Expires.Equal(first) {
					lapsed = append(lapsed, l)
				}
			}
			check("claim 1ns before the first lease of the dead child lapses", first.Add(-time.Nanosecond), nil, dead, false)
			check("claim the instant the first lease of the dead child lapses", first, lapsed, dead[len(lapsed):], false)
		}
		// The dead child's tokens fail once its items were claimed again.
		check("claim once every lease of the dead child lapsed", killed.Add(claimCrashLease), dead, nil, true)
	}
	if held == 0 {
		t.Fatal("no child died holding a claim: nothing was tested")
	}

	// Everything left completes once; together with the children's
	// completions, every item exactly once.
	clk.Set(time.Now().Add(24 * time.Hour))
	final := map[string]bool{}
	for {
		got := claimAll(t, cl, "final claim")
		if len(got) == 0 {
			break
		}
		for _, l := range got {
			if final[l.ID] {
				t.Errorf("item %s was claimed again after the parent completed it", l.ID)
			}
			final[l.ID] = true
		}
		settleAll(t, "final Complete", got, cl.Complete)
	}
	for _, w := range items {
		switch {
		case completed[w.ID] && final[w.ID]:
			t.Errorf("item %s was completed by a child and again by the parent", w.ID)
		case !completing[w.ID] && !final[w.ID]:
			t.Errorf("item %s vanished: no child completed it, and the parent could not claim it", w.ID)
		}
	}
	t.Logf("%d items: %d completed by the children, %d by the parent; %d claims held by killed children became claimable exactly when their lease lapsed",
		len(items), len(completed), len(final), held)
}

// runCrashChild runs one child process in the given mode until it is
// killed, calling whileHeld (with the child alive) when it reports that
// it holds its claims, and returns what it reported.
func runCrashChild(t *testing.T, child string, env []string, mode string, rng *rand.Rand, whileHeld func(crashRound)) crashRound {
	t.Helper()
	p := proctest.Start(t, child, proctest.Options{Env: append(slices.Clip(env), claimCrashModeEnv+"="+mode)})
	cr := crashRound{leases: map[string]driver.Lease{}, completing: map[string]bool{}, done: map[string]bool{}}
	for line := range p.Lines() {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "READY":
			if !strings.HasPrefix(mode, "hold:") {
				after := time.Duration(2+rng.IntN(40)) * time.Millisecond
				time.AfterFunc(after, p.Kill)
			}
		case "LEASE":
			if len(f) != 4 {
				continue // cut short by the kill
			}
			ns, err := strconv.ParseInt(f[3], 10, 64)
			if err != nil {
				continue
			}
			cr.leases[f[1]] = driver.Lease{Work: driver.Work{Queue: claimCrashQueue, ID: f[1]}, Token: f[2], Expires: time.Unix(0, ns).UTC()}
		case "COMPLETING":
			if len(f) == 2 {
				cr.completing[f[1]] = true
			}
		case "DONE":
			if len(f) == 2 {
				cr.done[f[1]] = true
			}
		case "HELD":
			cr.held = true
			whileHeld(cr)
			p.Kill()
		case "EMPTY":
			p.Kill()
		case "ERR":
			p.Kill()
			t.Fatalf("child failed: %s", line)
		}
	}
	_, _ = p.Wait() // killed
	return cr
}

// settleAll calls fn (Release or Complete) on every lease of ls, a few at
// a time, and stops the test on error.
func settleAll(t *testing.T, what string, ls []driver.Lease, fn func(context.Context, driver.Lease) error) {
	t.Helper()
	errs := make(chan error, len(ls))
	next := make(chan driver.Lease)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for l := range next {
				if err := fn(context.Background(), l); err != nil {
					errs <- fmt.Errorf("%s of %s: %w", what, l.ID, err)
				}
			}
		})
	}
	for _, l := range ls {
		next <- l
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

// claimAll claims every claimable item of the crash queue for a minute.
func claimAll(t *testing.T, cl driver.Claimer, what string) []driver.Lease {
	t.Helper()
	ls, err := cl.Claim(context.Background(), claimCrashQueue, claimCrashItems, time.Minute)
	if err != nil {
		t.Fatalf("%s: Claim: %v", what, err)
	}
	return ls
}
