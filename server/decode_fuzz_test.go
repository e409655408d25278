package server

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/agentmem/memory/contract"
)

// FuzzDecodeRequest decodes any body as each of the four requests: it
// either fails with a class the caller can fix (invalid_argument,
// too_large), or it was valid UTF-8 and yields a request that validates
// and survives encoding and decoding again unchanged.
func FuzzDecodeRequest(f *testing.F) {
	for _, seed := range []string{
		`{"text":"Where does Alice live?","scope":"agent","include":["short","long"],"k":5,"budget":1000}`,
		`{"scope":"user","include":["medium"],"budget":10}`,
		`{"turns":[{"role":"user","content":"hi","speaker":"Alice"}],"memories":["Alice likes tea."]}`,
		`{"turns":null,"memories":[]}`,
		`{"scope":"session"}`,
		`{}`,
		` {"text":"\u00e9\ud83d\ude00"} `,
		`{"text":"a"} trailing`,
		`{"text":"a","unknown":1}`,
		`{"TEXT":"case"}`,
		`{"text":"dup","text":"again"}`,
		"{\"text\":\"\xff\"}",
		`{"k":-1}`,
		`{"scope":"SQUAD"}`,
		`[1,2]`,
		`null`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		check[contract.RecallRequest](t, body)
		check[contract.ListRequest](t, body)
		check[contract.WriteRequest](t, body)
		check[contract.ForgetRequest](t, body)
	})
}

func check[T request](t *testing.T, body []byte) {
	v, err := decode[T](body)
	if err != nil {
		if c := contract.ClassOf(err); c != contract.ClassInvalidArgument && c != contract.ClassTooLarge {
			t.Fatalf("%q as %T: class %q (%v)", body, v, c, err)
		}
		return
	}
	if !utf8.Valid(body) {
		t.Fatalf("%q as %T: invalid UTF-8 accepted", body, v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%T %+v: %v", v, v, err)
	}
	again, err := decode[T](b)
	if err != nil {
		t.Fatalf("%q as %T re-encoded as %s: %v", body, v, b, err)
	}
	if b2, _ := json.Marshal(again); !bytes.Equal(b, b2) {
		t.Fatalf("%q as %T: %s, then %s", body, v, b, b2)
	}
}
