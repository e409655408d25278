package server

import (
	"errors"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/contract"
)

// TestDecodeExactKeys checks that a body's keys are the contract's,
// spelt exactly and given once, at every depth, and that a body that
// keeps to them decodes.
func TestDecodeExactKeys(t *testing.T) {
	for _, body := range []string{
		`{"TEXT":"x"}`,
		`{"Text":"x"}`,
		`{"text":"a","text":"b"}`,
		`{"text":"a","scope":"agent","scope":"user"}`,
	} {
		if _, err := decode[contract.RecallRequest]([]byte(body)); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("recall %s: %v, want ErrInvalidArgument", body, err)
		}
	}
	for _, body := range []string{
		`{"turns":[{"Role":"user","content":"hi"}]}`,
		`{"turns":[{"role":"user","content":"hi","content":"again"}]}`,
		`{"turns":[{"role":"user","content":"hi"}],"turns":[]}`,
	} {
		if _, err := decode[contract.WriteRequest]([]byte(body)); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("write %s: %v, want ErrInvalidArgument", body, err)
		}
	}
	w, err := decode[contract.WriteRequest]([]byte(`{"turns":[{"role":"user","content":"hi","speaker":"Alice"},{"role":"assistant","content":"hello"}],"memories":["Alice likes tea."]}`))
	if err != nil || len(w.Turns) != 2 || w.Turns[0].Speaker != "Alice" || len(w.Memories) != 1 {
		t.Fatalf("a good write: %+v, %v", w, err)
	}
	r, err := decode[contract.RecallRequest]([]byte(`{"text":"where","scope":"agent","include":["short","long"],"k":3,"budget":100}`))
	if err != nil || r.Text != "where" || len(r.Include) != 2 || r.K != 3 {
		t.Fatalf("a good recall: %+v, %v", r, err)
	}
}
