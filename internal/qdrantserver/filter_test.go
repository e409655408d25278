package qdrantserver

import (
	"context"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// filterPoints is the payload the filter cases run on; ids 1 to 6 follow
// the examples of https://qdrant.tech/documentation/concepts/filtering/.
var filterPoints = map[uint64]map[string]any{
	1: {"city": "London", "color": "green", "count": 1, "tags": []any{"a", "b"}},
	2: {"city": "London", "color": "red", "count": 2, "tags": []any{"b"}},
	3: {"city": "London", "color": "blue", "count": 3, "tags": []any{}, "note": nil},
	4: {"city": "Berlin", "color": "red", "count": 4, "tags": []any{"c"},
		"country": map[string]any{"name": "Germany", "cities": []any{
			map[string]any{"name": "Berlin", "population": 3.7},
			map[string]any{"name": "Munich", "population": 1.5}}}},
	5: {"city": "Moscow", "color": "green", "count": 5,
		"diet": []any{map[string]any{"food": "leaves", "likes": false}, map[string]any{"food": "meat", "likes": true}}},
	6: {"city": "Moscow", "color": "blue", "created": "2024-03-01T10:00:00Z",
		"diet":    []any{map[string]any{"food": "leaves", "likes": true}, map[string]any{"food": "meat", "likes": false}},
		"country": map[string]any{"name": "Japan", "cities": []any{map[string]any{"name": "Tokyo", "population": 9.3}}}},
	7: {"count": 3.0, "flag": true, "text": "the quick brown fox", "created": "2023-01-01T00:00:00Z", "nulls": []any{nil, 1}},
}

func ptr[T any](v T) *T { return &v }

func filterCollection(t *testing.T) *qdrant.Client {
	t.Helper()
	c := connect(t)
	ctx := context.Background()
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "f",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Dot})}); err != nil {
		t.Fatal(err)
	}
	var ps []*qdrant.PointStruct
	for id := uint64(1); id <= 7; id++ {
		ps = append(ps, &qdrant.PointStruct{Id: qdrant.NewIDNum(id), Vectors: qdrant.NewVectors(1, 0), Payload: qdrant.NewValueMap(filterPoints[id])})
	}
	upsert(t, c, "f", ps...)
	return c
}

