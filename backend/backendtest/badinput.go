package backendtest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// badRecord is a record that Put must refuse, and the error it must give.
type badRecord struct {
	name string
	mut  func(*memory.Record)
	want error
}

// badRecords lists invalid records: every limit exceeded by one byte or
// entry, every malformed text, and documents whose Content is not JSON
// every driver can store.
func badRecords() []badRecord {
	inv, big := memory.ErrInvalidArgument, memory.ErrTooLarge
	cases := []badRecord{
		{"empty id", func(r *memory.Record) { r.ID = "" }, inv},
		{"id not UTF-8", func(r *memory.Record) { r.ID = "bad-\xff" }, inv},
		{"id over MaxIDBytes", func(r *memory.Record) { r.ID = strings.Repeat("i", memory.MaxIDBytes+1) }, big},
		{"unknown kind", func(r *memory.Record) { r.Kind = "memo" }, inv},
		{"empty kind", func(r *memory.Record) { r.Kind = "" }, inv},
		{"zero Created", func(r *memory.Record) { r.Created = time.Time{} }, inv},
		{"negative Tokens", func(r *memory.Record) { r.Tokens = -1 }, inv},
		{"content not UTF-8", func(r *memory.Record) { r.Content = "ok\xc3\x28" }, inv},
		{"content with a NUL byte", func(r *memory.Record) { r.Content = "a\x00b" }, inv},
		// Counted in bytes: half as many two-byte runes, plus one byte.
		{"content over MaxContentBytes", func(r *memory.Record) { r.Content = strings.Repeat("é", memory.MaxContentBytes/2) + "a" }, big},
		{"key not UTF-8", func(r *memory.Record) { r.Key = "\xfe" }, inv},
		{"key with a NUL byte", func(r *memory.Record) { r.Key = "k\x00" }, inv},
		{"key over MaxKeyBytes", func(r *memory.Record) { r.Key = strings.Repeat("k", memory.MaxKeyBytes+1) }, big},
		{"label not UTF-8", func(r *memory.Record) { r.Label = "\xc0\xaf" }, inv},
		{"label with a NUL byte", func(r *memory.Record) { r.Label = "\x00" }, inv},
		{"label over MaxLabelBytes", func(r *memory.Record) { r.Label = strings.Repeat("l", memory.MaxLabelBytes+1) }, big},
		{"metadata with an empty key", func(r *memory.Record) { r.Metadata = map[string]string{"": "v"} }, inv},
		{"metadata key not UTF-8", func(r *memory.Record) { r.Metadata = map[string]string{"\xff": "v"} }, inv},
		{"metadata value not UTF-8", func(r *memory.Record) { r.Metadata = map[string]string{"k": "\xff"} }, inv},
		{"metadata over MaxMetadataEntries", func(r *memory.Record) { r.Metadata = metadataEntries(memory.MaxMetadataEntries + 1) }, big},
		{"metadata over MaxMetadataBytes", func(r *memory.Record) {
			r.Metadata = map[string]string{"k": strings.Repeat("v", memory.MaxMetadataBytes)}
		}, big},
	}
	// A document's Content is one JSON value that PostgreSQL's jsonb can
	// hold (memory.CheckJSON).
	for _, c := range []struct{ name, content string }{
		{"text that is not JSON", "ok"},
		{"empty content", ""},
		{"invalid JSON", `{"a":1,}`},
		{"truncated JSON", `{"a":[1,2`},
		{"two JSON values", `{} {}`},
		{"the escape \\u0000", `{"a":"x\u0000y"}`},
		{"a lone high surrogate escape", `"\ud800"`},
		{"a high surrogate escape before another escape", `["\ud83d\u0041"]`},
		{"a lone low surrogate escape", `{"\ude00":1}`},
		{"invalid UTF-8 in a string", "\"\xff\""},
	} {
		cases = append(cases, badRecord{"document holding " + c.name, func(r *memory.Record) {
			r.Kind, r.Key, r.Content = memory.KindDocument, "k", c.content
		}, inv})
	}
	cases = append(cases, badRecord{"document over memory.MaxDocumentBytes", func(r *memory.Record) {
		r.Kind, r.Key, r.Content = memory.KindDocument, "k", `"`+strings.Repeat("a", memory.MaxDocumentBytes-1)+`"`
	}, big})
	for _, f := range []memory.Field{memory.FieldTenant, memory.FieldUser, memory.FieldAgent, memory.FieldInstance, memory.FieldSquad, memory.FieldSession} {
		for _, v := range []struct{ name, value string }{
			{"not UTF-8", "al\xffice"},
			{"with a NUL byte", "ali\x00ce"},
			{"with a newline", "alice\n"},
			{"with a control character", "ali\u0085ce"},
			{"with leading white space", " alice"},
			{"with trailing white space", "alice\u00a0"},
			{"over MaxIdentityFieldBytes", strings.Repeat("a", memory.MaxIdentityFieldBytes+1)},
		} {
			cases = append(cases, badRecord{"identity " + f.String() + " " + v.name, func(r *memory.Record) { r.Identity = r.Identity.With(f, v.value) }, inv})
		}
	}
	return cases
}

