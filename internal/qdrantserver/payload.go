package qdrantserver

import (
	"sort"

	"github.com/qdrant/go-client/qdrant"
)

// A payload value is held as JSON is: nil, bool, int64, float64, string,
// []any or map[string]any. Integers and doubles stay distinct, as they do in
// Qdrant's serde_json payload: a match on an integer never matches 3.0.

// fromValue converts a protobuf value; an unset kind is null.
func fromValue(v *qdrant.Value) any {
	switch k := v.GetKind().(type) {
	case *qdrant.Value_BoolValue:
		return k.BoolValue
	case *qdrant.Value_IntegerValue:
		return k.IntegerValue
	case *qdrant.Value_DoubleValue:
		return k.DoubleValue
	case *qdrant.Value_StringValue:
		return k.StringValue
	case *qdrant.Value_ListValue:
		out := make([]any, 0, len(k.ListValue.GetValues()))
		for _, e := range k.ListValue.GetValues() {
			out = append(out, fromValue(e))
		}
		return out
	case *qdrant.Value_StructValue:
		return fromMap(k.StructValue.GetFields())
	}
	return nil
}

// fromMap converts a protobuf payload.
func fromMap(m map[string]*qdrant.Value) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = fromValue(v)
	}
	return out
}

// toValue converts a payload value back to protobuf.
func toValue(v any) *qdrant.Value {
	switch x := v.(type) {
	case bool:
		return &qdrant.Value{Kind: &qdrant.Value_BoolValue{BoolValue: x}}
	case int64:
		return &qdrant.Value{Kind: &qdrant.Value_IntegerValue{IntegerValue: x}}
	case float64:
		return &qdrant.Value{Kind: &qdrant.Value_DoubleValue{DoubleValue: x}}
	case string:
		return &qdrant.Value{Kind: &qdrant.Value_StringValue{StringValue: x}}
	case []any:
		l := &qdrant.ListValue{Values: make([]*qdrant.Value, 0, len(x))}
		for _, e := range x {
			l.Values = append(l.Values, toValue(e))
		}
		return &qdrant.Value{Kind: &qdrant.Value_ListValue{ListValue: l}}
	case map[string]any:
		return &qdrant.Value{Kind: &qdrant.Value_StructValue{StructValue: &qdrant.Struct{Fields: toMap(x)}}}
	}
	return &qdrant.Value{Kind: &qdrant.Value_NullValue{NullValue: qdrant.NullValue_NULL_VALUE}}
}

// toMap converts a payload back to protobuf.
func toMap(m map[string]any) map[string]*qdrant.Value {
	out := make(map[string]*qdrant.Value, len(m))
	for k, v := range m {
		out[k] = toValue(v)
	}
	return out
}

// clone deep-copies a payload value.
func clone(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = clone(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = clone(e)
		}
		return out
	}
	return v
}

// selectPayload applies a with_payload selector; nil means def.
func selectPayload(sel *qdrant.WithPayloadSelector, def bool, payload map[string]any) map[string]*qdrant.Value {
	switch o := sel.GetSelectorOptions().(type) {
	case *qdrant.WithPayloadSelector_Enable:
		if o.Enable {
			return toMap(payload)
		}
		return nil
	case *qdrant.WithPayloadSelector_Include:
		out := map[string]any{}
		for _, f := range o.Include.GetFields() {
			p, err := parsePath(f)
			if err != nil {
				continue
			}
			includePath(out, payload, p)
		}
		return toMap(out)
	case *qdrant.WithPayloadSelector_Exclude:
		out := clone(payload).(map[string]any)
		for _, f := range o.Exclude.GetFields() {
			if p, err := parsePath(f); err == nil {
				removePath(out, p)
			}
		}
		return toMap(out)
	}
	if def {
		return toMap(payload)
	}
	return nil
}

// includePath copies the subtree of src at a path of keys into dst.
func includePath(dst, src map[string]any, p path) {
	v, ok := src[p.first]
	if !ok {
		return
	}
	if len(p.rest) == 0 || p.rest[0].kind != stepKey {
		dst[p.first] = clone(v)
		return
	}
	sub, ok := v.(map[string]any)
	if !ok {
		return
	}
	d, ok := dst[p.first].(map[string]any)
	if !ok {
		d = map[string]any{}
		dst[p.first] = d
	}
	includePath(d, sub, path{first: p.rest[0].key, rest: p.rest[1:]})
}

// removePath deletes the values at a path, returning whether any was there.
func removePath(m map[string]any, p path) bool {
	if len(p.rest) == 0 {
		_, ok := m[p.first]
		delete(m, p.first)
		return ok
	}
	v, ok := m[p.first]
	if !ok {
		return false
	}
	removed := false
	var walk func(v any, steps []step)
	walk = func(v any, steps []step) {
		s := steps[0]
		last := len(steps) == 1
		switch s.kind {
		case stepKey:
			obj, ok := v.(map[string]any)
			if !ok {
				return
			}
			if last {
				if _, ok := obj[s.key]; ok {
					removed = true
				}
				delete(obj, s.key)
				return
			}
			if next, ok := obj[s.key]; ok {
				walk(next, steps[1:])
			}
		case stepIndex, stepAll:
			arr, ok := v.([]any)
			if !ok || last {
				return
			}
			for i, e := range arr {
				if s.kind == stepAll || i == s.index {
					walk(e, steps[1:])
				}
			}
		}
	}
	walk(v, p.rest)
	return removed
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