func TestFilters(t *testing.T) {
	c := filterCollection(t)
	london := qdrant.NewMatch("city", "London")
	red := qdrant.NewMatch("color", "red")
	cases := []struct {
		name   string
		filter *qdrant.Filter
		want   []string
	}{
		// "When using `must`, the clause becomes `true` only if every condition listed inside `must` is satisfied."
		{"must", &qdrant.Filter{Must: []*qdrant.Condition{london, red}}, []string{"2"}},
		// "When using `should`, the clause becomes `true` if at least one condition listed inside `should` is satisfied."
		{"should", &qdrant.Filter{Should: []*qdrant.Condition{london, red}}, []string{"1", "2", "3", "4"}},
		// "When using `must_not`, the clause becomes `true` if none of the conditions listed inside `must_not` is satisfied."
		// Point 7 has no city and no color, so neither condition holds for it.
		{"must_not", &qdrant.Filter{MustNot: []*qdrant.Condition{london, red}}, []string{"5", "6", "7"}},
		// "Also, the conditions could be recursively nested."
		{"nested clauses", &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewFilterAsCondition(&qdrant.Filter{Must: []*qdrant.Condition{london, red}})}},
			[]string{"1", "3", "4", "5", "6", "7"}},
		{"filter as should condition", &qdrant.Filter{Should: []*qdrant.Condition{
			qdrant.NewFilterAsCondition(&qdrant.Filter{Must: []*qdrant.Condition{london, qdrant.NewMatch("color", "green")}}),
			qdrant.NewFilterAsCondition(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("city", "Moscow"), qdrant.NewMatch("color", "blue")}}),
		}}, []string{"1", "6"}},
		// An empty filter passes every point; Qdrant's conversion of a gRPC
		// filter turns an empty list of conditions into an absent one
		// (conditions_helper_from_grpc: "if converted.is_empty() { Ok(None) }"),
		// so an empty should list holds too.
		{"empty filter", &qdrant.Filter{}, []string{"1", "2", "3", "4", "5", "6", "7"}},
		{"empty should", &qdrant.Filter{Should: []*qdrant.Condition{}}, []string{"1", "2", "3", "4", "5", "6", "7"}},
		// min_should: at least min_count of the conditions (check_min_should).
		{"min_should", &qdrant.Filter{MinShould: &qdrant.MinShould{MinCount: 2, Conditions: []*qdrant.Condition{
			london, red, qdrant.NewRange("count", &qdrant.Range{Gte: ptr(2.0)})}}}, []string{"2", "3", "4"}},
		// "The simplest kind of condition is one that checks if the stored value equals the given one."
		// An integer match only matches integers: Qdrant compares `stored.as_i64()`,
		// which a double (point 7's 3.0) does not have.
		{"match integer", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchInt("count", 3)}}, []string{"3"}},
		{"match bool", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchBool("flag", true)}}, []string{"7"}},
		// "If several values are stored, at least one of them should match the condition."
		{"match keyword in array", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("tags", "b")}}, []string{"1", "2"}},
		// "Match Any works as a logical OR for the given values."
		{"match any", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeywords("color", "red", "blue")}}, []string{"2", "3", "4", "6"}},
		// "If the stored value is an array, it should have at least one value matching any of the given values."
		{"match any array", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeywords("tags", "a", "c")}}, []string{"1", "4"}},
		{"match any integers", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchInts("count", 1, 5)}}, []string{"1", "5"}},
		// "the condition will be satisfied if the stored value is neither `black` nor `yellow`."
		// A point without the key does not match except: Qdrant checks a field
		// with no values by check_empty, false for match conditions (point 7).
		{"except", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchExcept("color", "red", "blue")}}, []string{"1", "5"}},
		// "If the stored value is an array, it should have at least one value not matching any of the given values."
		// So ["b"] and [] do not match, and neither does a missing key.
		{"except array", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchExcept("tags", "b")}}, []string{"1", "4"}},
		// ...which is not must_not with match any: that keeps every point without "b".
		{"must_not any", &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewMatchKeywords("tags", "b")}}, []string{"3", "4", "5", "6", "7"}},
		{"except integers", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchExceptInts("count", 1, 2, 3)}}, []string{"4", "5", "7"}},
		// "The `range` condition sets the range of possible values for stored payload values."
		// Doubles and integers both compare as numbers.
		{"range", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewRange("count", &qdrant.Range{Gte: ptr(3.0), Lt: ptr(5.0)})}}, []string{"3", "4", "7"}},
		// "This condition will match all records where the field `reports` either does not exist, or has `null` or `[]` value."
		{"is_empty", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewIsEmpty("tags")}}, []string{"3", "5", "6", "7"}},
		// "The IsEmpty is often useful together with the logical negation must_not. In this case all non-empty values will be selected."
		{"must_not is_empty", &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewIsEmpty("tags")}}, []string{"1", "2", "4"}},
		{"is_empty null", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewIsEmpty("note")}}, []string{"1", "2", "3", "4", "5", "6", "7"}},
		// "This condition will match all records where the field `reports` exists and has `NULL` value."
		{"is_null", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewIsNull("note")}}, []string{"3"}},
		{"is_null not for missing or []", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewIsNull("tags")}}, []string{}},
		// An array holding a null is not null (Qdrant's own test: `"not_null": [null]`
		// fails is_null), but its elements, projected with `[]`, are.
		{"is_null array", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewIsNull("nulls")}}, []string{}},
		{"is_null array elements", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewIsNull("nulls[]")}}, []string{"7"}},
		{"has_id", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasID(qdrant.NewIDNum(1), qdrant.NewIDNum(3), qdrant.NewIDNum(5))}}, []string{"1", "3", "5"}},
		{"has_vector", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasVector("")}}, []string{"1", "2", "3", "4", "5", "6", "7"}},
		// "You can search on a nested field using a dot notation."
		{"nested key", &qdrant.Filter{Should: []*qdrant.Condition{qdrant.NewMatch("country.name", "Germany")}}, []string{"4"}},
		// "You can also search through arrays by projecting inner values using the `[]` syntax."
		// "This query would only output the point with id 2 as only Japan has a city with population greater than 9.0."
		{"array projection", &qdrant.Filter{Should: []*qdrant.Condition{qdrant.NewRange("country.cities[].population", &qdrant.Range{Gte: ptr(9.0)})}}, []string{"6"}},
		// Without `[]` a key does not descend into an array (Qdrant's value_get).
		{"no projection without []", &qdrant.Filter{Should: []*qdrant.Condition{qdrant.NewRange("country.cities.population", &qdrant.Range{Gte: ptr(0.0)})}}, []string{}},
		{"array index", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("country.cities[1].name", "Munich")}}, []string{"4"}},
		// "By default, the conditions are taking into account the entire payload of a point."
		// "The following query would match both points".
		{"array conditions without nested", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("diet[].food", "meat"), qdrant.NewMatchBool("diet[].likes", true)}}, []string{"5", "6"}},
		// "Parent document is considered to match the condition if at least one element of the array matches the nested filter."
		{"nested", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewNestedFilter("diet", &qdrant.Filter{Must: []*qdrant.Condition{
			qdrant.NewMatch("food", "meat"), qdrant.NewMatchBool("likes", true)}})}}, []string{"5"}},
		{"nested with []", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewNestedFilter("diet[]", &qdrant.Filter{Must: []*qdrant.Condition{
			qdrant.NewMatch("food", "leaves"), qdrant.NewMatchBool("likes", true)}})}}, []string{"6"}},
		// "If there is no full-text index for the field, the condition will work as exact substring match."
		{"text", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchText("text", "quick brown")}}, []string{"7"}},
		{"text is a substring", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchText("text", "brown quick")}}, []string{}},
		// "If stored value is not an array - it is assumed that the amount of values is equals to 1."
		{"values_count", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewValuesCount("tags", &qdrant.ValuesCount{Gt: ptr(uint64(1))})}}, []string{"1"}},
		{"values_count scalar", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewValuesCount("city", &qdrant.ValuesCount{Lte: ptr(uint64(1))})}}, []string{"1", "2", "3", "4", "5", "6"}},
		// "During comparison, timestamps are parsed and converted to UTC."
		{"datetime_range", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewDatetimeRange("created", &qdrant.DatetimeRange{
			Gte: timestamppb.New(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))})}}, []string{"6"}},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := must(c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "f", Filter: tc.filter, Limit: qdrant.PtrOf(uint32(100))}))(t)
			if !sameStrings(retrievedIDs(got), tc.want) {
				t.Fatalf("got %v, want %v", retrievedIDs(got), tc.want)
			}
			n := must(c.Count(ctx, &qdrant.CountPoints{CollectionName: "f", Filter: tc.filter, Exact: qdrant.PtrOf(true)}))(t)
			if n != uint64(len(tc.want)) {
				t.Fatalf("count %d, want %d", n, len(tc.want))
			}
		})
	}
}

// TestFilterErrors: Qdrant rejects a nested condition without a filter
// ("Nested condition must have a filter") and an id that is no UUID.
func TestFilterErrors(t *testing.T) {
	c := filterCollection(t)
	ctx := context.Background()
	_, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: "f", Filter: &qdrant.Filter{Must: []*qdrant.Condition{
		{ConditionOneOf: &qdrant.Condition_Nested{Nested: &qdrant.NestedCondition{Key: "diet"}}}}}})
	wantCode(t, err, codes.InvalidArgument)
	_, err = c.Count(ctx, &qdrant.CountPoints{CollectionName: "f", Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasID(qdrant.NewID("nope"))}}})
	wantCode(t, err, codes.InvalidArgument)
}
