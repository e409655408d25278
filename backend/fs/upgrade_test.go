package fs

import (
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// TestUpgradeFormatOne opens a log an earlier driver wrote — format 1,
// whose tombstones name ids alone — and checks that every record and
// tombstone reads as it did, that the log is rewritten in the current
// format before anything is written, and that the tenants then share ids.
func TestUpgradeFormatOne(t *testing.T) {
	dir := t.TempDir()
	acme := memory.Identity{Tenant: "acme", Agent: "a"}
	other := memory.Identity{Tenant: "other", Agent: "a"}
	rec := func(who memory.Identity, id string, sec int) memory.Record {
		return memory.Record{ID: id, Kind: memory.KindFact, Identity: who, Content: id + " of " + who.Tenant, Created: time.Unix(int64(sec), 0).UTC(), Tokens: 1}
	}
	put := newEncoder(opPut, 3)
	put.record(rec(acme, "a1", 1), 1)
	put.record(rec(acme, "a2", 2), 1)
	put.record(rec(other, "b1", 3), 2)
	del := newEncoder(opDelete, 2) // format 1: ids alone
	del.str("a2")
	del.str("never-stored")
	put2 := newEncoder(opPut, 1)
	put2.record(rec(other, "b2", 4), 1)
	err := writeLog(dir, logHeader{generation: 7}, func(w io.Writer) error {
		for _, f := range [][]byte{put.frame(), del.frame(), put2.frame()} {
			if _, err := w.Write(f); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	setFormat(t, dir, logFormatIDOnly)

	d, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if h := readHeader(t, dir); h.format != logFormat || h.generation != 8 {
		t.Errorf("after Open the log has format %d, generation %d; want format %d, generation 8", h.format, h.generation, logFormat)
	}
	list := func(tenant string) []memory.Record {
		t.Helper()
		recs, err := d.List(context.Background(), driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: tenant}}})
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	want := func(recs ...memory.Record) []memory.Record { return recs }
	withVersion := func(r memory.Record, v int64) memory.Record { r.Version = v; return r }
	if diff := cmp.Diff(want(withVersion(rec(acme, "a1", 1), 1)), list("acme")); diff != "" {
		t.Errorf("acme's records after the upgrade (-want +got):\n%s", diff)
	}
	otherWant := want(withVersion(rec(other, "b2", 4), 1), withVersion(rec(other, "b1", 3), 2))
	if diff := cmp.Diff(otherWant, list("other")); diff != "" {
		t.Errorf("other's records after the upgrade (-want +got):\n%s", diff)
	}

	// The upgraded log names tenants in its tombstones: another tenant's
	// record under acme's id is its own, and deleting it leaves acme's.
	if err := d.Put(context.Background(), []memory.Record{rec(other, "a1", 5)}); err != nil {
		t.Fatalf("another tenant storing acme's id after the upgrade: %v", err)
	}
	q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "other"}}, IDs: []string{"a1"}}
	if n, err := d.Delete(context.Background(), q); err != nil || n != 1 {
		t.Fatalf("deleting other's a1: %d, %v", n, err)
	}
	reopened, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	recs, err := reopened.List(context.Background(), driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "acme"}}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want(withVersion(rec(acme, "a1", 1), 1)), recs); diff != "" {
		t.Errorf("acme's records after another tenant's tombstone, reopened (-want +got):\n%s", diff)
	}
}

// setFormat rewrites the format version in the header of dir's log.
func setFormat(t *testing.T, dir string, format uint32) {
	t.Helper()
	path := filepath.Join(dir, logName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b[8:12], format)
	binary.LittleEndian.PutUint32(b[24:28], frameSum(b[:24], nil))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readHeader reads the header of dir's log.
func readHeader(t *testing.T, dir string) logHeader {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, logName))
	if err != nil {
		t.Fatal(err)
	}
	h, err := decodeHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