// metadataEntries returns n small metadata entries.
func metadataEntries(n int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		m[fmt.Sprintf("k%02d", i)] = "v"
	}
	return m
}

// checkBadRecords checks that Put refuses every invalid record with the
// right error, alone or in the middle of a batch, and stores nothing of
// that batch; and that every limit is inclusive.
func checkBadRecords(r reporter, e *env) {
	d, _ := e.open(r)
	ctx := context.Background()
	writer := e.agentID(d, memory.Identity{Tenant: "bad", User: "u", Session: "s"})
	valid := func(rid string) memory.Record {
		return memory.Record{ID: rid, Kind: memory.KindFact, Identity: writer, Content: "ok", Created: t0}
	}
	for i, c := range badRecords() {
		bad := valid(fmt.Sprintf("bad-%d", i))
		c.mut(&bad)
		err := d.Put(ctx, []memory.Record{bad})
		wantErr(r, "Put of a record with "+c.name, err, c.want)
		err = d.Put(ctx, []memory.Record{valid(fmt.Sprintf("ok-a-%d", i)), bad, valid(fmt.Sprintf("ok-b-%d", i))})
		wantErr(r, "Put of a batch holding a record with "+c.name, err, c.want)
		if got := mustList(r, d, "after "+c.name, tenantQuery("bad")); len(got) != 0 {
			r.Errorf("Put of a batch holding a record with %s failed, yet stored %q", c.name, ids(got))
		}
	}

	// Every limit is inclusive, and reached exactly the values round trip.
	edge := memory.Identity{
		Tenant: strings.Repeat("t", memory.MaxIdentityFieldBytes),
		User:   strings.Repeat("ü", memory.MaxIdentityFieldBytes/2),
		Agent:  "kaos://agent/" + strings.Repeat("a", memory.MaxIdentityFieldBytes-len("kaos://agent/")),
	}
	edge = e.agentID(d, edge) // under PerAgent the agent is not at its limit
	long := memory.Record{
		ID:       strings.Repeat("é", memory.MaxIDBytes/2),
		Kind:     memory.KindDocument,
		Identity: edge,
		Label:    strings.Repeat("l", memory.MaxLabelBytes),
		Key:      strings.Repeat("ключ", memory.MaxKeyBytes/len("ключ")),
		// A JSON string of exactly MaxDocumentBytes: the quotes and
		// two-byte runes.
		Content:  `"` + strings.Repeat("é", (memory.MaxDocumentBytes-2)/2) + `"`,
		Metadata: metadataEntries(memory.MaxMetadataEntries),
		Created:  t0,
		Tokens:   1 << 20,
	}
	// Only documents hold JSON: a fact's content is any text.
	heavy := memory.Record{
		ID: "heavy-metadata", Kind: memory.KindFact, Identity: edge, Content: `{"not JSON": "\u0000\ud800`, Created: t0,
		Metadata: map[string]string{"k": strings.Repeat("v", memory.MaxMetadataBytes-1)},
	}
	if len(long.Key) != memory.MaxKeyBytes || len(long.Content) != memory.MaxContentBytes || len(long.ID) != memory.MaxIDBytes {
		r.Fatalf("suite bug: the boundary record misses a limit")
	}
	if !e.fitsOneAgent([]memory.Record{long, heavy}) && e.perAgentSkip(r, "the invalid records were checked; the records exactly at every limit are not: with %d bytes of content, a document of memory.MaxDocumentBytes among them, they are more than one agent's object holds (PerAgent.Fits)", len(long.Content)+len(heavy.Content)) {
		return
	}
	if err := d.Put(ctx, []memory.Record{long, heavy}); !noErr(r, "Put of records exactly at every limit", err) {
		return
	}
	got := mustList(r, d, "List of the boundary records", tenantQuery(edge.Tenant))
	sameRecords(r, "records exactly at every limit", got, []memory.Record{long, heavy})
}

