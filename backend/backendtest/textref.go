package backendtest

import (
	"context"
	"testing"
	"time"

	"github.com/agentmem/memory/backend/driver"
)

// SameTextRankings checks, for a driver's own tests, that d ranks each of
// texts within q's filter as the lexical engine's reference ranks the
// records List returns for it, k at a time: the same records, order and
// scores. The reference's corpus is what List returns, so the store must
// hold no expired record matching q.
func SameTextRankings(t testing.TB, d driver.Driver, q driver.Query, texts []string, k int) {
	t.Helper()
	ts, ok := d.(driver.TextSearcher)
	if !ok {
		t.Fatalf("%T does not implement driver.TextSearcher", d)
	}
	ctx := context.Background()
	q.Limit = 0
	all, err := d.List(ctx, q)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	now := time.Now()
	for _, text := range texts {
		got, err := ts.SearchText(ctx, q, text, k)
		if err != nil {
			t.Fatalf("SearchText(%q): %v", text, err)
		}
		want := referenceText(t, all, q, text, k, now)
		sameTextMatches(t, "SearchText("+text+")", got, want)
	}
}
