package backendtest

import (
	"context"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// checkClose checks that Close is idempotent and that every later call
// fails with memory.ErrClosed.
func checkClose(r reporter, e *env) {
	d, _ := e.open(r)
	ctx := context.Background()
	id := e.agentID(d, memory.Identity{Tenant: "close", User: "u"})
	mustPut(r, d, "before Close", []memory.Record{{ID: "c-1", Kind: memory.KindFact, Identity: id, Content: "x", Created: t0}})
	noErr(r, "Close", d.Close())
	noErr(r, "second Close", d.Close())
	q := tenantQuery("close")
	err := d.Put(ctx, []memory.Record{{ID: "c-2", Kind: memory.KindFact, Identity: id, Content: "y", Created: t0}})
	wantErr(r, "Put after Close", err, memory.ErrClosed)
	_, err = d.List(ctx, q)
	wantErr(r, "List after Close", err, memory.ErrClosed)
	_, err = d.Delete(ctx, q)
	wantErr(r, "Delete after Close", err, memory.ErrClosed)
	if sw, ok := d.(driver.Sweeper); ok {
		_, err = sw.Sweep(ctx)
		wantErr(r, "Sweep after Close", err, memory.ErrClosed)
	}
	noErr(r, "third Close", d.Close())
}

// checkCancelledContext checks that every call with a done context fails
// with the context's error, unchanged, and has no effect.
func checkCancelledContext(r reporter, e *env) {
	d, _ := e.open(r)
	id := e.agentID(d, memory.Identity{Tenant: "ctx", User: "u", Session: "s"})
	existing := memory.Record{ID: "ctx-1", Kind: memory.KindTurn, Identity: id, Content: "kept", Created: t0}
	mustPut(r, d, "before cancelling", []memory.Record{existing})
	q := driver.Query{Filter: mustFilter(r, memory.Posture{}, id, memory.LevelSession)}

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel2()
	for _, c := range []struct {
		ctx  context.Context
		want error
	}{{cancelled, context.Canceled}, {expired, context.DeadlineExceeded}} {
		what := c.want.Error()
		err := d.Put(c.ctx, []memory.Record{{ID: "ctx-2", Kind: memory.KindTurn, Identity: id, Content: "lost", Created: t0}})
		wantErr(r, "Put with "+what, err, c.want)
		_, err = d.List(c.ctx, q)
		wantErr(r, "List with "+what, err, c.want)
		_, err = d.Delete(c.ctx, q)
		wantErr(r, "Delete with "+what, err, c.want)
		got := mustList(r, d, "List after the calls with "+what, q)
		sameRecords(r, "content after the calls with "+what, got, []memory.Record{existing})
	}
}
