package qdrantserver

import (
	"cmp"
	"math"

	"github.com/qdrant/go-client/qdrant"
)

// Scroll with order_by, as Qdrant 1.17 serves it (lib/segment/src/segment/
// order_by.rs, filtered_read_by_index_ordered, and the collection's
// scroll_by):
//
//   - the key needs a payload index that can serve Range conditions: an
//     integer index with range enabled (the default), a float index or a
//     datetime index; otherwise the request fails with Qdrant's
//     MissingRangeIndexForOrderBy, a bad input;
//   - an id offset is refused, and next_page_offset is never returned;
//   - every point passing the filter is read once for each value it has
//     under the key (arrays flattened, as a payload index reads them), and a
//     point with no indexable value there is left out; a point with two
//     values is returned twice;
//   - start_from is inclusive: values >= it ascending, <= it descending;
//   - limit counts those (value, point) entries.
//
// Equal values are ordered by point id in the direction of the order, the
// comparator of Qdrant's cross-shard merge; within one segment Qdrant sorts
// by value only, so a real server leaves ties unordered.

// orderValue is one value of an order_by key: an integer (integer and
// datetime indexes, datetimes as microseconds since the epoch) or a float.
type orderValue struct {
	isInt bool
	i     int64
	f     float64
}

// compare orders two values numerically, as Qdrant's OrderValue does.
func (a orderValue) compare(b orderValue) int {
	if a.isInt && b.isInt {
		return cmp.Compare(a.i, b.i)
	}
	return cmp.Compare(a.float(), b.float())
}

func (a orderValue) float() float64 {
	if a.isInt {
		return float64(a.i)
	}
	return a.f
}

func (a orderValue) proto() *qdrant.OrderValue {
	if a.isInt {
		return qdrant.NewOrderValueInt(a.i)
	}
	return qdrant.NewOrderValueFloat(a.f)
}

// orderedEntry is a point at one of its values.
type orderedEntry struct {
	value orderValue
	p     *point
}

// rangeIndexType returns the type of the index on key if it can serve
// Range conditions, as Qdrant's FieldIndex::as_numeric decides.
func (c *collection) rangeIndexType(key string) (qdrant.PayloadSchemaType, bool) {
	info, ok := c.indexes[key]
	if !ok {
		return 0, false
	}
	switch info.GetDataType() {
	case qdrant.PayloadSchemaType_Integer:
		p := info.GetParams().GetIntegerIndexParams()
		return info.GetDataType(), p == nil || p.Range == nil || *p.Range
	case qdrant.PayloadSchemaType_Float, qdrant.PayloadSchemaType_Datetime:
		return info.GetDataType(), true
	}
	return 0, false
}

// scrollOrdered answers a Scroll with order_by.
func (c *collection) scrollOrdered(req *qdrant.ScrollPoints, limit int) ([]*qdrant.RetrievedPoint, error) {
	ob := req.GetOrderBy()
	if req.Offset != nil {
		return nil, badInput("Cannot use an `offset` when using `order_by`. The alternative for paging is to use `order_by.start_from` and a filter to exclude the IDs that you've already seen for the `order_by.start_from` value")
	}
	key, err := parsePath(ob.GetKey())
	if err != nil {
		return nil, err
	}
	typ, ok := c.rangeIndexType(ob.GetKey())
	if !ok {
		return nil, badInput("No range index for `order_by` key: `%s`. Please create one to use `order_by`. Check https://qdrant.tech/documentation/concepts/indexing/#payload-index to see which payload schemas support Range conditions", ob.GetKey())
	}
	desc := ob.GetDirection() == qdrant.Direction_Desc
	from, hasFrom, err := startFrom(ob.GetStartFrom())
	if err != nil {
		return nil, err
	}
	if err := validateFilter(req.GetFilter()); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return []*qdrant.RetrievedPoint{}, nil
	}
	ix := c.orderIndexOf(ob.GetKey(), key, typ)
	var entries []orderedEntry
	visit := func(e orderedEntry) bool {
		if hasFrom && ((!desc && e.value.compare(from) < 0) || (desc && e.value.compare(from) > 0)) {
			return true
		}
		if checkFilter(req.GetFilter(), subject{payload: e.p.payload, p: e.p}) {
			entries = append(entries, e)
		}
		return len(entries) < limit
	}
	if desc {
		for i := len(ix.entries) - 1; i >= 0 && visit(ix.entries[i]); i-- {
		}
	} else {
		for i := 0; i < len(ix.entries) && visit(ix.entries[i]); i++ {
		}
	}
	out := make([]*qdrant.RetrievedPoint, 0, len(entries))
	for _, e := range entries {
		r := c.retrieved(e.p, req.GetWithPayload(), req.GetWithVectors())
		r.OrderValue = e.value.proto()
		out = append(out, r)
	}
	return out, nil
}

// indexedValues returns the values a range index of the given type reads
// from the values at a key: arrays are flattened one level, integers only
// into an integer index, any number into a float index, RFC 3339 strings
// into a datetime index (as microseconds); anything else is not indexed.
func indexedValues(typ qdrant.PayloadSchemaType, vals []any) []orderValue {
	var flat []any
	for _, v := range vals {
		if arr, ok := v.([]any); ok {
			flat = append(flat, arr...)
		} else {
			flat = append(flat, v)
		}
	}
	var out []orderValue
	for _, v := range flat {
		switch typ {
		case qdrant.PayloadSchemaType_Integer:
			if n, ok := v.(int64); ok {
				out = append(out, orderValue{isInt: true, i: n})
			}
		case qdrant.PayloadSchemaType_Float:
			if n, ok := number(v); ok && !math.IsNaN(n) {
				out = append(out, orderValue{f: n})
			}
		case qdrant.PayloadSchemaType_Datetime:
			if s, ok := v.(string); ok {
				if t, ok := parseDatetime(s); ok {
					out = append(out, orderValue{isInt: true, i: t.UnixMicro()})
				}
			}
		}
	}
	return out
}

// startFrom reads order_by.start_from; datetimes become microseconds, as
// a datetime index stores them.
func startFrom(s *qdrant.StartFrom) (orderValue, bool, error) {
	switch v := s.GetValue().(type) {
	case *qdrant.StartFrom_Integer:
		return orderValue{isInt: true, i: v.Integer}, true, nil
	case *qdrant.StartFrom_Float:
		return orderValue{f: v.Float}, true, nil
	case *qdrant.StartFrom_Timestamp:
		return orderValue{isInt: true, i: v.Timestamp.AsTime().UnixMicro()}, true, nil
	case *qdrant.StartFrom_Datetime:
		t, ok := parseDatetime(v.Datetime)
		if !ok {
			return orderValue{}, false, badInput("Unable to parse datetime %q", v.Datetime)
		}
		return orderValue{isInt: true, i: t.UnixMicro()}, true, nil
	}
	return orderValue{}, false, nil
}
