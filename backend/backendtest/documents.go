package backendtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// jsonString returns text encoded as one JSON string, HTML characters
// left as they are, so a document (whose Content must be JSON) still
// carries every character of text.
func jsonString(text string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(text) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// contentFor returns text as the Content of a record of kind k: text
// itself, or for a document, which must hold JSON, text as a JSON string.
func contentFor(k memory.Kind, text string) string {
	if k == memory.KindDocument {
		return jsonString(text)
	}
	return text
}

// documentPayloads are JSON texts a driver must return byte for byte. Each
// one holds something a JSON parser forgets, such as PostgreSQL's jsonb,
// whose text form a driver must therefore never return as Content.
var documentPayloads = []struct{ name, json string }{
	{"insignificant white space", " {\n\t\"a\" : [ 1 ,2 ] ,\r\n  \"b\":{ } } \n"},
	{"key order", `{"z":1,"a":2,"m":{"y":true,"b":false}}`},
	{"duplicate keys", `{"a":1,"a":2,"b":{"c":3,"c":4}}`},
	{"numbers", `[1E400,0.10,-0,1.50e-3,2.0,100000000000000000000000000001,-1e-400]`},
	{"escapes", `"\u00e9\u00E9 \/ \" \\ \b\f\n\r\t \u0041 \u2028"`},
	{"surrogate pair escapes", `"\ud83d\ude00 \uD83E\uDD8A"`},
	{"raw non-ASCII", `{"naïve":"café — 日本語 🦊","ключ":["значение"]}`},
	{"a string alone", `"just text"`},
	{"null alone", `null`},
	{"a number alone", `0`},
	{"empty containers", `[{},[],""]`},
	// 10,000 levels, the deepest memory.CheckJSON accepts (encoding/json's limit).
	{"deep nesting", strings.Repeat(`[{"a":`, 5000) + `1` + strings.Repeat(`}]`, 5000)},
}

// checkDocumentJSON checks that a document's JSON comes back exactly as
// written — white space, key order, duplicate keys, number spellings and
// escapes included — when first stored, when replaced, and when swapped
// in by a driver that declares driver.Swapper.
func checkDocumentJSON(r reporter, e *env) {
	d, _ := e.open(r)
	ctx := context.Background()
	writer := memory.Identity{Tenant: "docjson", User: "u", Agent: "a", Squad: "s"}
	doc := func(i int, payload string) memory.Record {
		return memory.Record{
			ID: fmt.Sprintf("doc-%02d", i), Kind: memory.KindDocument, Identity: writer,
			Key: fmt.Sprintf("key-%02d", i), Label: "working", Content: payload, Created: t0.Add(time.Duration(i) * time.Second),
		}
	}
	var recs []memory.Record
	for i, p := range documentPayloads {
		rec := doc(i, p.json)
		if err := memory.CheckJSON(rec.Content); err != nil {
			r.Fatalf("suite bug: document payload with %s is invalid: %v", p.name, err)
		}
		recs = append(recs, rec)
	}
	mustPut(r, d, "documents", recs)
	// verify reads every document back; record i holds the payload
	// shift places further on.
	verify := func(stage string, want []memory.Record, shift int) {
		r.Helper()
		for i, w := range want {
			q := tenantQuery(writer.Tenant)
			q.IDs = []string{w.ID}
			name := documentPayloads[(i+shift)%len(documentPayloads)].name
			sameRecords(r, fmt.Sprintf("document JSON with %s, %s", name, stage), mustList(r, d, "List", q), []memory.Record{w})
		}
		all := driver.Query{Filter: mustFilter(r, memory.Posture{}, writer, memory.LevelSquad), Kinds: []memory.Kind{memory.KindDocument}}
		want = append([]memory.Record(nil), want...)
		sortNewest(want)
		sameRecords(r, "all documents through a level, "+stage, mustList(r, d, "List", all), want)
	}
	verify("as first stored", recs, 0)

	// Replacements keep the new text exactly, whatever the old one was.
	for i := range recs {
		recs[i] = doc(i, "\t"+documentPayloads[(i+1)%len(documentPayloads)].json+" ")
		recs[i].Version = 2
	}
	mustPut(r, d, "replaced documents", recs)
	verify("after a replacement", recs, 1)

	sw, ok := d.(driver.Swapper)
	if !ok || !e.cfg.Swapper {
		return
	}
	for i := range recs {
		recs[i] = doc(i, documentPayloads[i].json+"\r\n")
		v, err := sw.Swap(ctx, recs[i], 2)
		if noErr(r, "Swap of the document with "+documentPayloads[i].name, err) && v != 3 {
			r.Errorf("Swap of the document with %s stored version %d, want 3", documentPayloads[i].name, v)
		}
		recs[i].Version = 3
	}
	verify("after a Swap", recs, 0)
}
