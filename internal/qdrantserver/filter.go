package qdrantserver

import (
	"strings"
	"time"

	"github.com/qdrant/go-client/qdrant"
)

// subject is what a filter is checked against: a point's payload, or one
// element of an array inside it for a nested condition, where p is nil
// (Qdrant checks has_id and has_vector against the point only).
type subject struct {
	payload map[string]any
	p       *point
}

// filterMatches reports whether a point passes a filter; a nil or empty
// filter passes every point.
func filterMatches(f *qdrant.Filter, p *point) (bool, error) {
	if err := validateFilter(f); err != nil {
		return false, err
	}
	return checkFilter(f, subject{payload: p.payload, p: p}), nil
}

// checkFilter follows Qdrant's check_filter: should, min_should, must and
// must_not must all hold. A gRPC list of conditions that is empty (after
// dropping conditions with nothing set) is absent and holds, as Qdrant's
// conversion of a gRPC filter makes it None.
func checkFilter(f *qdrant.Filter, s subject) bool {
	if f == nil {
		return true
	}
	should := present(f.GetShould())
	if len(should) > 0 && !anyHolds(should, s) {
		return false
	}
	if ms := f.GetMinShould(); ms != nil {
		n := uint64(0)
		for _, c := range present(ms.GetConditions()) {
			if n >= ms.GetMinCount() {
				break
			}
			if checkCondition(c, s) {
				n++
			}
		}
		if n < ms.GetMinCount() {
			return false
		}
	}
	for _, c := range present(f.GetMust()) {
		if !checkCondition(c, s) {
			return false
		}
	}
	for _, c := range present(f.GetMustNot()) {
		if checkCondition(c, s) {
			return false
		}
	}
	return true
}

func present(cs []*qdrant.Condition) []*qdrant.Condition {
	out := cs[:0:0]
	for _, c := range cs {
		if c.GetConditionOneOf() != nil {
			out = append(out, c)
		}
	}
	return out
}

func anyHolds(cs []*qdrant.Condition, s subject) bool {
	for _, c := range cs {
		if checkCondition(c, s) {
			return true
		}
	}
	return false
}

func checkCondition(c *qdrant.Condition, s subject) bool {
	switch o := c.GetConditionOneOf().(type) {
	case *qdrant.Condition_Filter:
		return checkFilter(o.Filter, s)
	case *qdrant.Condition_Field:
		return checkField(o.Field, s.payload)
	case *qdrant.Condition_IsEmpty:
		p, _ := parsePath(o.IsEmpty.GetKey())
		// check_is_empty: every value found is null or [] (so a missing key is empty).
		for _, v := range p.get(s.payload) {
			if !isNullOrEmpty(v) {
				return false
			}
		}
		return true
	case *qdrant.Condition_IsNull:
		p, _ := parsePath(o.IsNull.GetKey())
		// check_is_null: some value found is null.
		for _, v := range p.get(s.payload) {
			if v == nil {
				return true
			}
		}
		return false
	case *qdrant.Condition_HasId:
		if s.p == nil {
			return false
		}
		ids, _ := parseIDs(o.HasId.GetHasId())
		for _, id := range ids {
			if id == s.p.id {
				return true
			}
		}
		return false
	case *qdrant.Condition_HasVector:
		if s.p == nil {
			return false
		}
		name := o.HasVector.GetHasVector()
		_, dense := s.p.dense[name]
		_, sparse := s.p.sparse[name]
		return dense || sparse
	case *qdrant.Condition_Nested:
		p, _ := parsePath(o.Nested.GetKey())
		for _, v := range p.arrayKey().get(s.payload) {
			if obj, ok := v.(map[string]any); ok && checkFilter(o.Nested.GetFilter(), subject{payload: obj}) {
				return true
			}
		}
		return false
	}
	return false
}

func isNullOrEmpty(v any) bool {
	if v == nil {
		return true
	}
	arr, ok := v.([]any)
	return ok && len(arr) == 0
}

// checkField follows Qdrant's check_field_condition: with no value at the
// key, only is_empty (true) and is_null (false) conditions hold; otherwise
// the condition holds when it holds for one of the values.
func checkField(fc *qdrant.FieldCondition, payload map[string]any) bool {
	p, _ := parsePath(fc.GetKey())
	values := p.get(payload)
	if len(values) == 0 {
		if fc.IsEmpty != nil {
			return *fc.IsEmpty
		}
		if fc.IsNull != nil {
			return !*fc.IsNull
		}
		return false
	}
	for _, v := range values {
		if fieldHolds(fc, v) {
			return true
		}
	}
	return false
}

// fieldHolds is Qdrant's FieldCondition::check on one value.
func fieldHolds(fc *qdrant.FieldCondition, v any) bool {
	switch {
	case fc.GetValuesCount() != nil:
		return countHolds(fc.GetValuesCount(), v)
	case fc.IsEmpty != nil:
		arr, isArr := v.([]any)
		switch {
		case v == nil:
			return *fc.IsEmpty
		case isArr:
			return (len(arr) == 0) == *fc.IsEmpty
		}
		return !*fc.IsEmpty
	case fc.IsNull != nil:
		if v == nil {
			return *fc.IsNull
		}
		if arr, ok := v.([]any); ok {
			hasNull := false
			for _, e := range arr {
				hasNull = hasNull || e == nil
			}
			return hasNull == *fc.IsNull
		}
		return !*fc.IsNull
	}
	// An array is checked element by element, one level deep.
	if arr, ok := v.([]any); ok {
		for _, e := range arr {
			if valueMatches(fc, e) {
				return true
			}
		}
		return false
	}
	return valueMatches(fc, v)
}

