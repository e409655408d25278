package qdrant_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/qdrant"
	"github.com/agentmem/memory/internal/qdrantserver"
)

// testClock is a clock the tests set.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) read() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// openWork returns a driver over collection "mem" on a server of its own
// under a clock the test sets, a second driver (a replica: a client of
// its own) on the same collection and clock, and a client of the server.
func openWork(t *testing.T) (d, other *qdrant.Driver, c *qc.Client, clk *testClock) {
	t.Helper()
	clk = &testClock{now: t0}
	host, port := qdrantserver.Start(t)
	c = newClient(t, host, port)
	var ds [2]*qdrant.Driver
	for i := range ds {
		var err error
		ds[i], err = qdrant.New(context.Background(), qdrant.Options{Client: newClient(t, host, port), Collection: "mem", Clock: clk.read})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		t.Cleanup(func() { _ = ds[i].Close() })
	}
	return ds[0], ds[1], c, clk
}

// item returns a work item of queue q.
func item(q, id string, created time.Time) driver.Work {
	return driver.Work{Queue: q, ID: id, Identity: memory.Identity{Tenant: "t", User: "u-" + id}, Payload: "payload of " + id, Created: created}
}

// leaseIDs returns the item ids of ls.
func leaseIDs(ls []driver.Lease) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.ID
	}
	return out
}

// raceOnce makes d run f, once, between its next write's read and its
// write.
func raceOnce(d *qdrant.Driver, f func()) {
	var once sync.Once
	qdrant.BeforeWrite(d, func() { once.Do(f) })
}

// workExists reports whether the work collection of "mem" exists.
func workExists(t *testing.T, c *qc.Client) bool {
	t.Helper()
	ok, err := c.CollectionExists(context.Background(), "mem"+qdrant.WorkSuffix)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestWorkCollectionIsLazy checks that the work collection is created by
// the first Enqueue, with the payload indexes claims and erasures filter
// on, and not before: every other call on a store without one finds
// nothing. A work collection another driver created without its indexes
// yet gets them from the first Claim, whose ordered read needs the one on
// created.
func TestWorkCollectionIsLazy(t *testing.T) {
	d, _, c, _ := openWork(t)
	ctx := context.Background()
	if workExists(t, c) {
		t.Fatalf("New created the work collection")
	}
	if ls, err := d.Claim(ctx, "q", 5, time.Minute); err != nil || len(ls) != 0 {
		t.Errorf("Claim on a store without a work collection = %v, %v; want nothing", ls, err)
	}
	who := memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "t"}}
	if n, err := d.EraseWork(ctx, "q", who); err != nil || n != 0 {
		t.Errorf("EraseWork on a store without a work collection = %d, %v; want 0", n, err)
	}
	l := driver.Lease{Work: item("q", "x", t0), Token: "a.b", Expires: t0.Add(time.Minute), Attempt: 1}
	_, err := d.Renew(ctx, l, time.Minute)
	for what, err := range map[string]error{"Renew": err, "Release": d.Release(ctx, l), "Complete": d.Complete(ctx, l)} {
		if !errors.Is(err, memory.ErrConflict) {
			t.Errorf("%s on a store without a work collection: %v, want memory.ErrConflict", what, err)
		}
	}
	if _, err := d.Sweep(ctx); err != nil {
		t.Errorf("Sweep on a store without a work collection: %v", err)
	}
	if workExists(t, c) {
		t.Fatalf("a call other than Enqueue created the work collection")
	}

	if n, err := d.Enqueue(ctx, []driver.Work{item("q", "a", t0), item("q", "b", t0)}); err != nil || n != 2 {
		t.Fatalf("first Enqueue = %d, %v; want 2", n, err)
	}
	info, err := c.GetCollectionInfo(ctx, "mem"+qdrant.WorkSuffix)
	if err != nil {
		t.Fatalf("the first Enqueue did not create the work collection: %v", err)
	}
	schema := info.GetPayloadSchema()
	kw, num := qc.PayloadSchemaType_Keyword, qc.PayloadSchemaType_Integer
	for field, typ := range map[string]qc.PayloadSchemaType{
		"queue": kw, "state": kw, "del": kw, "tenant": kw, "user": kw, "agent": kw, "instance": kw, "squad": kw, "session": kw,
		"created": num, "until_s": num, "until_ns": num, "del_at": num, "done_at": num, "dead": qc.PayloadSchemaType_Bool,
	} {
		if got := schema[field].GetDataType(); got != typ {
			t.Errorf("work collection's index on %s: %v, want %v", field, got, typ)
		}
	}
	if !schema["tenant"].GetParams().GetKeywordIndexParams().GetIsTenant() {
		t.Errorf("the work collection's tenant index is not flagged is_tenant")
	}
	for _, f := range []string{"created", "until_s", "until_ns"} {
		if !schema[f].GetParams().GetIntegerIndexParams().GetRange() {
			t.Errorf("the work collection's index on %s has no range", f)
		}
	}

	// A work collection created bare, as by a driver that has not made
	// its indexes yet.
	if err := c.DeleteCollection(ctx, "mem"+qdrant.WorkSuffix); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateCollection(ctx, &qc.CreateCollection{CollectionName: "mem" + qdrant.WorkSuffix, VectorsConfig: qc.NewVectorsConfigMap(map[string]*qc.VectorParams{})}); err != nil {
		t.Fatal(err)
	}
	if ls, err := d.Claim(ctx, "q", 5, time.Minute); err != nil || len(ls) != 0 {
		t.Errorf("Claim on a work collection without indexes = %v, %v; want nothing", ls, err)
	}
	if info, err = c.GetCollectionInfo(ctx, "mem"+qdrant.WorkSuffix); err != nil || info.GetPayloadSchema()["created"] == nil {
		t.Errorf("Claim did not make the indexes of a bare work collection: %v, %v", info.GetPayloadSchema(), err)
	}
	if n, err := d.Enqueue(ctx, []driver.Work{item("q", "a", t0)}); err != nil || n != 1 {
		t.Errorf("Enqueue into the recreated work collection = %d, %v; want 1", n, err)
	}
	if ls, err := d.Claim(ctx, "q", 5, time.Minute); err != nil || len(ls) != 1 {
		t.Errorf("Claim of the item enqueued = %v, %v", ls, err)
	}
}

