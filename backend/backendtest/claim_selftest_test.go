package backendtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// claimFaults are the rules of driver.Claimer a faultyClaimer breaks.
type claimFaults struct {
	ignoreLease  bool // Claim hands out items whose lease still runs
	noTokenCheck bool // Renew, Complete and Release accept any token
	sameToken    bool // a reclaimed item keeps its token
	idOrder      bool // Claim orders by id only
	replace      bool // Enqueue replaces present items and counts them new
	neverLapse   bool // a claimed item is never claimable again
	lateLapse    bool // a lease lapses 1ns after its expiry
	ignoreCtx    bool // contexts are never checked
	noValidation bool // nothing is validated
	nonAtomic    bool // Enqueue stores the valid items of a refused batch

	eraseWiden       bool // EraseWork drops the user condition
	erasePrefix      bool // EraseWork matches a field that starts with the value
	eraseFold        bool // EraseWork matches a field that equals the value but for case
	erasePendingOnly bool // EraseWork leaves claimed items
	eraseAnyQueue    bool // EraseWork erases from every queue
	eraseNoCount     bool // EraseWork reports no items removed
	eraseTombstone   bool // the claims on erased items still renew, release and complete
}

// faultyClaimer is a small work queue over the map driver that is correct
// unless told to break a rule.
type faultyClaimer struct {
	*mapDriver
	claimFaults
	qmu    sync.Mutex
	items  map[[2]string]*faultyItem
	erased map[[2]string]*faultyItem // erased items, kept under eraseTombstone
	tokens int
}

type faultyItem struct {
	w        driver.Work
	token    string
	until    time.Time
	attempts int
}

func newFaultyClaimer(clock memory.Clock, f claimFaults) *faultyClaimer {
	return &faultyClaimer{mapDriver: newMapDriver(clock), claimFaults: f, items: map[[2]string]*faultyItem{}, erased: map[[2]string]*faultyItem{}}
}

