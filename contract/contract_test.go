package contract_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/contract"
)

// TestErrorTable checks the table both ways: each sentinel's errors get
// their class and status, and the wire error read back matches the same
// sentinel and no other.
func TestErrorTable(t *testing.T) {
	sentinels := []error{memory.ErrNotFound, memory.ErrInvalidArgument, memory.ErrIncompleteScope, memory.ErrPermissionDenied,
		memory.ErrConflict, memory.ErrTooLarge, memory.ErrUnimplemented, memory.ErrClosed, memory.ErrUnavailable,
		contract.ErrUnauthenticated, context.Canceled, context.DeadlineExceeded}
	want := map[error]struct {
		class  contract.Class
		status int
	}{
		memory.ErrInvalidArgument:   {"invalid_argument", 400},
		memory.ErrIncompleteScope:   {"incomplete_scope", 400},
		contract.ErrUnauthenticated: {"unauthenticated", 401},
		memory.ErrPermissionDenied:  {"permission_denied", 403},
		memory.ErrNotFound:          {"not_found", 404},
		memory.ErrConflict:          {"conflict", 409},
		memory.ErrTooLarge:          {"too_large", 413},
		memory.ErrUnavailable:       {"unavailable", 503},
		memory.ErrClosed:            {"closed", 503},
		memory.ErrUnimplemented:     {"unimplemented", 501},
		context.DeadlineExceeded:    {"deadline_exceeded", 504},
		context.Canceled:            {"canceled", 499},
	}
	for _, s := range sentinels {
		err := memory.Errorf(s, "something about %s", s)
		if isCtx := s == context.Canceled || s == context.DeadlineExceeded; isCtx {
			err = fmt.Errorf("wrapped: %w", s)
		}
		w := contract.NewError(err)
		if w.Class != want[s].class || w.Class.Status() != want[s].status {
			t.Errorf("%v: class %q status %d, want %q %d", s, w.Class, w.Class.Status(), want[s].class, want[s].status)
		}
		b, _ := json.Marshal(contract.ErrorBody{Error: w})
		var back contract.ErrorBody
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		got := error(&back.Error)
		for _, o := range sentinels {
			if errors.Is(got, o) != (o == s) {
				t.Errorf("%s read back: errors.Is(%v) = %v", b, o, !(o == s))
			}
		}
		if got.Error() != err.Error() {
			t.Errorf("message %q, want %q", got.Error(), err.Error())
		}
	}
	if c := contract.ClassOf(errors.New("plain")); c != contract.ClassInternal || c.Status() != 500 || !errors.Is(c.Sentinel(), memory.ErrUnavailable) {
		t.Errorf("an unclassified error: %q %d", c, c.Status())
	}
	if c := contract.ClassOf(nil); c != "" {
		t.Errorf("ClassOf(nil) = %q", c)
	}
	for status, class := range map[int]contract.Class{400: "invalid_argument", 401: "unauthenticated", 404: "not_found",
		418: "invalid_argument", 502: "internal", 503: "unavailable", 504: "deadline_exceeded", 405: "method_not_allowed"} {
		if c := contract.ClassOfStatus(status); c != class {
			t.Errorf("ClassOfStatus(%d) = %q, want %q", status, c, class)
		}
	}
	if s := contract.Class("from_the_future").Sentinel(); s != memory.ErrUnavailable {
		t.Errorf("an unknown class's sentinel: %v", s)
	}
}

// TestRecordRoundTrip checks a record survives the wire: every field but
// the vector, times to the nanosecond, a zero expiry left out.
func TestRecordRoundTrip(t *testing.T) {
	created := time.Date(2025, 3, 4, 5, 6, 7, 891011121, time.UTC)
	r := memory.Record{ID: "x1", Kind: memory.KindFact, Label: "l", Key: "k", Content: "Alice lives in Lisbon.",
		Identity: memory.Identity{Tenant: "t", User: "u", Agent: "a", Instance: "i", Squad: "q", Session: "s"},
		Metadata: map[string]string{"speaker": "Alice"}, Created: created, Expires: created.Add(time.Hour), Tokens: 7, Version: 3}
	b, err := json.Marshal(contract.FromRecord(r))
	if err != nil {
		t.Fatal(err)
	}
	var w contract.Record
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	got := w.Memory()
	if !got.Created.Equal(r.Created) || !got.Expires.Equal(r.Expires) {
		t.Errorf("times: %v %v", got.Created, got.Expires)
	}
	got.Created, got.Expires = r.Created, r.Expires
	if !reflect.DeepEqual(got, r) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, r)
	}
	r.Expires = time.Time{}
	b, _ = json.Marshal(contract.FromRecord(r))
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if _, ok := m["expires"]; ok {
		t.Errorf("a record that never expires carries expires: %s", b)
	}
	if b, _ := json.Marshal(contract.FromRecords(nil)); string(b) != "[]" {
		t.Errorf("no records on the wire: %s", b)
	}
}

// TestValidate checks the requests' checks and their classes.
func TestValidate(t *testing.T) {
	big := string(make([]byte, contract.MaxTextBytes+1))
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"recall", contract.RecallRequest{Text: "hi", Scope: "agent", Include: []contract.Tier{"short", "long"}, K: 3}.Validate(), nil},
		{"recall default scope", contract.RecallRequest{}.Validate(), nil},
		{"recall unknown scope", contract.RecallRequest{Scope: "SQUAD"}.Validate(), memory.ErrInvalidArgument},
		{"recall unknown tier", contract.RecallRequest{Include: []contract.Tier{"deep"}}.Validate(), memory.ErrInvalidArgument},
		{"recall negative k", contract.RecallRequest{K: -1}.Validate(), memory.ErrInvalidArgument},
		{"recall text too large", contract.RecallRequest{Text: big}.Validate(), memory.ErrTooLarge},
		{"list negative budget", contract.ListRequest{Budget: -1}.Validate(), memory.ErrInvalidArgument},
		{"list store", contract.ListRequest{Scope: "store"}.Validate(), nil},
		{"forget without scope", contract.ForgetRequest{}.Validate(), memory.ErrInvalidArgument},
		{"forget user", contract.ForgetRequest{Scope: "user"}.Validate(), nil},
		{"write too many", contract.WriteRequest{Memories: make([]string, memory.MaxBatch+1)}.Validate(), memory.ErrTooLarge},
	} {
		if c.want == nil && c.err != nil || c.want != nil && !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
	if !contract.Includes(nil, contract.TierMedium) || contract.Includes([]contract.Tier{"short"}, contract.TierMedium) {
		t.Error("Includes")
	}
}
