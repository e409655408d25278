package facts_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/tiers/facts"
)

// Of concurrent updates of one fact to different texts exactly one
// succeeds; the others fail with memory.ErrConflict and store nothing.
func TestConcurrentUpdatesOneWins(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		f, _ := newFacts(t, d)
		old := mustAdd(t, f, alice, extract.Fact{Text: "Alice lives in Paris"})[0].Record
		const n = 8
		var wg sync.WaitGroup
		results := make([]memory.Record, n)
		errs := make([]error, n)
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				results[i], errs[i] = f.Update(ctx, alice, old.ID, fmt.Sprintf("Alice lives in city %d", i))
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("updates %d and %d both succeeded", winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, memory.ErrConflict):
				t.Fatalf("update %d: %v, want success or memory.ErrConflict", i, err)
			}
		}
		if winner < 0 {
			t.Fatal("no update succeeded")
		}
		want := fmt.Sprintf("Alice lives in city %d", winner)
		wantTexts(t, "live facts", listTexts(t, f, alice, memory.LevelSession, false), []string{want})
		wantTexts(t, "all facts", listTexts(t, f, alice, memory.LevelSession, true), []string{want, "Alice lives in Paris"})
		if s := mustGet(t, f, alice, memory.LevelSession, old.ID); s.Metadata[facts.SupersededByKey] != results[winner].ID {
			t.Errorf("superseded by %q, want the winner %s", s.Metadata[facts.SupersededByKey], results[winner].ID)
		}
	})
}