// enter checks the context and the closed state; the caller holds d.qmu.
func (d *faultyClaimer) enter(ctx context.Context) error {
	if !d.ignoreCtx {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	d.mapDriver.mu.RLock()
	defer d.mapDriver.mu.RUnlock()
	if d.closed {
		return memory.Errorf(memory.ErrClosed, "closed")
	}
	return nil
}

func (d *faultyClaimer) Enqueue(ctx context.Context, items []driver.Work) (int, error) {
	d.qmu.Lock()
	defer d.qmu.Unlock()
	if err := d.enter(ctx); err != nil {
		return 0, err
	}
	var failed error
	if !d.noValidation {
		if err := driver.CheckEnqueue(items); err != nil {
			if !d.nonAtomic || len(items) > memory.MaxBatch {
				return 0, err
			}
			failed = err
		}
	}
	n := 0
	for _, w := range items {
		if failed != nil && w.Validate() != nil {
			continue
		}
		k := [2]string{w.Queue, w.ID}
		if d.items[k] != nil && !d.replace {
			continue
		}
		d.items[k] = &faultyItem{w: w}
		n++
	}
	if failed != nil {
		return 0, failed
	}
	return n, nil
}

func (d *faultyClaimer) Claim(ctx context.Context, queue string, n int, lease time.Duration) ([]driver.Lease, error) {
	d.qmu.Lock()
	defer d.qmu.Unlock()
	if err := d.enter(ctx); err != nil {
		return nil, err
	}
	if !d.noValidation {
		if err := driver.CheckClaim(queue, n, lease); err != nil {
			return nil, err
		}
	}
	now := d.clock.Now()
	order := func(a, b *faultyItem) int {
		if d.idOrder {
			return strings.Compare(a.w.ID, b.w.ID)
		}
		return workOrder(a.w, b.w)
	}
	var cands []*faultyItem // the oldest n claimable items, in order
	for k, it := range d.items {
		lapsed := !now.Before(it.until)
		if d.lateLapse {
			lapsed = now.After(it.until)
		}
		if k[0] != queue || !(it.token == "" || d.ignoreLease || lapsed && !d.neverLapse) {
			continue
		}
		i, _ := slices.BinarySearchFunc(cands, it, order)
		if i < n {
			cands = slices.Insert(cands, i, it)
			cands = cands[:min(len(cands), n)]
		}
	}
	var out []driver.Lease
	for _, it := range cands {
		if it.token == "" || !d.sameToken {
			d.tokens++
			it.token = fmt.Sprintf("token-%d", d.tokens)
		}
		it.until = now.Add(lease)
		it.attempts++
		out = append(out, driver.Lease{Work: it.w, Token: it.token, Expires: it.until, Attempt: it.attempts})
	}
	return out, nil
}

// current returns l's item if l is its current claim.
func (d *faultyClaimer) current(ctx context.Context, l driver.Lease) (*faultyItem, error) {
	if err := d.enter(ctx); err != nil {
		return nil, err
	}
	if !d.noValidation {
		if err := driver.CheckLease(l); err != nil {
			return nil, err
		}
	}
	k := [2]string{l.Queue, l.ID}
	it := d.items[k]
	if it == nil && d.eraseTombstone {
		it = d.erased[k]
	}
	if it == nil || it.token != l.Token && !d.noTokenCheck {
		return nil, memory.Errorf(memory.ErrConflict, "not the current claim")
	}
	return it, nil
}

func (d *faultyClaimer) Renew(ctx context.Context, l driver.Lease, lease time.Duration) (driver.Lease, error) {
	d.qmu.Lock()
	defer d.qmu.Unlock()
	it, err := d.current(ctx, l)
	if err != nil {
		return driver.Lease{}, err
	}
	if !d.noValidation {
		if err := driver.CheckRenew(l, lease); err != nil {
			return driver.Lease{}, err
		}
	}
	it.until = d.clock.Now().Add(lease)
	return driver.Lease{Work: it.w, Token: it.token, Expires: it.until, Attempt: it.attempts}, nil
}

func (d *faultyClaimer) Complete(ctx context.Context, l driver.Lease) error {
	d.qmu.Lock()
	defer d.qmu.Unlock()
	if _, err := d.current(ctx, l); err != nil {
		return err
	}
	delete(d.items, [2]string{l.Queue, l.ID})
	return nil
}

func (d *faultyClaimer) Release(ctx context.Context, l driver.Lease) error {
	d.qmu.Lock()
	defer d.qmu.Unlock()
	it, err := d.current(ctx, l)
	if err == nil {
		it.token, it.until = "", time.Time{}
	}
	return err
}

// EraseWork removes the items of queue whose identity f matches, unless
// told to break a rule.
func (d *faultyClaimer) EraseWork(ctx context.Context, queue string, f memory.Filter) (int64, error) {
	d.qmu.Lock()
	defer d.qmu.Unlock()
	if err := d.enter(ctx); err != nil {
		return 0, err
	}
	if !d.noValidation {
		if err := driver.CheckEraseWork(queue, f); err != nil {
			return 0, err
		}
	}
	if d.eraseWiden {
		f.Match &^= memory.FieldUser
	}
	matches := func(w memory.Identity) bool {
		for _, fl := range []memory.Field{memory.FieldTenant, memory.FieldUser, memory.FieldAgent, memory.FieldInstance, memory.FieldSquad, memory.FieldSession} {
			got, want := w.Get(fl), f.Identity.Get(fl)
			switch {
			case !f.Match.Has(fl) || got == want:
			case d.erasePrefix && strings.HasPrefix(got, want):
			case d.eraseFold && strings.EqualFold(got, want):
			default:
				return false
			}
		}
		return true
	}
	var n int64
	for k, it := range d.items {
		if k[0] != queue && !d.eraseAnyQueue || it.token != "" && d.erasePendingOnly || !matches(it.w.Identity) {
			continue
		}
		delete(d.items, k)
		if d.eraseTombstone {
			d.erased[k] = it
		}
		n++
	}
	if d.eraseNoCount {
		n = 0
	}
	return n, nil
}

// claimOnly is a work queue without WorkEraser.
type claimOnly struct {
	driver.Driver
	driver.Claimer
}

// claimChecks are the names of the work queue's checks.
var claimChecks = []string{"Claim", "ClaimLeases", "ClaimModel", "ClaimBadInput", "ClaimLifecycle", "ClaimDeadWorkers", "ClaimRace",
	"ClaimErase", "ClaimEraseModel", "ClaimEraseLifecycle", "ClaimEraseRace"}

// eraseChecks are the names of WorkEraser's checks.
var eraseChecks = []string{"ClaimErase", "ClaimEraseModel", "ClaimEraseLifecycle", "ClaimEraseRace"}

// TestClaimChecksPass runs the work queue's checks against a correct
// claimer: none may fail.
func TestClaimChecksPass(t *testing.T) {
	cfg := Config{
		NewDriver:  func(_ *testing.T, c memory.Clock) driver.Driver { return newFaultyClaimer(c, claimFaults{}) },
		Claimer:    true,
		WorkEraser: true,
	}
	for _, name := range claimChecks {
		if errs := runRecorded(t, cfg, name); len(errs) != 0 {
			t.Errorf("check %s fails on a correct claimer: %s", name, errs[0])
		}
	}
}

// TestClaimChecksCatchFaults proves the work queue's checks can fail: each
// faulty claimer breaks one rule, and the checks named must report it.
func TestClaimChecksCatchFaults(t *testing.T) {
	cases := []struct {
		name   string
		faults claimFaults
		plain  bool // the driver has no work queue, yet declares one
		only   bool // the work queue has no WorkEraser, yet declares one
		undecl bool // the work queue has a WorkEraser, yet does not declare it
		checks []string
	}{
		{name: "hands out items whose lease runs", faults: claimFaults{ignoreLease: true}, checks: []string{"Claim", "ClaimLeases", "ClaimModel", "ClaimDeadWorkers", "ClaimRace"}},
		{name: "accepts stale tokens", faults: claimFaults{noTokenCheck: true}, checks: []string{"ClaimLeases", "ClaimModel", "ClaimDeadWorkers"}},
		{name: "keeps the token of a reclaimed item", faults: claimFaults{sameToken: true}, checks: []string{"ClaimLeases", "ClaimModel", "ClaimDeadWorkers"}},
		{name: "orders by id only", faults: claimFaults{idOrder: true}, checks: []string{"Claim", "ClaimModel"}},
		{name: "replaces present items", faults: claimFaults{replace: true}, checks: []string{"Claim", "ClaimLeases", "ClaimModel"}},
		{name: "never lets a lease lapse", faults: claimFaults{neverLapse: true}, checks: []string{"ClaimLeases", "ClaimModel", "ClaimDeadWorkers", "ClaimLifecycle"}},
		{name: "lets a lease lapse 1ns late", faults: claimFaults{lateLapse: true}, checks: []string{"ClaimLeases", "ClaimDeadWorkers", "ClaimLifecycle"}},
		{name: "ignores the context", faults: claimFaults{ignoreCtx: true}, checks: []string{"ClaimLifecycle", "ClaimDeadWorkers", "ClaimEraseLifecycle"}},
		{name: "validates nothing", faults: claimFaults{noValidation: true}, checks: []string{"ClaimBadInput", "ClaimEraseLifecycle"}},
		{name: "enqueues part of a refused batch", faults: claimFaults{nonAtomic: true}, checks: []string{"ClaimBadInput"}},
		{name: "has no work queue", plain: true, checks: claimChecks},
		{name: "erases work beyond the user", faults: claimFaults{eraseWiden: true}, checks: []string{"ClaimErase", "ClaimEraseModel"}},
		{name: "erases work by prefix", faults: claimFaults{erasePrefix: true}, checks: []string{"ClaimErase", "ClaimEraseModel"}},
		{name: "erases work folding case", faults: claimFaults{eraseFold: true}, checks: []string{"ClaimErase", "ClaimEraseModel"}},
		{name: "erases pending work only", faults: claimFaults{erasePendingOnly: true}, checks: []string{"ClaimErase", "ClaimEraseModel"}},
		{name: "erases work of every queue", faults: claimFaults{eraseAnyQueue: true}, checks: []string{"ClaimErase", "ClaimEraseModel"}},
		{name: "does not count erased work", faults: claimFaults{eraseNoCount: true}, checks: eraseChecks},
		{name: "keeps the claims on erased work", faults: claimFaults{eraseTombstone: true}, checks: []string{"ClaimErase", "ClaimEraseModel"}},
		{name: "cannot erase work", only: true, checks: eraseChecks},
		{name: "erases work without declaring it", undecl: true, checks: eraseChecks},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := Config{
				NewDriver: func(_ *testing.T, clock memory.Clock) driver.Driver {
					if c.plain {
						return newMapDriver(clock)
					}
					if c.only {
						fc := newFaultyClaimer(clock, c.faults)
						return claimOnly{Driver: fc, Claimer: fc}
					}
					return newFaultyClaimer(clock, c.faults)
				},
				Claimer:    true,
				WorkEraser: !c.undecl,
			}
			for _, name := range c.checks {
				errs := runRecorded(t, cfg, name)
				if len(errs) == 0 {
					t.Errorf("check %s did not notice a claimer that %s", name, c.name)
					continue
				}
				t.Logf("check %s: %d failures, first: %s", name, len(errs), errs[0])
			}
		})
	}
}