// TestCollectionNameLimit checks that the store's collection name leaves
// room for the work collection's suffix within Qdrant's 255 bytes.
func TestCollectionNameLimit(t *testing.T) {
	host, port := qdrantserver.Start(t)
	c := newClient(t, host, port)
	ctx := context.Background()
	if _, err := qdrant.New(ctx, qdrant.Options{Client: c, Collection: strings.Repeat("c", qdrant.MaxCollection+1)}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("New with a collection name of %d bytes: %v, want memory.ErrInvalidArgument", qdrant.MaxCollection+1, err)
	}
	d, err := qdrant.New(ctx, qdrant.Options{Client: c, Collection: strings.Repeat("c", qdrant.MaxCollection)})
	if err != nil {
		t.Fatalf("New with a collection name of %d bytes: %v", qdrant.MaxCollection, err)
	}
	defer d.Close()
	if n, err := d.Enqueue(ctx, []driver.Work{item("q", "a", t0)}); err != nil || n != 1 {
		t.Errorf("Enqueue on a store of the longest name = %d, %v; want 1 (its work collection's name is 255 bytes)", n, err)
	}
}

// TestClaimWriteRaces makes another driver change an item between a
// write's read of its point and its write, through the hook the tests
// have, and checks that the write's guard and read back settle it: an
// Enqueue that another enqueued first reports nothing new and leaves the
// other's item; a Claim whose item another claimed first does not return
// it and takes the next; a Claim whose item was erased meanwhile neither
// returns nor recreates it; a Renew of a lapsed claim taken over
// meanwhile fails; a Complete of an item erased meanwhile fails, and the
// erasure counts it; an Enqueue over a completed item that another
// enqueued first reports nothing new.
func TestClaimWriteRaces(t *testing.T) {
	d, other, _, clk := openWork(t)
	ctx := context.Background()
	const q = "races"
	defer qdrant.BeforeWrite(d, nil)

	raceOnce(d, func() {
		if n, err := other.Enqueue(ctx, []driver.Work{{Queue: q, ID: "e", Identity: memory.Identity{Tenant: "t"}, Payload: "theirs", Created: t0}}); err != nil || n != 1 {
			t.Errorf("the racing Enqueue = %d, %v", n, err)
		}
	})
	if n, err := d.Enqueue(ctx, []driver.Work{{Queue: q, ID: "e", Identity: memory.Identity{Tenant: "t"}, Payload: "mine", Created: t0}}); err != nil || n != 0 {
		t.Errorf("Enqueue of an id another enqueued between its read and its write = %d, %v; want 0 new", n, err)
	}
	ls, err := d.Claim(ctx, q, 5, time.Minute)
	if err != nil || len(ls) != 1 || ls[0].Payload != "theirs" {
		t.Fatalf("Claim after the racing Enqueues = %+v, %v; want the first enqueued, with payload \"theirs\"", ls, err)
	}
	if err := d.Complete(ctx, ls[0]); err != nil {
		t.Fatal(err)
	}

	if n, err := d.Enqueue(ctx, []driver.Work{item(q, "a", t0), item(q, "b", t0.Add(1)), item(q, "c", t0.Add(2))}); err != nil || n != 3 {
		t.Fatalf("Enqueue = %d, %v", n, err)
	}
	var theirs []driver.Lease
	raceOnce(d, func() {
		if theirs, err = other.Claim(ctx, q, 1, time.Minute); err != nil || len(theirs) != 1 || theirs[0].ID != "a" {
			t.Errorf("the racing Claim = %v, %v; want a", leaseIDs(theirs), err)
		}
	})
	mine, err := d.Claim(ctx, q, 2, time.Minute)
	if err != nil || !slices.Equal(leaseIDs(mine), []string{"b"}) {
		t.Errorf("Claim of a and b while another claims a between its read and its write = %v, %v; want b alone", leaseIDs(mine), err)
	}
	rest, err := d.Claim(ctx, q, 5, time.Minute)
	if err != nil || !slices.Equal(leaseIDs(rest), []string{"c"}) {
		t.Errorf("Claim of what is left = %v, %v; want c", leaseIDs(rest), err)
	}
	for _, l := range slices.Concat(theirs, mine, rest) {
		if err := d.Complete(ctx, l); err != nil {
			t.Errorf("Complete of %s: %v", l.ID, err)
		}
	}

	who := memory.Filter{Match: memory.FieldTenant | memory.FieldUser, Identity: memory.Identity{Tenant: "t", User: "u-x"}}
	if _, err := d.Enqueue(ctx, []driver.Work{item(q, "x", t0)}); err != nil {
		t.Fatal(err)
	}
	raceOnce(d, func() {
		if n, err := other.EraseWork(ctx, q, who); err != nil || n != 1 {
			t.Errorf("the racing EraseWork = %d, %v; want 1", n, err)
		}
	})
	if ls, err := d.Claim(ctx, q, 5, time.Minute); err != nil || len(ls) != 0 {
		t.Errorf("Claim of an item erased between its read and its write = %v, %v; want nothing", leaseIDs(ls), err)
	}
	if n, err := d.Enqueue(ctx, []driver.Work{item(q, "x", t0)}); err != nil || n != 1 {
		t.Errorf("Enqueue of the erased id = %d, %v; want 1 new: the Claim must not have written the item again", n, err)
	}

	ls, err = d.Claim(ctx, q, 1, time.Second)
	if err != nil || len(ls) != 1 {
		t.Fatalf("Claim of x = %v, %v", leaseIDs(ls), err)
	}
	clk.set(ls[0].Expires)
	raceOnce(d, func() {
		if theirs, err = other.Claim(ctx, q, 1, time.Minute); err != nil || len(theirs) != 1 {
			t.Errorf("the racing Claim of the lapsed x = %v, %v", leaseIDs(theirs), err)
		}
	})
	if _, err := d.Renew(ctx, ls[0], time.Minute); !errors.Is(err, memory.ErrConflict) {
		t.Errorf("Renew of a lapsed claim taken over between its read and its write: %v, want memory.ErrConflict", err)
	}
	if err := other.Complete(ctx, theirs[0]); err != nil {
		t.Errorf("Complete of the claim that took x over: %v", err)
	}

	if _, err := d.Enqueue(ctx, []driver.Work{item(q, "x", t0)}); err != nil {
		t.Fatal(err)
	}
	if ls, err = d.Claim(ctx, q, 1, time.Minute); err != nil || len(ls) != 1 {
		t.Fatalf("Claim of x = %v, %v", leaseIDs(ls), err)
	}
	var erased int64
	raceOnce(d, func() {
		if erased, err = other.EraseWork(ctx, q, who); err != nil {
			t.Error(err)
		}
	})
	if err := d.Complete(ctx, ls[0]); !errors.Is(err, memory.ErrConflict) || erased != 1 {
		t.Errorf("Complete of an item erased before its write: %v, and the erasure removed %d; want memory.ErrConflict and 1", err, erased)
	}

	if _, err := d.Enqueue(ctx, []driver.Work{item(q, "y", t0)}); err != nil {
		t.Fatal(err)
	}
	if ls, err = d.Claim(ctx, q, 1, time.Minute); err != nil || len(ls) != 1 {
		t.Fatalf("Claim of y = %v, %v", leaseIDs(ls), err)
	}
	if err := d.Complete(ctx, ls[0]); err != nil {
		t.Fatal(err)
	}
	raceOnce(d, func() {
		if n, err := other.Enqueue(ctx, []driver.Work{item(q, "y", t0)}); err != nil || n != 1 {
			t.Errorf("the racing Enqueue of the completed y = %d, %v; want 1", n, err)
		}
	})
	if n, err := d.Enqueue(ctx, []driver.Work{item(q, "y", t0)}); err != nil || n != 0 {
		t.Errorf("Enqueue of a completed id another enqueued between its read and its write = %d, %v; want 0 new", n, err)
	}
	if ls, err := d.Claim(ctx, q, 5, time.Minute); err != nil || !slices.Equal(leaseIDs(ls), []string{"y"}) {
		t.Errorf("Claim after the racing Enqueues of y = %v, %v; want y once", leaseIDs(ls), err)
	}
}

