package backendtest

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// reencoding wraps the correct map driver and stores every document's
// JSON as a parser gives it back (jsonbText) on Put, on Swap or both: a
// driver that returns PostgreSQL's jsonb text instead of what was written.
type reencoding struct {
	*mapDriver
	onPut, onSwap bool
}

func (d *reencoding) Put(ctx context.Context, recs []memory.Record) error {
	if d.onPut {
		recs = slices.Clone(recs)
		for i := range recs {
			recs[i] = reencoded(recs[i])
		}
	}
	return d.mapDriver.Put(ctx, recs)
}

func (d *reencoding) Swap(ctx context.Context, rec memory.Record, expect int64) (int64, error) {
	if d.onSwap {
		rec = reencoded(rec)
	}
	return d.mapDriver.Swap(ctx, rec, expect)
}

// reencoded returns r with its Content as jsonbText when r is a document.
func reencoded(r memory.Record) memory.Record {
	if r.Kind == memory.KindDocument {
		r.Content = jsonbText(r.Content)
	}
	return r
}

// jsonbText parses a JSON text and writes it out again, as jsonb does:
// white space dropped, keys sorted, the last of duplicate keys kept,
// escapes decoded, numbers rewritten in positional notation. A text it
// cannot parse comes back unchanged.
func jsonbText(s string) string {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return s
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(positionalNumbers(v)); err != nil {
		return s
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// positionalNumbers rewrites every number in a decoded JSON value without
// an exponent or trailing zeros.
func positionalNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, _, err := big.ParseFloat(v.String(), 10, 512, big.ToNearestEven)
		if err != nil {
			return v
		}
		return json.Number(f.Text('f', -1))
	case []any:
		for i := range v {
			v[i] = positionalNumbers(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = positionalNumbers(v[k])
		}
	}
	return v
}

// TestDocumentJSONCatchesReencoding runs the DocumentJSON check against
// the correct map driver, which must pass, and against drivers that
// re-encode document JSON on Put or on Swap: every payload the
// re-encoding changes must be reported, at the stage it was changed.
func TestDocumentJSONCatchesReencoding(t *testing.T) {
	bare := Config{NewDriver: func(_ *testing.T, c memory.Clock) driver.Driver { return newMapDriver(c) }, Swapper: true}
	if errs := runRecorded(t, bare, "DocumentJSON"); len(errs) != 0 {
		t.Fatalf("the DocumentJSON check fails on the correct driver: %s", errs[0])
	}
	changed := []string{"insignificant white space", "key order", "duplicate keys", "numbers", "escapes", "surrogate pair escapes"}
	for _, name := range changed {
		i := slices.IndexFunc(documentPayloads, func(p struct{ name, json string }) bool { return p.name == name })
		if i < 0 {
			t.Fatalf("no document payload named %q", name)
		}
		if p := documentPayloads[i].json; jsonbText(p) == p {
			t.Fatalf("jsonbText leaves the payload with %s unchanged, so this test proves nothing about it", name)
		}
	}
	for _, c := range []struct {
		name          string
		onPut, onSwap bool
		stage         string
	}{
		{"on Put", true, false, "as first stored"},
		{"on Swap", false, true, "after a Swap"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{
				NewDriver: func(_ *testing.T, clk memory.Clock) driver.Driver {
					return &reencoding{mapDriver: newMapDriver(clk), onPut: c.onPut, onSwap: c.onSwap}
				},
				Swapper: true,
			}
			errs := runRecorded(t, cfg, "DocumentJSON")
			for _, name := range changed {
				want := "document JSON with " + name + ", " + c.stage
				if !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, want) }) {
					t.Errorf("the DocumentJSON check did not report %q for a driver that re-encodes document JSON %s", want, c.name)
				}
			}
			if len(errs) > 0 {
				t.Logf("%d failures reported; first: %s", len(errs), errs[0])
			}
		})
	}
}

// lenientJSON wraps the correct map driver and stores, as a fact, every
// document that encoding/json accepts: a driver that checks JSON syntax
// but not the escapes jsonb refuses.
type lenientJSON struct{ *mapDriver }

func (d lenientJSON) Put(ctx context.Context, recs []memory.Record) error {
	recs = slices.Clone(recs)
	for i, r := range recs {
		if r.Kind == memory.KindDocument && json.Valid([]byte(r.Content)) {
			recs[i].Kind = memory.KindFact
		}
	}
	return d.mapDriver.Put(ctx, recs)
}

// TestBadRecordsCatchLenientJSON runs the BadRecords check against a
// driver that accepts documents with the escapes jsonb refuses: each such
// document must be reported.
func TestBadRecordsCatchLenientJSON(t *testing.T) {
	cfg := Config{NewDriver: func(_ *testing.T, c memory.Clock) driver.Driver { return lenientJSON{newMapDriver(c)} }}
	errs := runRecorded(t, cfg, "BadRecords")
	for _, name := range []string{"the escape \\u0000", "a lone high surrogate escape", "a high surrogate escape before another escape", "a lone low surrogate escape"} {
		want := "Put of a record with document holding " + name + ": got no error"
		if !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, want) }) {
			t.Errorf("the BadRecords check did not report %q", want)
		}
	}
	if len(errs) > 0 {
		t.Logf("%d failures reported; first: %s", len(errs), errs[0])
	}
}