// valueMatches is Qdrant's FieldCondition::check_match on one value: any of
// the condition's parts holding is enough.
func valueMatches(fc *qdrant.FieldCondition, v any) bool {
	if m := fc.GetMatch(); m != nil && matchHolds(m, v) {
		return true
	}
	if r := fc.GetRange(); r != nil {
		if n, ok := number(v); ok && rangeHolds(r, n) {
			return true
		}
	} else if dr := fc.GetDatetimeRange(); dr != nil {
		if s, ok := v.(string); ok {
			if t, ok := parseDatetime(s); ok && datetimeHolds(dr, t) {
				return true
			}
		}
	}
	if vc := fc.GetValuesCount(); vc != nil && countHolds(vc, v) {
		return true
	}
	return false
}

func matchHolds(m *qdrant.Match, v any) bool {
	switch o := m.GetMatchValue().(type) {
	case *qdrant.Match_Keyword:
		s, ok := v.(string)
		return ok && s == o.Keyword
	case *qdrant.Match_Integer:
		n, ok := v.(int64)
		return ok && n == o.Integer
	case *qdrant.Match_Boolean:
		b, ok := v.(bool)
		return ok && b == o.Boolean
	case *qdrant.Match_Text:
		s, ok := v.(string)
		return ok && strings.Contains(s, o.Text)
	case *qdrant.Match_Phrase:
		s, ok := v.(string)
		return ok && strings.Contains(s, o.Phrase)
	case *qdrant.Match_TextAny:
		s, ok := v.(string)
		if !ok {
			return false
		}
		for _, tok := range strings.Fields(o.TextAny) {
			if strings.Contains(s, tok) {
				return true
			}
		}
		return false
	case *qdrant.Match_Keywords:
		s, ok := v.(string)
		return ok && containsString(o.Keywords.GetStrings(), s)
	case *qdrant.Match_Integers:
		n, ok := v.(int64)
		return ok && containsInt(o.Integers.GetIntegers(), n)
	case *qdrant.Match_ExceptKeywords:
		// Qdrant's MatchExcept: a string not in the list holds, null does
		// not, and any other kind of value holds.
		switch x := v.(type) {
		case string:
			return !containsString(o.ExceptKeywords.GetStrings(), x)
		case nil:
			return false
		}
		return true
	case *qdrant.Match_ExceptIntegers:
		switch x := v.(type) {
		case int64:
			return !containsInt(o.ExceptIntegers.GetIntegers(), x)
		case nil:
			return false
		}
		return true
	}
	return false
}

func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func containsInt(list []int64, n int64) bool {
	for _, e := range list {
		if e == n {
			return true
		}
	}
	return false
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func rangeHolds(r *qdrant.Range, n float64) bool {
	return (r.Lt == nil || n < *r.Lt) && (r.Gt == nil || n > *r.Gt) &&
		(r.Lte == nil || n <= *r.Lte) && (r.Gte == nil || n >= *r.Gte)
}

func datetimeHolds(r *qdrant.DatetimeRange, t time.Time) bool {
	return (r.Lt == nil || t.Before(r.Lt.AsTime())) && (r.Gt == nil || t.After(r.Gt.AsTime())) &&
		(r.Lte == nil || !t.After(r.Lte.AsTime())) && (r.Gte == nil || !t.Before(r.Gte.AsTime()))
}

// parseDatetime reads RFC 3339, and the zone-less forms Qdrant also accepts
// (taken as UTC).
func parseDatetime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// countHolds checks a values_count condition: an array counts its
// elements, null counts 0 and any other value 1 ("If stored value is not an
// array - it is assumed that the amount of values is equals to 1.").
func countHolds(vc *qdrant.ValuesCount, v any) bool {
	n := uint64(1)
	switch x := v.(type) {
	case nil:
		n = 0
	case []any:
		n = uint64(len(x))
	}
	return (vc.Lt == nil || n < *vc.Lt) && (vc.Gt == nil || n > *vc.Gt) &&
		(vc.Lte == nil || n <= *vc.Lte) && (vc.Gte == nil || n >= *vc.Gte)
}

// validateFilter rejects what Qdrant's conversion of a gRPC filter rejects:
// bad keys, bad ids, and a nested condition without a filter.
func validateFilter(f *qdrant.Filter) error {
	if f == nil {
		return nil
	}
	lists := [][]*qdrant.Condition{f.GetShould(), f.GetMust(), f.GetMustNot(), f.GetMinShould().GetConditions()}
	for _, l := range lists {
		for _, c := range l {
			if err := validateCondition(c); err != nil {
				return err
			}
		}
	}
	return nil
}

func validateCondition(c *qdrant.Condition) error {
	key := ""
	switch o := c.GetConditionOneOf().(type) {
	case *qdrant.Condition_Filter:
		return validateFilter(o.Filter)
	case *qdrant.Condition_Field:
		key = o.Field.GetKey()
	case *qdrant.Condition_IsEmpty:
		key = o.IsEmpty.GetKey()
	case *qdrant.Condition_IsNull:
		key = o.IsNull.GetKey()
	case *qdrant.Condition_HasId:
		_, err := parseIDs(o.HasId.GetHasId())
		return err
	case *qdrant.Condition_Nested:
		if o.Nested.GetFilter() == nil {
			return badInput("Nested condition must have a filter")
		}
		if _, err := parsePath(o.Nested.GetKey()); err != nil {
			return err
		}
		return validateFilter(o.Nested.GetFilter())
	default:
		return nil
	}
	_, err := parsePath(key)
	return err
}
