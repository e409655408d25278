//go:build cgo

package sqlite

import (
	"context"
	"database/sql"
	sqlconn "database/sql/driver"
	"errors"
	"fmt"
	"github.com/agentmem/memory/backend/driver"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jmoiron/sqlx"
	"github.com/mattn/go-sqlite3"

	"github.com/agentmem/memory"
)

var (
	alice = memory.Identity{Tenant: "acme", User: "alice", Agent: "kaos://agent/ns/helper", Instance: "inst-1", Squad: "squad-1", Session: "run-1"}
	t0    = time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)
)

func openTemp(t *testing.T, opt Options) (*Driver, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memory.db")
	d, err := Open(path, opt)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d, path
}

// at returns a query for the filter a level derives for id.
func at(t *testing.T, id memory.Identity, l memory.Level) driver.Query {
	t.Helper()
	f, err := memory.Posture{AllowStore: true}.Filter(id, l)
	if err != nil {
		t.Fatalf("Filter(%s): %v", l, err)
	}
	return driver.Query{Filter: f}
}

func mustPut(t *testing.T, d *Driver, recs ...memory.Record) {
	t.Helper()
	if err := d.Put(context.Background(), recs); err != nil {
		t.Fatalf("Put: %v", err)
	}
}

func mustList(t *testing.T, d *Driver, q driver.Query) []memory.Record {
	t.Helper()
	recs, err := d.List(context.Background(), q)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return recs
}

// recordDiff compares a stored record with the one written (-want +got):
// times compare with Equal, a nil and an empty Metadata map are equal, and
// Version and Vector are not compared.
func recordDiff(want, got memory.Record) string {
	return cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(memory.Record{}, "Version", "Vector"))
}

func TestRoundTrip(t *testing.T) {
	d, _ := openTemp(t, Options{Clock: func() time.Time { return t0 }})
	local := time.FixedZone("UTC+5", 5*3600)
	recs := []memory.Record{
		memory.NewTurn(alice, memory.RoleUser, "héllo, 世界 — \"quoted\" \\ back\nslash", t0),
		func() memory.Record {
			r := memory.NewDocument(alice, "plan/step-1", "plan", `{"a":[1,2,{"b":null}]}`, t0.In(local).Add(time.Second))
			r.Metadata = map[string]string{"source": "tool", "empty": "", "ключ": "значение"}
			r.Expires = t0.Add(time.Hour).In(local)
			r.Tokens = 12
			return r
		}(),
		func() memory.Record {
			r := memory.NewFact(alice, strings.Repeat("x", memory.MaxContentBytes), t0.Add(2*time.Second))
			r.Metadata = map[string]string{}
			return r
		}(),
		memory.NewSummary(memory.Identity{Tenant: "acme", Session: "run-1"}, "wf/step", "", t0.Add(-time.Hour)),
		memory.NewTurn(memory.Identity{Session: "run-1"}, memory.RoleTool, "epoch", time.Unix(0, 0)),
	}
	mustPut(t, d, recs...)
	for _, want := range recs {
		got := mustList(t, d, driver.Query{Filter: memory.Filter{Match: memory.AllFields, Identity: want.Identity}, IDs: []string{want.ID}})
		if len(got) != 1 {
			t.Fatalf("record %s: got %d records", want.ID, len(got))
		}
		if diff := recordDiff(want, got[0]); diff != "" {
			t.Errorf("record %s did not round-trip (-want +got):\n%s", want.ID, diff)
		}
		if len(want.Metadata) == 0 && got[0].Metadata != nil {
			t.Errorf("record %s: empty metadata came back as %#v, want nil", want.ID, got[0].Metadata)
		}
		if got[0].Created.Location() != time.UTC {
			t.Errorf("record %s: Created in %v, want UTC", want.ID, got[0].Created.Location())
		}
	}
}

func TestTimesOutOfRange(t *testing.T) {
	d, _ := openTemp(t, Options{})
	r := memory.NewTurn(alice, memory.RoleUser, "far future", time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC))
	if err := d.Put(context.Background(), []memory.Record{r}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("Put with Created in 3000 = %v, want ErrInvalidArgument", err)
	}
	r = memory.NewTurn(alice, memory.RoleUser, "old expiry", t0)
	r.Expires = time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := d.Put(context.Background(), []memory.Record{r}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("Put with Expires in 1500 = %v, want ErrInvalidArgument", err)
	}
}

