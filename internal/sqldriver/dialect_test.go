package sqldriver

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// strArray stands in for an engine's array parameter type.
type strArray []string

var (
	sqliteLike   = New(Dialect{Name: "lite", PinIndex: true})
	postgresLike = New(Dialect{Name: "pg", Numbered: true, LockRow: " FOR UPDATE",
		Array: func(v []string) any { return strArray(v) }})
)

// TestWhere checks the condition each dialect writes for the same
// queries: SQLite's pins one identity index with unary + on the other
// columns, PostgreSQL's names every partial index's condition and binds
// lists as arrays.
func TestWhere(t *testing.T) {
	alice := memory.Identity{Tenant: "t", User: "u", Agent: "a", Instance: "i", Squad: "s", Session: "r"}
	all := memory.FieldTenant | memory.FieldUser | memory.FieldAgent | memory.FieldInstance | memory.FieldSquad | memory.FieldSession
	cases := []struct {
		name         string
		q            driver.Query
		lite, pg     string
		liteN, pgArg int // parameter counts
	}{
		{
			name:  "session and agent",
			q:     driver.Query{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldAgent | memory.FieldSession, Identity: alice}},
			lite:  "tenant_id = ? AND +agent_id = ? AND session_id = ? AND session_id <> ''",
			pg:    "tenant_id = $1 AND agent_id = $2 AND agent_id <> '' AND session_id = $3 AND session_id <> ''",
			liteN: 3, pgArg: 3,
		},
		{
			name: "every field, kinds, key",
			q: driver.Query{Filter: memory.Filter{Match: all, Identity: alice},
				Kinds: []memory.Kind{memory.KindTurn, memory.KindFact}, Key: "k"},
			lite: "tenant_id = ? AND +user_id = ? AND +agent_id = ? AND +instance_id = ? AND +squad_id = ? AND session_id = ? AND session_id <> ''" +
				" AND kind IN (?, ?) AND rkey = ?",
			pg: "tenant_id = $1 AND user_id = $2 AND user_id <> '' AND agent_id = $3 AND agent_id <> '' AND instance_id = $4" +
				" AND squad_id = $5 AND squad_id <> '' AND session_id = $6 AND session_id <> '' AND kind = ANY($7::text[]) AND rkey = $8",
			liteN: 9, pgArg: 8,
		},
		{
			name:  "an empty field matches plainly",
			q:     driver.Query{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldUser | memory.FieldSession, Identity: memory.Identity{Tenant: "t", User: "u"}}},
			lite:  "tenant_id = ? AND user_id = ? AND user_id <> '' AND +session_id = ?",
			pg:    "tenant_id = $1 AND user_id = $2 AND user_id <> '' AND session_id = $3",
			liteN: 3, pgArg: 3,
		},
		{
			name:  "ids read the primary key",
			q:     driver.Query{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldSession, Identity: alice}, IDs: []string{"x", "y"}},
			lite:  "tenant_id = ? AND +session_id = ? AND id IN (?, ?)",
			pg:    "tenant_id = $1 AND (session_id || '') = $2 AND id = ANY($3::text[])",
			liteN: 4, pgArg: 3,
		},
		{
			name: "no condition stays valid SQL",
			q:    driver.Query{},
			lite: "TRUE", pg: "TRUE",
		},
	}
	for _, c := range cases {
		for _, d := range []struct {
			s    *SQL
			want string
			n    int
		}{{sqliteLike, c.lite, c.liteN}, {postgresLike, c.pg, c.pgArg}} {
			var b strings.Builder
			args := d.s.Where(&b, nil, c.q)
			if b.String() != d.want || len(args) != d.n {
				t.Errorf("%s, %s: %q with %d parameters, want %q with %d", c.name, d.s.d.Name, b.String(), len(args), d.want, d.n)
			}
		}
	}
}

// TestWhereContinuesNumbering checks that a condition written after other
// parameters numbers its own from there.
func TestWhereContinuesNumbering(t *testing.T) {
	var b strings.Builder
	args := postgresLike.param(&b, nil, "first")
	b.WriteString(" AND ")
	args = postgresLike.Where(&b, args, driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "t"}}, IDs: []string{"x"}})
	if want := "$1 AND tenant_id = $2 AND id = ANY($3::text[])"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	if want := []any{"first", "t", strArray{"x"}}; !reflect.DeepEqual(args, want) {
		t.Errorf("parameters %#v, want %#v", args, want)
	}
}

