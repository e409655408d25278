package inmem

import (
	"fmt"
	"slices"
	"testing"
)

// TestIDIndexCollisions forces every id into one of three slots and checks
// that lookups, removal from the head, middle and tail of a chain, and
// iteration all see exactly the indexed entries.
func TestIDIndexCollisions(t *testing.T) {
	x := newIDIndex()
	x.weak = func(id string) uint64 { return uint64(len(id) % 3) }
	live := map[string]*entry{}
	for i := range 30 {
		e := &entry{id: fmt.Sprintf("id-%d%s", i, "xyz"[:i%3])}
		x.add(e)
		live[e.id] = e
	}
	check := func() {
		t.Helper()
		for id, e := range live {
			if got := x.get(id); got != e {
				t.Fatalf("get(%q) = %p, want %p", id, got, e)
			}
		}
		if got := x.get("absent"); got != nil {
			t.Fatalf("get(absent) = %v, want nil", got)
		}
		var seen []string
		x.each(func(e *entry) { seen = append(seen, e.id) })
		slices.Sort(seen)
		want := make([]string, 0, len(live))
		for id := range live {
			want = append(want, id)
		}
		slices.Sort(want)
		if !slices.Equal(seen, want) {
			t.Fatalf("each saw %v, want %v", seen, want)
		}
	}
	check()
	// Remove in an order that hits chain heads, middles and tails.
	for _, i := range []int{29, 0, 15, 14, 1, 2, 3, 28, 27, 16} {
		id := fmt.Sprintf("id-%d%s", i, "xyz"[:i%3])
		x.remove(live[id])
		delete(live, id)
		if x.get(id) != nil {
			t.Fatalf("%q still found after remove", id)
		}
		check()
	}
	for id, e := range live {
		x.remove(e)
		delete(live, id)
	}
	check()
	if len(x.slots) != 0 {
		t.Fatalf("%d slots left after removing everything", len(x.slots))
	}
}
