package backendtest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// getOne returns the live record with id in tenant, or a zero Record and
// false when there is none.
func getOne(r reporter, d driver.Driver, tenant, id string) (memory.Record, bool) {
	r.Helper()
	q := tenantQuery(tenant)
	q.IDs = []string{id}
	recs := mustList(r, d, "read "+id, q)
	if len(recs) == 0 {
		return memory.Record{}, false
	}
	return recs[0], true
}

// checkVersions checks that every driver keeps record versions: 1 for a
// new id, one more on every replacement (an id repeated in one batch
// counts each time), and 1 again after a delete.
func checkVersions(r reporter, e *env) {
	d, _ := e.open(r)
	ctx := context.Background()
	id := e.agentID(d, memory.Identity{Tenant: "versions", User: "u", Session: "s"})
	rec := func(rid, content string) memory.Record {
		return memory.Record{ID: rid, Kind: memory.KindDocument, Identity: id, Key: rid, Content: jsonString(content), Created: t0, Version: 99}
	}
	mustPut(r, d, "new records", []memory.Record{rec("v-1", "a"), rec("v-2", "a")})
	for _, rid := range []string{"v-1", "v-2"} {
		if got, _ := getOne(r, d, id.Tenant, rid); got.Version != 1 {
			r.Errorf("a new record %s has version %d, want 1 (the Version a caller passes is ignored)", rid, got.Version)
		}
	}
	mustPut(r, d, "replace v-1", []memory.Record{rec("v-1", "b")})
	mustPut(r, d, "replace v-1 twice in one batch", []memory.Record{rec("v-1", "c"), rec("v-1", "d")})
	got, _ := getOne(r, d, id.Tenant, "v-1")
	if got.Version != 4 || got.Content != jsonString("d") {
		r.Errorf("after three more writes v-1 is version %d with content %s, want version 4 with %s", got.Version, got.Content, jsonString("d"))
	}
	// The batch's first v-1 was replaced, not kept beside the second.
	all := mustList(r, d, "the tenant's records", tenantQuery(id.Tenant))
	if n := len(all); n != 2 {
		r.Errorf("the tenant holds %d records (%s), want 2: an id repeated in a batch must leave one record", n, idList(ids(all)))
	}
	if got, _ := getOne(r, d, id.Tenant, "v-2"); got.Version != 1 {
		r.Errorf("v-2, never replaced, has version %d, want 1", got.Version)
	}
	q := tenantQuery(id.Tenant)
	q.IDs = []string{"v-1"}
	n, err := d.Delete(ctx, q)
	if noErr(r, "delete v-1", err) && n != 1 {
		r.Errorf("delete v-1 removed %d records, want 1", n)
	}
	mustPut(r, d, "v-1 again after its delete", []memory.Record{rec("v-1", "e")})
	if got, _ := getOne(r, d, id.Tenant, "v-1"); got.Version != 1 {
		r.Errorf("v-1 written again after its delete has version %d, want 1", got.Version)
	}
}

// swapper returns d as a driver.Swapper when Config.Swapper declares it,
// failing when the declaration and the driver disagree.
func swapper(r reporter, e *env, d driver.Driver) (driver.Swapper, bool) {
	r.Helper()
	return capability[driver.Swapper](r, d, e.cfg.Swapper, "Swapper", "driver.Swapper", "compare-and-swap is not checked")
}