// TestListSQL checks the whole List statement: SQLite keeps expires out
// of the index choice, and the limit is the last parameter.
func TestListSQL(t *testing.T) {
	q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldUser, Identity: memory.Identity{Tenant: "t", User: "u"}}, Limit: 5}
	for _, c := range []struct {
		s    *SQL
		want string
	}{
		{sqliteLike, "SELECT c FROM memory_records WHERE tenant_id = ? AND user_id = ? AND user_id <> ''" +
			" AND (+expires IS NULL OR +expires > ?) ORDER BY created DESC, id DESC LIMIT ?"},
		{postgresLike, "SELECT c FROM memory_records WHERE tenant_id = $1 AND user_id = $2 AND user_id <> ''" +
			" AND (expires IS NULL OR expires > $3) ORDER BY created DESC, id DESC LIMIT $4"},
	} {
		query, args := c.s.listSQL("c", q, 42)
		if query != c.want || !reflect.DeepEqual(args, []any{"t", "u", int64(42), int64(5)}) {
			t.Errorf("%s: %q %v, want %q", c.s.d.Name, query, args, c.want)
		}
	}
	// A list by ids is ordered and cut by List, not the database.
	byIDs := q
	byIDs.IDs = []string{"x", "y"}
	want := "SELECT c FROM memory_records WHERE tenant_id = ? AND +user_id = ? AND id IN (?, ?) AND (+expires IS NULL OR +expires > ?)"
	if query, _ := sqliteLike.listSQL("c", byIDs, 42); query != want {
		t.Errorf("by ids: %q, want %q", query, want)
	}
}

// TestRebind checks the shared statements in numbered placeholders.
func TestRebind(t *testing.T) {
	if got, want := postgresLike.CompleteSQL, `DELETE FROM memory_work WHERE queue = $1 AND id = $2 AND token = $3`; got != want {
		t.Errorf("CompleteSQL = %q, want %q", got, want)
	}
	if got := sqliteLike.CompleteSQL; got != completeSQL {
		t.Errorf("SQLite's CompleteSQL = %q, want it unchanged", got)
	}
	if !strings.HasSuffix(postgresLike.storedSwapSQL, "tenant_id = $1 AND id = $2 FOR UPDATE") {
		t.Errorf("PostgreSQL's swap read %q does not lock the row", postgresLike.storedSwapSQL)
	}
	if strings.Contains(sqliteLike.storedSwapSQL, "FOR UPDATE") {
		t.Errorf("SQLite's swap read %q locks the row", sqliteLike.storedSwapSQL)
	}
}

// TestEraseWorkSQL checks the statement of EraseWork: the queue, then
// exactly the fields of the filter's Match, each one parameter compared
// plainly, an empty value too (as memory.Filter.Matches compares it).
func TestEraseWorkSQL(t *testing.T) {
	id := memory.Identity{Tenant: "t", User: "u", Agent: "a", Instance: "i", Squad: "s", Session: ""}
	f := memory.Filter{Match: memory.FieldTenant | memory.FieldUser | memory.FieldSession, Identity: id}
	for _, c := range []struct {
		s    *SQL
		want string
	}{
		{sqliteLike, "DELETE FROM memory_work WHERE queue = ? AND tenant_id = ? AND user_id = ? AND session_id = ?"},
		{postgresLike, "DELETE FROM memory_work WHERE queue = $1 AND tenant_id = $2 AND user_id = $3 AND session_id = $4"},
	} {
		query, args := c.s.EraseWorkSQL("q", f)
		if query != c.want || !reflect.DeepEqual(args, []any{"q", "t", "u", ""}) {
			t.Errorf("%s: %q %#v, want %q with the queue, tenant, user and empty session", c.s.d.Name, query, args, c.want)
		}
	}
	all := memory.Filter{Match: memory.AllFields, Identity: id}
	query, args := postgresLike.EraseWorkSQL("q", all)
	want := "DELETE FROM memory_work WHERE queue = $1 AND tenant_id = $2 AND user_id = $3 AND agent_id = $4" +
		" AND instance_id = $5 AND squad_id = $6 AND session_id = $7"
	if query != want || !reflect.DeepEqual(args, []any{"q", "t", "u", "a", "i", "s", ""}) {
		t.Errorf("every field: %q %#v, want %q", query, args, want)
	}
}

// TestGate checks the order in which Enter refuses a call, and that
// Close waits for calls in progress and releases once.
func TestGate(t *testing.T) {
	var g Gate
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	invalid := memory.Errorf(memory.ErrInvalidArgument, "bad")
	if err := g.Enter(cancelled, "x", invalid); !errors.Is(err, context.Canceled) {
		t.Errorf("Enter with a cancelled context = %v, want context.Canceled", err)
	}
	if err := g.Enter(context.Background(), "x", invalid); err != invalid {
		t.Errorf("Enter with invalid arguments = %v, want them", err)
	}
	if err := g.Enter(context.Background(), "x", nil); err != nil {
		t.Fatalf("Enter = %v", err)
	}
	released := make(chan struct{})
	closed := make(chan error)
	go func() {
		closed <- g.Close(func() error { close(released); return fmt.Errorf("release failed") })
	}()
	time.Sleep(20 * time.Millisecond) // time for Close to start waiting
	select {
	case <-released:
		t.Fatal("Close released while a call was in progress")
	case <-closed:
		t.Fatal("Close returned while a call was in progress")
	default:
	}
	g.Leave()
	if err := <-closed; err == nil || err.Error() != "release failed" {
		t.Errorf("Close = %v, want release's error", err)
	}
	if err := g.Close(func() error { t.Error("second Close released again"); return nil }); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := g.Enter(context.Background(), "x", nil); !errors.Is(err, memory.ErrClosed) || !strings.Contains(err.Error(), "x driver is closed") {
		t.Errorf("Enter after Close = %v, want memory.ErrClosed naming the driver", err)
	}
}