// TestClaimTies checks Claim's order where Qdrant's order_by leaves it
// undefined: items share creation times, and every n that cuts a group
// of equal times claims the least ids of the group. The in-process
// server orders ties by point id, a hash, so an order left to it is
// wrong.
func TestClaimTies(t *testing.T) {
	d, _, _, _ := openWork(t)
	ctx := context.Background()
	const q = "ties"
	var items []driver.Work
	for i := range 40 {
		items = append(items, item(q, fmt.Sprintf("i%02d", (i*17)%40), t0.Add(time.Duration(i%3))))
	}
	if n, err := d.Enqueue(ctx, items); err != nil || n != len(items) {
		t.Fatalf("Enqueue = %d, %v", n, err)
	}
	want := slices.Clone(items)
	slices.SortFunc(want, func(a, b driver.Work) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	for n := 1; n <= 41; n++ {
		ls, err := d.Claim(ctx, q, n, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		var w []string
		for _, it := range want[:min(n, len(want))] {
			w = append(w, it.ID)
		}
		if !slices.Equal(leaseIDs(ls), w) {
			t.Fatalf("Claim of %d = %v, want %v", n, leaseIDs(ls), w)
		}
		for _, l := range ls {
			if err := d.Release(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestClaimBound checks that the bound a Claim learns for its ordered
// read never changes what it claims: item after item through more items
// than one read reaches, with older items enqueued and a claimed one
// released on the way, each Claim returns the oldest claimable items.
func TestClaimBound(t *testing.T) {
	d, _, _, _ := openWork(t)
	ctx := context.Background()
	const q = "bound"
	model := map[string]driver.Work{}
	var batch []driver.Work
	for i := range 700 {
		w := item(q, fmt.Sprintf("b%04d", (i*263)%700), t0.Add(time.Duration(i)*time.Microsecond))
		batch = append(batch, w)
		model[w.ID] = w
	}
	if n, err := d.Enqueue(ctx, batch); err != nil || n != len(batch) {
		t.Fatalf("Enqueue = %d, %v", n, err)
	}
	oldest := func(n int) []string {
		ws := make([]driver.Work, 0, len(model))
		for _, w := range model {
			ws = append(ws, w)
		}
		slices.SortFunc(ws, func(a, b driver.Work) int { return a.Created.Compare(b.Created) })
		var ids []string
		for _, w := range ws[:min(n, len(ws))] {
			ids = append(ids, w.ID)
		}
		return ids
	}
	var held []driver.Lease
	for round := 0; len(model) > 0; round++ {
		n := 1 + round%7
		switch round {
		case 40: // items older than every other
			older := []driver.Work{item(q, "old-1", t0.Add(-time.Hour)), item(q, "old-2", t0.Add(-time.Minute))}
			if _, err := d.Enqueue(ctx, older); err != nil {
				t.Fatal(err)
			}
			for _, w := range older {
				model[w.ID] = w
			}
		case 60: // a claimed item comes back
			if err := d.Release(ctx, held[0]); err != nil {
				t.Fatal(err)
			}
			model[held[0].ID] = held[0].Work
			held = held[1:]
		}
		want := oldest(n)
		ls, err := d.Claim(ctx, q, n, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(leaseIDs(ls), want) {
			t.Fatalf("round %d: Claim of %d = %v, want %v", round, n, leaseIDs(ls), want)
		}
		for i, l := range ls {
			delete(model, l.ID)
			if round < 60 && i == 0 {
				held = append(held, l) // kept claimed
				continue
			}
			if err := d.Complete(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestDonePoints checks what a Complete leaves: a done point, which an
// Enqueue of its id replaces as a new item, until the driver removes its
// done points, DoneBatch at a time; and that Sweep removes done points
// left staleMark ago, by a driver that closed first.
func TestDonePoints(t *testing.T) {
	d, _, c, _ := openWork(t)
	ctx := context.Background()
	const q = "done"
	count := func(state string) uint64 {
		t.Helper()
		n, err := c.Count(ctx, &qc.CountPoints{CollectionName: "mem" + qdrant.WorkSuffix, Filter: &qc.Filter{Must: []*qc.Condition{qc.NewMatchKeyword("state", state)}}})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	var items []driver.Work
	for i := range qdrant.DoneBatch + 1 {
		items = append(items, item(q, fmt.Sprintf("d%03d", i), t0.Add(time.Duration(i))))
	}
	if _, err := d.Enqueue(ctx, items); err != nil {
		t.Fatal(err)
	}
	ls, err := d.Claim(ctx, q, len(items), time.Minute)
	if err != nil || len(ls) != len(items) {
		t.Fatalf("Claim = %d, %v", len(ls), err)
	}
	for i, l := range ls[:qdrant.DoneBatch-1] {
		if err := d.Complete(ctx, l); err != nil {
			t.Fatal(err)
		}
		if got := count("done"); got != uint64(i+1) {
			t.Fatalf("after %d Completes, %d done points; want %d", i+1, got, i+1)
		}
	}
	if n, err := d.Enqueue(ctx, []driver.Work{items[0]}); err != nil || n != 1 {
		t.Errorf("Enqueue of a completed id whose done point is left = %d, %v; want 1", n, err)
	}
	if err := d.Complete(ctx, ls[qdrant.DoneBatch-1]); err != nil {
		t.Fatal(err)
	}
	if got := count("done"); got != 0 {
		t.Errorf("after %d Completes, %d done points left; want none", qdrant.DoneBatch, got)
	}
	if got, err := d.Claim(ctx, q, 5, time.Minute); err != nil || !slices.Equal(leaseIDs(got), []string{items[0].ID}) {
		t.Errorf("Claim after the batch = %v, %v; want the item enqueued again over its done point", leaseIDs(got), err)
	}

	// A done point left staleMark ago (its driver closed before its
	// batch), and one of now: Sweep removes the first.
	if err := d.Complete(ctx, ls[qdrant.DoneBatch]); err != nil {
		t.Fatal(err)
	}
	old := qc.NewID(qdrant.WorkPointID("mem", q, ls[qdrant.DoneBatch].ID))
	if _, err := c.SetPayload(ctx, &qc.SetPayloadPoints{CollectionName: "mem" + qdrant.WorkSuffix, Wait: qc.PtrOf(true),
		Payload:        qc.NewValueMap(map[string]any{"done_at": time.Now().Add(-2 * qdrant.StaleMark).Unix()}),
		PointsSelector: qc.NewPointsSelector(old)}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if pts, err := c.Get(ctx, &qc.GetPoints{CollectionName: "mem" + qdrant.WorkSuffix, Ids: []*qc.PointId{old}}); err != nil || len(pts) != 0 {
		t.Errorf("Sweep left the done point of %s, marked done staleMark ago: %v, %v", ls[qdrant.DoneBatch].ID, pts, err)
	}
}

// TestCompleteTokens checks that Complete refuses a token it did not
// hand out, whatever its form, as a stale claim.
func TestCompleteTokens(t *testing.T) {
	d, _, _, _ := openWork(t)
	ctx := context.Background()
	if _, err := d.Enqueue(ctx, []driver.Work{item("tok", "a", t0)}); err != nil {
		t.Fatal(err)
	}
	ls, err := d.Claim(ctx, "tok", 1, time.Minute)
	if err != nil || len(ls) != 1 {
		t.Fatalf("Claim = %v, %v", ls, err)
	}
	inc, rest, _ := strings.Cut(ls[0].Token, ".")
	for _, tok := range []string{"no-dot", inc + ".other", "other." + rest, "." + rest, inc + "."} {
		l := ls[0]
		l.Token = tok
		if err := d.Complete(ctx, l); !errors.Is(err, memory.ErrConflict) {
			t.Errorf("Complete with token %q: %v, want memory.ErrConflict", tok, err)
		}
	}
	if err := d.Complete(ctx, ls[0]); err != nil {
		t.Errorf("Complete with the token handed out, after the refused ones: %v", err)
	}
}

// TestConcurrentClaims runs Claims of one driver and of a replica at
// once, as a busy queue's workers do, so that they choose among the
// items a concurrent Claim read: no item is held by two claims at once,
// every item is completed exactly once, and the queue ends empty.
func TestConcurrentClaims(t *testing.T) {
	d, other, _, _ := openWork(t)
	ctx := context.Background()
	const q, items = "busy", 600
	var batch []driver.Work
	for i := range items {
		batch = append(batch, item(q, fmt.Sprintf("c%03d", i), t0.Add(time.Duration(i%50))))
	}
	if n, err := d.Enqueue(ctx, batch); err != nil || n != items {
		t.Fatalf("Enqueue = %d, %v", n, err)
	}
	var mu sync.Mutex
	held := map[string]string{} // item → token of the claim holding it
	completed := map[string]int{}
	var wg sync.WaitGroup
	for w := range 12 {
		cl := []*qdrant.Driver{d, other}[w%2]
		wg.Go(func() {
			for k := 0; ; k++ {
				ls, err := cl.Claim(ctx, q, 1+(w+k)%7, time.Hour)
				if err != nil {
					t.Error(err)
					return
				}
				if len(ls) == 0 {
					return // the clock never moves: nothing lapses, and what is left is held
				}
				mu.Lock()
				for _, l := range ls {
					if tok, ok := held[l.ID]; ok {
						t.Errorf("item %s claimed under %s while claim %s holds it", l.ID, l.Token, tok)
					}
					held[l.ID] = l.Token
				}
				mu.Unlock()
				for _, l := range ls {
					err := cl.Complete(ctx, l)
					if err != nil {
						t.Errorf("Complete of %s: %v", l.ID, err)
					}
					mu.Lock()
					delete(held, l.ID)
					if err == nil {
						completed[l.ID]++
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for _, w := range batch {
		if completed[w.ID] != 1 {
			t.Errorf("item %s completed %d times, want once", w.ID, completed[w.ID])
		}
	}
	if ls, err := d.Claim(ctx, q, items, time.Hour); err != nil || len(ls) != 0 {
		t.Errorf("Claim after every item was completed = %v, %v", leaseIDs(ls), err)
	}
}