func TestPersistence(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub dir?#%", "memory.db") // characters URIs reserve
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var want []memory.Record
	for i := range 20 {
		r := memory.NewTurn(alice, memory.RoleUser, fmt.Sprintf("turn %d", i), t0.Add(time.Duration(i)*time.Second))
		r.Metadata = map[string]string{"i": fmt.Sprint(i)}
		want = append([]memory.Record{r}, want...)
		mustPut(t, d, r)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not at the given path: %v", err)
	}
	d, err = Open(path, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer d.Close()
	got := mustList(t, d, at(t, alice, memory.LevelSession))
	if len(got) != len(want) {
		t.Fatalf("after reopen: %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if diff := recordDiff(want[i], got[i]); diff != "" {
			t.Errorf("record %d (-want +got):\n%s", i, diff)
		}
	}
}

func TestSchemaVersion(t *testing.T) {
	d, path := openTemp(t, Options{})
	var v int
	if err := d.r.Get(&v, "SELECT version FROM memory_schema WHERE id = 1"); err != nil || v != SchemaVersion {
		t.Fatalf("schema version = %d, %v; want %d", v, err, SchemaVersion)
	}
	mustPut(t, d, memory.NewTurn(alice, memory.RoleUser, "kept", t0))
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopening a current file migrates nothing and keeps the data.
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if got := mustList(t, d, at(t, alice, memory.LevelSession)); len(got) != 1 {
		t.Fatalf("after reopen: %d records, want 1", len(got))
	}
	// A newer driver bumps the version.
	if _, err := d.w.Exec("UPDATE memory_schema SET version = ?", SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	_ = d.Close()
	_, err = Open(path, Options{})
	if !errors.Is(err, memory.ErrUnimplemented) {
		t.Fatalf("Open of a newer schema = %v, want ErrUnimplemented", err)
	}
	if !strings.Contains(err.Error(), "newer") {
		t.Errorf("error %q does not say the schema is newer", err)
	}
}

// TestSchemaMigratesUnversionedFile opens a file whose schema table exists
// but records no version, as a crash between creating it and migrating
// would leave it: the migration runs and the logger hears of it.
func TestSchemaMigratesUnversionedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sqlx.Open(DriverName, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(createSchemaTable); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	d, err := Open(path, Options{Logger: logger})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer d.Close()
	var v int
	if err := d.r.Get(&v, "SELECT version FROM memory_schema WHERE id = 1"); err != nil || v != SchemaVersion {
		t.Fatalf("schema version = %d, %v; want %d", v, err, SchemaVersion)
	}
	if !strings.Contains(logs.String(), "migrated schema") {
		t.Errorf("no migration logged; log:\n%s", logs.String())
	}
	mustPut(t, d, memory.NewTurn(alice, memory.RoleUser, "hi", t0))
}

func TestSchemaCreatedInEmptyInjectedDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.db")
	db, err := sqlx.Open(DriverName, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The host program's own table lives beside ours.
	if _, err := db.Exec("CREATE TABLE host_things (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	d, err := New(db, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	mustPut(t, d, memory.NewTurn(alice, memory.RoleUser, "hi", t0))
	if got := mustList(t, d, at(t, alice, memory.LevelSession)); len(got) != 1 {
		t.Fatalf("got %d records, want 1", len(got))
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// Close leaves the injected handle open for its owner.
	if err := db.Ping(); err != nil {
		t.Fatalf("injected handle closed by Close: %v", err)
	}
	var mode string
	if err := db.Get(&mode, "PRAGMA journal_mode"); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	// A second driver on the same handle sees the stored schema and data.
	d2, err := New(db, Options{})
	if err != nil {
		t.Fatalf("New again: %v", err)
	}
	defer d2.Close()
	if got := mustList(t, d2, at(t, alice, memory.LevelSession)); len(got) != 1 {
		t.Fatalf("second driver: got %d records, want 1", len(got))
	}
}

func TestNewRejectsBadHandles(t *testing.T) {
	if _, err := New(nil, Options{}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("New(nil) = %v, want ErrInvalidArgument", err)
	}
	sql.Register("agentmem-fake", fakeDriver{})
	fake, err := sqlx.Open("agentmem-fake", "")
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	if _, err := New(fake, Options{}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("New(non-sqlite handle) = %v, want ErrInvalidArgument", err)
	}
	mem, err := sqlx.Open(DriverName, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if _, err := New(mem, Options{}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("New(in-memory handle with a pool) = %v, want ErrInvalidArgument", err)
	}
	mem.SetMaxOpenConns(1)
	d, err := New(mem, Options{})
	if err != nil {
		t.Fatalf("New(in-memory handle with one connection) = %v", err)
	}
	defer d.Close()
	mustPut(t, d, memory.NewTurn(alice, memory.RoleUser, "hi", t0))
	if got := mustList(t, d, at(t, alice, memory.LevelSession)); len(got) != 1 {
		t.Fatalf("got %d records, want 1", len(got))
	}
}

type fakeDriver struct{}

func (fakeDriver) Open(string) (sqlconn.Conn, error) { return nil, errors.New("fake driver") }

func TestOpenMemoryPath(t *testing.T) {
	d, err := Open(MemoryPath, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				r := memory.NewTurn(alice, memory.RoleUser, fmt.Sprint(g, i), t0.Add(time.Duration(g*100+i)))
				if err := d.Put(context.Background(), []memory.Record{r}); err != nil {
					t.Error(err)
					return
				}
				if _, err := d.List(context.Background(), at(t, alice, memory.LevelSession)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := mustList(t, d, at(t, alice, memory.LevelSession)); len(got) != 100 {
		t.Fatalf("got %d records, want 100", len(got))
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open("", Options{}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("Open(\"\") = %v, want ErrInvalidArgument", err)
	}
	_, err := Open(filepath.Join(t.TempDir(), "no", "such", "dir", "m.db"), Options{})
	if !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Open in a missing directory = %v, want ErrNotFound", err)
	}
	var se sqlite3.Error
	if !errors.As(err, &se) || se.Code != sqlite3.ErrCantOpen {
		t.Errorf("Open in a missing directory: errors.As sqlite3.Error = %v (%v), want ErrCantOpen", se.Code, err)
	}

	junk := filepath.Join(t.TempDir(), "junk.db")
	if err := os.WriteFile(junk, []byte(strings.Repeat("this is not a database file\n", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(junk, Options{})
	if !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("Open of a non-database = %v, want ErrInvalidArgument", err)
	}
	if !errors.As(err, &se) || se.Code != sqlite3.ErrNotADB {
		t.Errorf("Open of a non-database: errors.As sqlite3.Error = %v (%v), want ErrNotADB", se.Code, err)
	}
}

func TestConflict(t *testing.T) {
	d, _ := openTemp(t, Options{})
	orig := memory.NewDocument(alice, "k", "plan", `{"v":1}`, t0)
	mustPut(t, d, orig)

	// Same id, same identity: replaced.
	upd := orig
	upd.Content = `{"v":2}`
	upd.Created = t0.Add(time.Minute)
	mustPut(t, d, upd)
	got := mustList(t, d, at(t, alice, memory.LevelSquadAgentRun))
	if len(got) != 1 {
		t.Fatalf("after same-identity upsert: %d records, want 1", len(got))
	}
	if diff := recordDiff(upd, got[0]); diff != "" {
		t.Fatalf("after same-identity upsert (-want +got):\n%s", diff)
	}

	// Same id, any identity field but tenant different: refused, batch
	// not stored. (Another tenant's use of the id is its own record: ids
	// are unique per tenant, which the conformance suite checks.)
	for _, f := range []memory.Field{memory.FieldUser, memory.FieldAgent, memory.FieldInstance, memory.FieldSquad, memory.FieldSession} {
		other := alice
		switch f {
		case memory.FieldUser:
			other.User = ""
		case memory.FieldAgent:
			other.Agent = "kaos://agent/ns/other"
		case memory.FieldInstance:
			other.Instance = "inst-2"
		case memory.FieldSquad:
			other.Squad = "squad-2"
		case memory.FieldSession:
			other.Session = "run-2"
		}
		fresh := memory.NewTurn(other, memory.RoleUser, "fresh", t0)
		hijack := upd
		hijack.Identity = other
		hijack.Content = `{"v":"stolen"}`
		err := d.Put(context.Background(), []memory.Record{fresh, hijack})
		if !errors.Is(err, memory.ErrPermissionDenied) {
			t.Fatalf("foreign-identity upsert (%s differs) = %v, want ErrPermissionDenied", f, err)
		}
		if !strings.Contains(err.Error(), hijack.ID) {
			t.Errorf("refusal %q does not name record %s", err, hijack.ID)
		}
		var me *memory.Error
		if !errors.As(err, &me) || me.Kind != memory.ErrPermissionDenied {
			t.Errorf("error %v is not a *memory.Error of kind ErrPermissionDenied", err)
		}
		if n := count(t, d); n != 1 {
			t.Fatalf("after conflicting batch (%s differs): %d records stored, want 1", f, n)
		}
	}
	got = mustList(t, d, at(t, alice, memory.LevelSquadAgentRun))
	if len(got) != 1 || got[0].Content != `{"v":2}` {
		t.Fatalf("stored record changed by a conflicting batch: %+v", got)
	}

	// A batch of one identity (bound once per statement) that reuses an id
	// stored with another identity.
	bob := alice
	bob.User = "bob"
	var batch []memory.Record
	for i := range 40 {
		batch = append(batch, memory.NewTurn(bob, memory.RoleUser, fmt.Sprint(i), t0))
	}
	batch[35].ID = upd.ID
	if err := d.Put(context.Background(), batch); !errors.Is(err, memory.ErrPermissionDenied) || !strings.Contains(err.Error(), upd.ID) {
		t.Fatalf("one-identity batch reusing a foreign id = %v, want ErrPermissionDenied naming %s", err, upd.ID)
	}
	if n := count(t, d); n != 1 {
		t.Fatalf("after conflicting one-identity batch: %d records stored, want 1", n)
	}
	batch[35].ID = memory.NewID(t0)
	mustPut(t, d, batch...)
	got = mustList(t, d, at(t, bob, memory.LevelUser))
	if len(got) != 40 {
		t.Fatalf("one-identity batch: %d records, want 40", len(got))
	}
	if diff := cmp.Diff(bob, got[0].Identity); diff != "" {
		t.Fatalf("one-identity batch: first record's identity (-want +got):\n%s", diff)
	}
	mustDelete(t, d, at(t, bob, memory.LevelUser), 40)

	// Duplicate ids in one batch with the same identity: the last wins.
	a, b := orig, orig
	a.Content, b.Content = `{"v":"a"}`, `{"v":"b"}`
	mustPut(t, d, a, b)
	if got := mustList(t, d, at(t, alice, memory.LevelSquadAgentRun)); len(got) != 1 || got[0].Content != `{"v":"b"}` {
		t.Fatalf("duplicate ids in a batch: %+v", got)
	}
}

// TestLargeBatchAllOrNothing puts MaxBatch records whose last one
// conflicts: nothing of the batch may be stored. Then the same batch
// without the conflict is stored whole.
func TestLargeBatchAllOrNothing(t *testing.T) {
	d, _ := openTemp(t, Options{})
	owner := memory.NewFact(alice, "owned", t0)
	mustPut(t, d, owner)
	batch := make([]memory.Record, 0, memory.MaxBatch)
	for i := range memory.MaxBatch - 1 {
		batch = append(batch, memory.NewTurn(alice, memory.RoleUser, fmt.Sprint(i), t0.Add(time.Duration(i))))
	}
	hijack := owner
	hijack.Identity.Session = "run-2"
	err := d.Put(context.Background(), append(batch, hijack))
	if !errors.Is(err, memory.ErrPermissionDenied) || !strings.Contains(err.Error(), owner.ID) {
		t.Fatalf("batch with a conflicting last record = %v, want ErrPermissionDenied naming %s", err, owner.ID)
	}
	if n := count(t, d); n != 1 {
		t.Fatalf("after the failed batch: %d records, want 1", n)
	}
	mustPut(t, d, append(batch, owner)...)
	if n := count(t, d); n != memory.MaxBatch {
		t.Fatalf("after the good batch: %d records, want %d", n, memory.MaxBatch)
	}
	q := at(t, alice, memory.LevelSession)
	q.Limit = 3
	got := mustList(t, d, q)
	if len(got) != 3 || got[0].Content != fmt.Sprint(memory.MaxBatch-2) {
		t.Fatalf("newest 3 after the batch: %+v", got)
	}
}

// TestTwoDriversOneFile writes through two drivers on one file at once, as
// two processes would: the busy timeout and immediate transactions keep
// every write from failing.
func TestTwoDriversOneFile(t *testing.T) {
	d1, path := openTemp(t, Options{})
	d2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	var wg sync.WaitGroup
	for i, d := range []*Driver{d1, d2, d1, d2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := alice
			id.Session = fmt.Sprint("run-", i)
			for j := range 50 {
				batch := []memory.Record{memory.NewTurn(id, memory.RoleUser, fmt.Sprint(j), t0.Add(time.Duration(j)))}
				if err := d.Put(context.Background(), batch); err != nil {
					t.Errorf("driver %d: %v", i, err)
					return
				}
				if _, err := d.List(context.Background(), at(t, id, memory.LevelSession)); err != nil {
					t.Errorf("driver %d: %v", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := mustList(t, d2, at(t, alice, memory.LevelUser)); len(got) != 200 {
		t.Fatalf("got %d records, want 200", len(got))
	}
}

func mustDelete(t *testing.T, d *Driver, q driver.Query, want int64) {
	t.Helper()
	n, err := d.Delete(context.Background(), q)
	if err != nil || n != want {
		t.Fatalf("Delete = %d, %v; want %d", n, err, want)
	}
}

func count(t *testing.T, d *Driver) int {
	t.Helper()
	var n int
	if err := d.r.Get(&n, "SELECT count(*) FROM memory_records"); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestFilterExact(t *testing.T) {
	d, _ := openTemp(t, Options{})
	alicia := alice
	alicia.User = "alicia"
	anon := alice
	anon.User = ""
	other := alice
	other.Tenant = "globex"
	mustPut(t, d,
		memory.NewTurn(alice, memory.RoleUser, "alice", t0),
		memory.NewTurn(alicia, memory.RoleUser, "alicia", t0),
		memory.NewTurn(anon, memory.RoleUser, "anon", t0),
		memory.NewTurn(other, memory.RoleUser, "other tenant", t0),
	)
	check := func(q driver.Query, want ...string) {
		t.Helper()
		var got []string
		for _, r := range mustList(t, d, q) {
			got = append(got, r.Content)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") && !sameSet(got, want) {
			t.Errorf("match %s identity %+v: got %v, want %v", q.Filter.Match, q.Filter.Identity, got, want)
		}
	}
	check(at(t, alice, memory.LevelUser), "alice")
	check(at(t, alicia, memory.LevelUser), "alicia")
	check(at(t, alice, memory.LevelSession), "alice")
	check(at(t, anon, memory.LevelSession), "anon", "alice", "alicia")
	check(driver.Query{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldUser | memory.FieldSession, Identity: anon}}, "anon")
	check(at(t, other, memory.LevelStore), "other tenant")
	check(at(t, memory.Identity{Tenant: "acme"}, memory.LevelStore), "alice", "alicia", "anon")
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
		if m[s] < 0 {
			return false
		}
	}
	return true
}

func TestOrderLimitNarrowing(t *testing.T) {
	d, _ := openTemp(t, Options{})
	var recs []memory.Record
	for i := range 10 {
		r := memory.NewTurn(alice, memory.RoleUser, fmt.Sprint(i), t0.Add(time.Duration(i/3)*time.Second))
		r.ID = fmt.Sprintf("id-%02d", (i*7)%10) // ties on Created ordered by id
		recs = append(recs, r)
	}
	doc := memory.NewDocument(alice, "k1", "plan", "{}", t0)
	recs = append(recs, doc)
	mustPut(t, d, recs...)
	got := mustList(t, d, at(t, alice, memory.LevelSession))
	for i := 1; i < len(got); i++ {
		if !driver.Newer(got[i-1], got[i]) {
			t.Fatalf("records %d and %d out of order: %s/%s then %s/%s", i-1, i, got[i-1].Created, got[i-1].ID, got[i].Created, got[i].ID)
		}
	}
	q := at(t, alice, memory.LevelSession)
	q.Limit = 4
	lim := mustList(t, d, q)
	if len(lim) != 4 {
		t.Fatalf("Limit 4: %d records", len(lim))
	}
	for i := range lim {
		if lim[i].ID != got[i].ID {
			t.Errorf("Limit 4: record %d is %s, want %s (the newest)", i, lim[i].ID, got[i].ID)
		}
	}
	q = at(t, alice, memory.LevelSession)
	q.Kinds = []memory.Kind{memory.KindDocument}
	if got := mustList(t, d, q); len(got) != 1 || got[0].ID != doc.ID {
		t.Errorf("Kinds document: %+v", got)
	}
	q.Kinds = []memory.Kind{memory.KindTurn, memory.KindFact}
	if got := mustList(t, d, q); len(got) != 10 {
		t.Errorf("Kinds turn,fact: %d records, want 10", len(got))
	}
	q = at(t, alice, memory.LevelSession)
	q.Key = "k1"
	if got := mustList(t, d, q); len(got) != 1 || got[0].ID != doc.ID {
		t.Errorf("Key k1: %+v", got)
	}
	q = at(t, alice, memory.LevelSession)
	q.IDs = []string{"id-03", "id-05", "nope"}
	if got := mustList(t, d, q); len(got) != 2 {
		t.Errorf("IDs: %d records, want 2", len(got))
	}
	// Delete ignores Limit and counts.
	q = at(t, alice, memory.LevelSession)
	q.Limit = 1
	q.Kinds = []memory.Kind{memory.KindTurn}
	n, err := d.Delete(context.Background(), q)
	if err != nil || n != 10 {
		t.Fatalf("Delete = %d, %v; want 10", n, err)
	}
	if got := mustList(t, d, at(t, alice, memory.LevelSession)); len(got) != 1 {
		t.Errorf("after Delete: %d records, want 1", len(got))
	}
}

// TestTieBlock stores a batch sharing one creation time, with ids that do
// not follow insertion order, between older and newer records: the newest
// N are the newer records, then the block by id descending.
func TestTieBlock(t *testing.T) {
	d, _ := openTemp(t, Options{})
	var batch []memory.Record
	var ids []string
	for i := range 300 {
		r := memory.NewFact(alice, fmt.Sprint("fact ", i), t0) // content-derived ids
		batch = append(batch, r)
		ids = append(ids, r.ID)
	}
	batch = append(batch,
		memory.NewTurn(alice, memory.RoleUser, "older", t0.Add(-time.Nanosecond)),
		memory.NewTurn(alice, memory.RoleUser, "newer", t0.Add(time.Nanosecond)))
	mustPut(t, d, batch...)
	slices.Sort(ids)
	slices.Reverse(ids)
	q := at(t, alice, memory.LevelSession)
	q.Limit = 50
	got := mustList(t, d, q)
	if len(got) != 50 || got[0].Content != "newer" {
		t.Fatalf("newest 50: %d records, first %q", len(got), got[0].Content)
	}
	for i, r := range got[1:] {
		if r.ID != ids[i] {
			t.Fatalf("record %d of the tie block is %s, want %s", i, r.ID, ids[i])
		}
	}
	q.Limit = 0
	if all := mustList(t, d, q); len(all) != 302 || all[301].Content != "older" {
		t.Fatalf("all: %d records, last %q", len(all), all[len(all)-1].Content)
	}
}

func TestExpiryAndSweep(t *testing.T) {
	var mu sync.Mutex
	now := t0
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	d, _ := openTemp(t, Options{Clock: clock})
	forever := memory.NewTurn(alice, memory.RoleUser, "forever", t0)
	soon := memory.NewTurn(alice, memory.RoleUser, "soon", t0.Add(time.Nanosecond))
	soon.Expires = t0.Add(time.Minute)
	later := memory.NewTurn(alice, memory.RoleUser, "later", t0.Add(2*time.Nanosecond))
	later.Expires = t0.Add(time.Hour)
	mustPut(t, d, forever, soon, later)
	if got := mustList(t, d, at(t, alice, memory.LevelSession)); len(got) != 3 {
		t.Fatalf("before expiry: %d records, want 3", len(got))
	}
	mu.Lock()
	now = t0.Add(time.Minute) // exactly at soon's expiry: expired
	mu.Unlock()
	got := mustList(t, d, at(t, alice, memory.LevelSession))
	if len(got) != 2 || got[0].ID != later.ID || got[1].ID != forever.ID {
		t.Fatalf("at expiry: %+v", got)
	}
	n, err := d.Sweep(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1", n, err)
	}
	if c := count(t, d); c != 2 {
		t.Fatalf("after Sweep: %d rows, want 2", c)
	}
	// Delete removes expired records too.
	mu.Lock()
	now = t0.Add(2 * time.Hour)
	mu.Unlock()
	n, err = d.Delete(context.Background(), at(t, alice, memory.LevelSession))
	if err != nil || n != 2 {
		t.Fatalf("Delete = %d, %v; want 2 (one of them expired)", n, err)
	}
}

func TestCancelledContext(t *testing.T) {
	d, _ := openTemp(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := memory.NewTurn(alice, memory.RoleUser, "x", t0)
	if err := d.Put(ctx, []memory.Record{r}); err != context.Canceled {
		t.Errorf("Put = %v, want context.Canceled unchanged", err)
	}
	if _, err := d.List(ctx, at(t, alice, memory.LevelSession)); err != context.Canceled {
		t.Errorf("List = %v, want context.Canceled", err)
	}
	if _, err := d.Delete(ctx, at(t, alice, memory.LevelSession)); err != context.Canceled {
		t.Errorf("Delete = %v, want context.Canceled", err)
	}
	if _, err := d.Sweep(ctx); err != context.Canceled {
		t.Errorf("Sweep = %v, want context.Canceled", err)
	}
	if count(t, d) != 0 {
		t.Error("a cancelled Put stored something")
	}
}

// TestDeadlineWaitingForWriter holds the write lock from another
// connection: a Put whose deadline passes while waiting returns the
// context's error, and without a deadline it times out as a classified
// conflict that still unwraps to the native SQLITE_BUSY.
func TestDeadlineWaitingForWriter(t *testing.T) {
	d, path := openTemp(t, Options{BusyTimeout: 300 * time.Millisecond})
	other, err := sqlx.Open(DriverName, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO memory_schema (id, version) VALUES (1, ?) ON CONFLICT (id) DO NOTHING", SchemaVersion); err != nil {
		t.Fatal(err)
	}
	r := memory.NewTurn(alice, memory.RoleUser, "x", t0)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := d.Put(ctx, []memory.Record{r}); err != context.DeadlineExceeded {
		t.Errorf("Put past its deadline = %v, want context.DeadlineExceeded", err)
	}
	err = d.Put(context.Background(), []memory.Record{r})
	if !errors.Is(err, memory.ErrConflict) {
		t.Errorf("Put against a held lock = %v, want ErrConflict", err)
	}
	var se sqlite3.Error
	if !errors.As(err, &se) || se.Code != sqlite3.ErrBusy {
		t.Errorf("errors.As(%v, sqlite3.Error) = %v, want ErrBusy", err, se.Code)
	}
	// Readers are not blocked by the writer.
	if _, err := d.List(context.Background(), at(t, alice, memory.LevelSession)); err != nil {
		t.Errorf("List while another process writes: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	mustPut(t, d, r) // the writer connection is still usable
}

func TestCloseIdempotent(t *testing.T) {
	d, _ := openTemp(t, Options{})
	mustPut(t, d, memory.NewTurn(alice, memory.RoleUser, "x", t0))
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ctx := context.Background()
	checks := map[string]error{
		"Put":   d.Put(ctx, []memory.Record{memory.NewTurn(alice, memory.RoleUser, "y", t0)}),
		"Put0":  d.Put(ctx, nil),
		"List":  func() error { _, err := d.List(ctx, at(t, alice, memory.LevelSession)); return err }(),
		"Del":   func() error { _, err := d.Delete(ctx, at(t, alice, memory.LevelSession)); return err }(),
		"Sweep": func() error { _, err := d.Sweep(ctx); return err }(),
	}
	for name, err := range checks {
		if !errors.Is(err, memory.ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
}

func TestBadInputClassified(t *testing.T) {
	d, _ := openTemp(t, Options{})
	ctx := context.Background()
	bad := memory.NewTurn(alice, memory.RoleUser, "x", t0)
	bad.ID = ""
	if err := d.Put(ctx, []memory.Record{bad}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("Put with empty id = %v", err)
	}
	if err := d.Put(ctx, make([]memory.Record, memory.MaxBatch+1)); !errors.Is(err, memory.ErrTooLarge) {
		t.Errorf("Put over MaxBatch = %v", err)
	}
	if _, err := d.List(ctx, driver.Query{Filter: memory.Filter{Match: memory.FieldSession, Identity: alice}}); !errors.Is(err, memory.ErrIncompleteScope) {
		t.Errorf("unscoped List = %v", err)
	}
	if _, err := d.Delete(ctx, driver.Query{}); !errors.Is(err, memory.ErrIncompleteScope) {
		t.Errorf("unscoped Delete = %v", err)
	}
	q := at(t, alice, memory.LevelSession)
	q.Limit = -1
	if _, err := d.List(ctx, q); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("negative limit = %v", err)
	}
	// Values that look like SQL are data.
	inj := alice
	inj.Session = "x' OR '1'='1"
	mustPut(t, d, memory.NewTurn(alice, memory.RoleUser, "secret", t0))
	if got := mustList(t, d, at(t, inj, memory.LevelSession)); len(got) != 0 {
		t.Errorf("injection-shaped session matched %d records", len(got))
	}
	q = at(t, alice, memory.LevelSession)
	q.Key = "') OR 1=1 --"
	q.Kinds = []memory.Kind{"turn' OR 'a'='a"}
	if got := mustList(t, d, q); len(got) != 0 {
		t.Errorf("injection-shaped key/kind matched %d records", len(got))
	}
	q = at(t, alice, memory.LevelSession)
	q.IDs = make([]string, memory.MaxBatch)
	for i := range q.IDs {
		q.IDs[i] = fmt.Sprint("id-", i)
	}
	if _, err := d.List(ctx, q); err != nil {
		t.Errorf("List with MaxBatch ids: %v", err)
	}
}

// TestConcurrentWritersAndReaders runs writers, readers, deleters and
// sweepers together: none may fail, in particular not with "database is
// locked".
func TestConcurrentWritersAndReaders(t *testing.T) {
	d, _ := openTemp(t, Options{Clock: func() time.Time { return t0.Add(time.Hour) }})
	ctx := context.Background()
	const writers, perWriter = 4, 60
	var wg sync.WaitGroup
	errc := make(chan error, 100)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := alice
			id.Session = fmt.Sprint("run-", w)
			for i := range perWriter {
				batch := []memory.Record{memory.NewTurn(id, memory.RoleUser, fmt.Sprint(i), t0.Add(time.Duration(i)))}
				if i%10 == 0 {
					for j := range 50 {
						batch = append(batch, memory.NewTurn(id, memory.RoleAssistant, fmt.Sprint(i, j), t0.Add(time.Duration(i))))
					}
				}
				if err := d.Put(ctx, batch); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := alice
			id.Session = fmt.Sprint("run-", r)
			for range perWriter {
				if _, err := d.List(ctx, at(t, id, memory.LevelSession)); err != nil {
					errc <- err
					return
				}
				if _, err := d.List(ctx, at(t, id, memory.LevelUser)); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 20 {
			if _, err := d.Sweep(ctx); err != nil {
				errc <- err
				return
			}
			q := at(t, alice, memory.LevelUser)
			q.Kinds = []memory.Kind{memory.KindFact}
			if _, err := d.Delete(ctx, q); err != nil {
				errc <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Errorf("concurrent call failed: %v", err)
	}
	// Each writer stored perWriter single turns plus 50 more every tenth call.
	if n, want := count(t, d), writers*(perWriter+perWriter/10*50); n != want {
		t.Errorf("stored %d records, want %d", n, want)
	}
}

// TestConcurrentClose closes the driver while calls are in flight: each
// call either completes or reports ErrClosed.
func TestConcurrentClose(t *testing.T) {
	d, _ := openTemp(t, Options{})
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				err := d.Put(ctx, []memory.Record{memory.NewTurn(alice, memory.RoleUser, fmt.Sprint(g, i), t0)})
				if err == nil {
					_, err = d.List(ctx, at(t, alice, memory.LevelSession))
				}
				if errors.Is(err, memory.ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("call during Close: %v", err)
					return
				}
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	if err := d.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	wg.Wait()
}

// TestQueryPlans checks that every level reads one index in Created order
// (SQLite sorts only records of equal Created by id, a block at a time, the
// plan's "LAST TERM OF ORDER BY"), so the newest N records of a scope cost
// about N row reads.
func TestQueryPlans(t *testing.T) {
	d, _ := openTemp(t, Options{})
	cases := []struct {
		level memory.Level
		id    memory.Identity
		index string
	}{
		{memory.LevelSession, alice, "memory_records_session"},
		{memory.LevelSession, memory.Identity{Tenant: "acme", Session: "run-1"}, "memory_records_session"},
		{memory.LevelAgent, alice, "memory_records_user"},
		{memory.LevelAgent, memory.Identity{Tenant: "acme", Agent: "a"}, "memory_records_agent"},
		{memory.LevelUser, alice, "memory_records_user"},
		{memory.LevelSquadAgentRun, alice, "memory_records_session"},
		{memory.LevelSquadAgent, alice, "memory_records_squad"},
		{memory.LevelAgentRun, alice, "memory_records_session"},
		{memory.LevelSquadRun, alice, "memory_records_session"},
		{memory.LevelSquad, alice, "memory_records_squad"},
		{memory.LevelParentAgent, alice, "memory_records_agent"},
	}
	for _, c := range cases {
		q := at(t, c.id, c.level)
		q.Limit = 50
		q.Kinds = []memory.Kind{memory.KindTurn}
		plan := explain(t, d, q)
		if !strings.Contains(plan, "USING INDEX "+c.index+" ") || strings.Contains(plan, "TEMP B-TREE FOR ORDER BY") {
			t.Errorf("level %s (%s): plan %q, want index %s and no full sort", c.level, q.Filter.Match, plan, c.index)
		}
	}
	q := at(t, alice, memory.LevelUser)
	q.IDs = []string{"a", "b"}
	if plan := explain(t, d, q); !strings.Contains(plan, "sqlite_autoindex_memory_records_1") {
		t.Errorf("ids query: plan %q, want the primary key", plan)
	}
	var plan strings.Builder
	rows, err := d.r.Queryx("EXPLAIN QUERY PLAN DELETE FROM memory_records WHERE expires IS NOT NULL AND expires <= ?", 1)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, parent, notused int
		var detail string
		_ = rows.Scan(&id, &parent, &notused, &detail)
		plan.WriteString(detail + "; ")
	}
	rows.Close()
	if !strings.Contains(plan.String(), "memory_records_expires") {
		t.Errorf("sweep plan %q, want the expiry index", plan.String())
	}
}

func explain(t *testing.T, d *Driver, q driver.Query) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("EXPLAIN QUERY PLAN SELECT id FROM memory_records WHERE ")
	args := where(&b, q)
	b.WriteString(" AND (+expires IS NULL OR +expires > ?) ORDER BY created DESC, id DESC LIMIT ?")
	args = append(args, 0, q.Limit)
	rows, err := d.r.Queryx(b.String(), args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "; ")
}
