package working_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/memory/tiers/working"
)

// benchRule measures rule on two pairs of inputs in turn, and reports the
// median.
func benchRule(b *testing.B, rule working.MergeRule, pairs ...[2]json.RawMessage) {
	ds := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		p := pairs[i%len(pairs)]
		t0 := time.Now()
		if _, err := rule(p[0], p[1]); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	b.ReportMetric(workingMedian(ds), "median-ns/op")
}

// BenchmarkMergeListByIDChangingDefaults is BenchmarkMergeListByID with
// defaults whose text changes at every call, so the rule parses them
// every time.
func BenchmarkMergeListByIDChangingDefaults(b *testing.B) {
	override := json.RawMessage(`[{"id":"vendor-3","label":"Tenant's own"},{"id":"acmechat","label":"Acme Chat"}]`)
	spaced := append(slices.Clone(benchPayload), ' ')
	benchRule(b, working.MergeListByID("id"), [2]json.RawMessage{benchPayload, override}, [2]json.RawMessage{spaced, override})
}

// benchObject is a 1 KiB object of the shape DeepMerge and ShallowMerge
// see: a few settings, one nested two levels.
var benchObject = json.RawMessage(`{"version":3,"lang":"en","depth":2,"tone":{"formal":true,"emoji":false,"limits":{"words":400,"sentences":12}},` +
	`"vendors":` + string(benchPayload) + `}`)

const benchObjectOverride = `{"depth":5,"tone":{"emoji":true,"limits":{"words":200}},"vendors":[{"id":"vendor-3","label":"Tenant's own"},{"id":"acmechat","label":"Acme Chat"}]}`

func BenchmarkMergeShallow(b *testing.B) {
	benchRule(b, working.ShallowMerge, [2]json.RawMessage{benchObject, json.RawMessage(benchObjectOverride)})
}

func BenchmarkMergeDeep(b *testing.B) {
	benchRule(b, working.DeepMerge, [2]json.RawMessage{benchObject, json.RawMessage(benchObjectOverride)})
}

func BenchmarkMergeAtListByID(b *testing.B) {
	benchRule(b, working.MergeAt("vendors", working.MergeListByID("id")), [2]json.RawMessage{benchObject, json.RawMessage(benchObjectOverride)})
}