// checkBadBatches checks batch limits: memory.MaxBatch+1 records is
// ErrTooLarge and stores nothing; an empty batch is a no-op.
func checkBadBatches(r reporter, e *env) {
	d, _ := e.open(r)
	ctx := context.Background()
	writer := memory.Identity{Tenant: "batch", Agent: "a"}
	recs := make([]memory.Record, memory.MaxBatch+1)
	for i := range recs {
		recs[i] = memory.Record{ID: fmt.Sprintf("b-%05d", i), Kind: memory.KindTurn, Identity: writer, Content: "x", Created: t0}
	}
	wantErr(r, fmt.Sprintf("Put of %d records", len(recs)), d.Put(ctx, recs), memory.ErrTooLarge)
	if got := mustList(r, d, "after an oversized batch", tenantQuery("batch")); len(got) != 0 {
		r.Errorf("an oversized batch failed, yet stored %d records", len(got))
	}
	noErr(r, "Put of an empty batch", d.Put(ctx, []memory.Record{}))
	noErr(r, "Put of a nil batch", d.Put(ctx, nil))
	if got := mustList(r, d, "after empty batches", tenantQuery("batch")); len(got) != 0 {
		r.Errorf("empty batches stored %d records", len(got))
	}
}

// checkBadQueries checks that List and Delete refuse queries no derived
// filter produces — unscoped ones, a negative limit, too many ids — and
// touch nothing.
func checkBadQueries(r reporter, e *env) {
	d, _ := e.open(r)
	ctx := context.Background()
	id := memory.Identity{Tenant: "q", User: "u", Agent: "a", Instance: "i", Squad: "s", Session: "r"}
	rec := memory.Record{ID: "q-1", Kind: memory.KindFact, Identity: id, Content: "x", Created: t0}
	mustPut(r, d, "query data", []memory.Record{rec})
	unscoped := []memory.Filter{
		{},
		{Identity: id},
		{Match: memory.FieldUser, Identity: memory.Identity{User: "u"}},
		{Match: memory.AllFields &^ memory.FieldTenant, Identity: id},
	}
	for _, f := range unscoped {
		what := fmt.Sprintf("query matching %s", f.Match)
		_, err := d.List(ctx, driver.Query{Filter: f})
		wantErr(r, "List of an unscoped "+what, err, memory.ErrIncompleteScope)
		_, err = d.Delete(ctx, driver.Query{Filter: f})
		wantErr(r, "Delete of an unscoped "+what, err, memory.ErrIncompleteScope)
	}
	scoped := tenantQuery("q")
	neg := scoped
	neg.Limit = -1
	_, err := d.List(ctx, neg)
	wantErr(r, "List with a negative Limit", err, memory.ErrInvalidArgument)
	many := scoped
	for i := range memory.MaxBatch + 1 {
		many.IDs = append(many.IDs, fmt.Sprintf("id-%d", i))
	}
	many.IDs[0] = rec.ID
	_, err = d.List(ctx, many)
	wantErr(r, fmt.Sprintf("List naming %d ids", len(many.IDs)), err, memory.ErrTooLarge)
	_, err = d.Delete(ctx, many)
	wantErr(r, fmt.Sprintf("Delete naming %d ids", len(many.IDs)), err, memory.ErrTooLarge)
	sameRecords(r, "content after the refused queries", mustList(r, d, "List", scoped), []memory.Record{rec})
}
