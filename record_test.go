package memory_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestContentIDsAreDeterministic(t *testing.T) {
	a := memory.NewFact(full, "likes tea", t0)
	b := memory.NewFact(full, "likes tea", t0.Add(time.Hour))
	if a.ID != b.ID {
		t.Errorf("same fact in the same scope got ids %s and %s", a.ID, b.ID)
	}
	other := full
	other.User = "alicia"
	if c := memory.NewFact(other, "likes tea", t0); c.ID == a.ID {
		t.Error("same fact in another scope got the same id")
	}
	// Length prefixes keep field boundaries: moving a character from one
	// field to the next must change the id.
	x := memory.ContentID(memory.KindFact, memory.Identity{User: "ab", Agent: "c"})
	y := memory.ContentID(memory.KindFact, memory.Identity{User: "a", Agent: "bc"})
	if x == y {
		t.Error("field boundaries collide")
	}
	d1 := memory.NewDocument(full, "k", "working", `{"a":1}`, t0)
	d2 := memory.NewDocument(full, "k", "working", `{"a":2}`, t0)
	if d1.ID != d2.ID {
		t.Error("the same key in the same scope must keep its id")
	}
}

func TestNewIDSortsByTime(t *testing.T) {
	var ids []string
	for i := range 1000 {
		ids = append(ids, memory.NewID(t0.Add(time.Duration(i/10)*time.Nanosecond)))
	}
	if !sort.StringsAreSorted(ids) {
		t.Error("ids made in time order do not sort in time order")
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
	}
}

// Every kind Kinds lists is valid, once, and a record of it validates;
// superseded facts among them (KindSuperseded).
func TestKinds(t *testing.T) {
	seen := map[memory.Kind]bool{}
	for _, k := range memory.Kinds {
		if !k.Valid() || seen[k] {
			t.Errorf("kind %q: valid %t, listed before %t", k, k.Valid(), seen[k])
		}
		seen[k] = true
		r := memory.Record{ID: "r", Kind: k, Identity: full, Content: "{}", Created: t0}
		if err := r.Validate(); err != nil {
			t.Errorf("a record of kind %q: %v", k, err)
		}
	}
	if !seen[memory.KindSuperseded] {
		t.Errorf("Kinds %v leaves out %q", memory.Kinds, memory.KindSuperseded)
	}
	for _, k := range []memory.Kind{"", "Fact", "superseded ", "blob"} {
		if k.Valid() {
			t.Errorf("kind %q is valid", k)
		}
	}
}

func TestRecordValidate(t *testing.T) {
	ok := memory.NewTurn(full, memory.RoleUser, "hello", t0)
	cases := []struct {
		name string
		edit func(*memory.Record)
		err  error
	}{
		{"valid", func(*memory.Record) {}, nil},
		{"empty id", func(r *memory.Record) { r.ID = "" }, memory.ErrInvalidArgument},
		{"long id", func(r *memory.Record) { r.ID = strings.Repeat("x", memory.MaxIDBytes+1) }, memory.ErrTooLarge},
		{"unknown kind", func(r *memory.Record) { r.Kind = "blob" }, memory.ErrInvalidArgument},
		{"no time", func(r *memory.Record) { r.Created = time.Time{} }, memory.ErrInvalidArgument},
		{"time past 2262", func(r *memory.Record) { r.Created = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) }, memory.ErrInvalidArgument},
		{"expiry before 1678", func(r *memory.Record) { r.Expires = time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC) }, memory.ErrInvalidArgument},
		{"invalid utf-8", func(r *memory.Record) { r.Content = "ok \xc3\x28" }, memory.ErrInvalidArgument},
		{"NUL", func(r *memory.Record) { r.Content = "a\x00b" }, memory.ErrInvalidArgument},
		{"oversized", func(r *memory.Record) { r.Content = strings.Repeat("a", memory.MaxContentBytes+1) }, memory.ErrTooLarge},
		{"max size", func(r *memory.Record) { r.Content = strings.Repeat("a", memory.MaxContentBytes) }, nil},
		{"bad identity", func(r *memory.Record) { r.Identity.Squad = "\t" }, memory.ErrInvalidArgument},
		{"empty metadata key", func(r *memory.Record) { r.Metadata = map[string]string{"": "v"} }, memory.ErrInvalidArgument},
		{"too much metadata", func(r *memory.Record) {
			r.Metadata = map[string]string{}
			for i := range memory.MaxMetadataEntries + 1 {
				r.Metadata[fmt.Sprint(i)] = "v"
			}
		}, memory.ErrTooLarge},
	}
	for _, tc := range cases {
		r := ok
		tc.edit(&r)
		err := r.Validate()
		if tc.err == nil && err != nil || tc.err != nil && !errors.Is(err, tc.err) {
			t.Errorf("%s: Validate() = %v, want %v", tc.name, err, tc.err)
		}
	}
}

func TestErrorWrapping(t *testing.T) {
	native := &fs.PathError{Op: "open", Path: "/x", Err: fs.ErrNotExist}
	err := memory.Wrap(memory.ErrNotFound, native, "loading entry")
	if !errors.Is(err, memory.ErrNotFound) {
		t.Error("errors.Is does not find the sentinel")
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe != native {
		t.Error("errors.As does not find the native error")
	}
	if errors.Is(err, memory.ErrConflict) {
		t.Error("error matches a sentinel it is not")
	}
	if memory.Wrap(memory.ErrNotFound, nil, "x") != nil {
		t.Error("Wrap(nil) is not nil")
	}
	if !strings.Contains(err.Error(), "loading entry") || !strings.Contains(err.Error(), "/x") {
		t.Errorf("message %q lacks context", err)
	}
}

func TestWrapPassesContextErrors(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := memory.Wrap(memory.ErrInvalidArgument, ctx.Err(), "x"); err != context.Canceled {
		t.Errorf("Wrap(context.Canceled) = %v, want it unchanged", err)
	}
}