// checkSwap checks compare-and-swap one call at a time: creating with
// version 0, advancing one version per success, refusing stale and
// future versions, plain Puts in between, foreign identities, expired
// records, bad arguments, a closed driver and done contexts — every
// refusal with nothing stored.
func checkSwap(r reporter, e *env) {
	d, clk := e.open(r)
	sw, ok := swapper(r, e, d)
	if !ok {
		return
	}
	ctx := context.Background()
	id := memory.Identity{Tenant: "swap", User: "u", Agent: "a"}
	// doc returns the document holding text as a JSON string; the
	// checks name that text.
	doc := func(text string) memory.Record {
		return memory.Record{ID: "doc", Kind: memory.KindDocument, Identity: id, Key: "counter", Label: "working", Content: jsonString(text), Created: t0}
	}
	swap := func(what string, rec memory.Record, expect, want int64) {
		r.Helper()
		v, err := sw.Swap(ctx, rec, expect)
		if noErr(r, what, err) && v != want {
			r.Errorf("%s: Swap returned version %d, want %d", what, v, want)
		}
	}
	refused := func(what string, rec memory.Record, expect int64, wantKind error, stored string, version int64) {
		r.Helper()
		v, err := sw.Swap(ctx, rec, expect)
		wantErr(r, what, err, wantKind)
		if err == nil {
			r.Errorf("%s: Swap stored version %d", what, v)
		}
		got, found := getOne(r, d, id.Tenant, "doc")
		if stored == "" && found || stored != "" && (got.Content != jsonString(stored) || got.Version != version) {
			r.Errorf("%s: afterwards the store holds %s at version %d (found %v), want %s at version %d", what, got.Content, got.Version, found, jsonString(stored), version)
		}
	}

	refused("Swap expecting version 1 of an absent id", doc("x"), 1, memory.ErrConflict, "", 0)
	swap("create with version 0", doc("v1"), 0, 1)
	refused("create again with version 0", doc("again"), 0, memory.ErrConflict, "v1", 1)
	swap("advance from 1", doc("v2"), 1, 2)
	refused("stale version 1", doc("stale"), 1, memory.ErrConflict, "v2", 2)
	refused("future version 3", doc("future"), 3, memory.ErrConflict, "v2", 2)
	mustPut(r, d, "a plain Put between read and Swap", []memory.Record{doc("put")})
	refused("Swap after a plain Put moved the version", doc("lost"), 2, memory.ErrConflict, "put", 3)
	swap("advance from the Put's version", doc("v4"), 3, 4)

	foreign := doc("foreign")
	foreign.Identity.User = "someone-else"
	refused("Swap of the id under another identity of the tenant", foreign, 4, memory.ErrPermissionDenied, "v4", 4)
	other := doc("other tenant")
	other.Identity.Tenant = "swap-other"
	if _, err := sw.Swap(ctx, other, 4); !wantErr(r, "Swap of the id under another tenant expecting this tenant's version", err, memory.ErrConflict) {
		r.Errorf("another tenant's Swap expecting version 4 must find no live record of its own under the id")
	}

	bad := doc("bad")
	bad.Content = "\xff"
	refused("Swap of an invalid record", bad, 4, memory.ErrInvalidArgument, "v4", 4)
	notJSON := doc("not JSON")
	notJSON.Content = `{"unclosed":`
	refused("Swap of a document that is not JSON", notJSON, 4, memory.ErrInvalidArgument, "v4", 4)
	refused("Swap with a negative version", doc("neg"), -1, memory.ErrInvalidArgument, "v4", 4)

	// An expired record is not live: version 0 replaces it, and the
	// version still counts up from the expired one.
	exp := memory.Record{ID: "exp", Kind: memory.KindDocument, Identity: id, Key: "e", Content: jsonString("old"), Created: t0, Expires: t0.Add(time.Minute)}
	mustPut(r, d, "record that will expire", []memory.Record{exp})
	clk.Advance(time.Minute)
	if _, err := sw.Swap(ctx, memory.Record{ID: "exp", Kind: memory.KindDocument, Identity: id, Key: "e", Content: jsonString("stale view"), Created: t0}, 1); !wantErr(r, "Swap expecting the expired record's version", err, memory.ErrConflict) {
		r.Errorf("an expired record is not live; only version 0 may replace it")
	}
	v, err := sw.Swap(ctx, memory.Record{ID: "exp", Kind: memory.KindDocument, Identity: id, Key: "e", Content: jsonString("new"), Created: t0.Add(time.Minute)}, 0)
	if noErr(r, "Swap with version 0 over an expired record", err) && v != 2 {
		r.Errorf("Swap over an expired version 1 stored version %d, want 2 (versions of an id never repeat)", v)
	}
	if got, _ := getOne(r, d, id.Tenant, "exp"); got.Content != jsonString("new") || got.Version != 2 {
		r.Errorf("after replacing the expired record the store holds %s at version %d, want %s at 2", got.Content, got.Version, jsonString("new"))
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := sw.Swap(cancelled, doc("cancelled"), 4); err != context.Canceled {
		r.Errorf("Swap with a cancelled context: got %v, want context.Canceled unchanged", err)
	}
	if got, _ := getOne(r, d, id.Tenant, "doc"); got.Content != jsonString("v4") {
		r.Errorf("a cancelled Swap changed the record to %s", got.Content)
	}
	noErr(r, "Close", d.Close())
	_, err = sw.Swap(ctx, doc("closed"), 4)
	wantErr(r, "Swap after Close", err, memory.ErrClosed)
}

// checkSwapRace races writers on one record, half of them through a
// replica when the driver has replicas (Config.Replica): for every version
// exactly one of the racing Swaps wins and the others get ErrConflict; and
// a counter incremented by read-modify-swap loops ends exactly at the
// number of increments, with its version one more than that.
func checkSwapRace(r reporter, e *env) {
	d, _ := e.open(r)
	sw, ok := swapper(r, e, d)
	if !ok {
		return
	}
	drivers, swappers := []driver.Driver{d}, []driver.Swapper{sw}
	if e.cfg.Replica != nil {
		rd := e.cfg.Replica(e.t, d)
		e.t.Cleanup(func() { _ = rd.Close() })
		rsw, ok := rd.(driver.Swapper)
		if !ok {
			r.Fatalf("the replica (%T) does not implement driver.Swapper", rd)
		}
		drivers, swappers = append(drivers, rd), append(swappers, rsw)
	}
	ctx := context.Background()
	id := memory.Identity{Tenant: "swap-race", User: "u"}
	counter := func(n int) memory.Record { // a JSON number, as a document must hold JSON
		return memory.Record{ID: "counter", Kind: memory.KindDocument, Identity: id, Key: "counter", Content: strconv.Itoa(n), Created: t0}
	}
	if _, err := sw.Swap(ctx, counter(0), 0); err != nil {
		r.Fatalf("create the counter: %v", err)
	}

	// Rounds of writers that all expect the same version.
	const writers, rounds = 8, 20
	for round := range rounds {
		expect := int64(round + 1)
		var (
			wg             sync.WaitGroup
			mu             sync.Mutex
			wins, conflict int
			other          []error
		)
		start := make(chan struct{})
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := swappers[w%len(swappers)].Swap(ctx, counter(1000*round+w), expect)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case isKind(err, memory.ErrConflict):
					conflict++
				default:
					other = append(other, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if wins != 1 || conflict != writers-1 || len(other) > 0 {
			r.Fatalf("round %d: %d writers expecting version %d: %d won, %d got ErrConflict, other errors %v; want exactly 1 winner and %d conflicts",
				round, writers, expect, wins, conflict, other, writers-1)
		}
	}

	// Increments by read-modify-swap, retried on conflict.
	const goroutines, each = 8, 25
	base, _ := getOne(r, d, id.Tenant, "counter")
	mustNoErr(r, "reset the counter", func() error { _, err := sw.Swap(ctx, counter(0), base.Version); return err }())
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if err := increment(ctx, drivers[g%len(drivers)], swappers[g%len(swappers)], id.Tenant, counter); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		r.Errorf("increment: %v", err)
	}
	got, _ := getOne(r, d, id.Tenant, "counter")
	if got.Content != strconv.Itoa(goroutines*each) {
		r.Errorf("after %d increments by %d goroutines the counter is %s, want %d: an update was lost", goroutines*each, goroutines, got.Content, goroutines*each)
	}
	if want := base.Version + 1 + goroutines*each; got.Version != want {
		r.Errorf("the counter's version is %d, want %d (one per successful write)", got.Version, want)
	}
}

// increment adds one to the counter by reading it and swapping, retrying
// on conflict.
func increment(ctx context.Context, d driver.Driver, sw driver.Swapper, tenant string, counter func(int) memory.Record) error {
	for attempt := 0; attempt < 10000; attempt++ {
		q := tenantQuery(tenant)
		q.IDs = []string{"counter"}
		recs, err := d.List(ctx, q)
		if err != nil {
			return err
		}
		if len(recs) != 1 {
			return fmt.Errorf("the counter is missing")
		}
		n, err := strconv.Atoi(recs[0].Content)
		if err != nil {
			return err
		}
		_, err = sw.Swap(ctx, counter(n+1), recs[0].Version)
		if err == nil {
			return nil
		}
		if !isKind(err, memory.ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("no increment succeeded in 10000 attempts")
}

// isKind reports whether err matches the sentinel kind.
func isKind(err, kind error) bool { return errors.Is(err, kind) }
