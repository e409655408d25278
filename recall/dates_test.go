package recall

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNamedPeriods(t *testing.T) {
	day := func(y int, m time.Month, d int) period { return period{year: y, month: m, day: d} }
	for _, c := range []struct {
		text string
		want []period
	}{
		{"What did Gina find for her clothing store on 1 February, 2023?", []period{day(2023, time.February, 1)}},
		{"What painting did Melanie show to Caroline on October 13, 2023?", []period{day(2023, time.October, 13)}},
		{"on 13th October 2023 and Oct 14th, 2023", []period{day(2023, time.October, 13), day(2023, time.October, 14)}},
		{"What did Mel paint in July 2023?", []period{{year: 2023, month: time.July}}},
		{"When did Melanie go camping in June?", []period{{month: time.June, anyYear: true}}},
		{"what happened in May", []period{{month: time.May, anyYear: true}}},
		{"what happened on 3 May", []period{{month: time.May, day: 3, anyYear: true}}},
		{"How many times has Melanie gone to the beach in 2023?", []period{{year: 2023}}},
		{"the 2023-10-13 release and the 2024-02 plan", []period{day(2023, time.October, 13), {year: 2024, month: time.February}}},
		{"dated 2023-13-01", []period{{year: 2023}}},                             // no month 13: the year alone
		{"on 30 February 2023 or in 2024", []period{{year: 2023}, {year: 2024}}}, // no such day
		{"on 29 February", []period{{month: time.February, day: 29, anyYear: true}}},
		{"May I ask what you may march to?", nil},
		{"we march in march", nil},
		{"Jan said hello", nil},
		{"she has 2 kids and 31 friends", nil},
		{"in 1899 or 2100", nil},
		{"", nil},
	} {
		if got := namedPeriods(c.text); !slices.Equal(got, c.want) {
			t.Errorf("namedPeriods(%q) = %+v, want %+v", c.text, got, c.want)
		}
	}
}

func TestPeriodContains(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		berlin = time.FixedZone("CET", 3600)
	}
	late := time.Date(2023, time.October, 13, 23, 30, 0, 0, time.UTC) // 14 October in Berlin
	for _, c := range []struct {
		p    period
		loc  *time.Location
		want bool
	}{
		{period{year: 2023, month: time.October, day: 13}, time.UTC, true},
		{period{year: 2023, month: time.October, day: 13}, berlin, false},
		{period{year: 2023, month: time.October, day: 14}, berlin, true},
		{period{month: time.October, day: 13, anyYear: true}, time.UTC, true},
		{period{year: 2022, month: time.October, day: 13}, time.UTC, false},
		{period{year: 2023, month: time.October}, time.UTC, true},
		{period{year: 2023, month: time.November}, time.UTC, false},
		{period{year: 2023}, time.UTC, true},
		{period{month: time.October, anyYear: true}, time.UTC, true},
	} {
		if got := c.p.contains(late, c.loc); got != c.want {
			t.Errorf("%+v contains %v in %v = %v, want %v", c.p, late, c.loc, got, c.want)
		}
	}
}

// TestNamedPeriodsBounded checks that a query of many dates keeps
// maxPeriods of them, and that reading grows linearly with the query.
func TestNamedPeriodsBounded(t *testing.T) {
	many := strings.Repeat("on 1 May 2023, ", 1000)
	if got := namedPeriods(many); len(got) != maxPeriods {
		t.Fatalf("%d periods kept, want %d", len(got), maxPeriods)
	}
	measure := func(n int) time.Duration {
		text := strings.Repeat("2023-10-13 October 5th 12 ", n)
		best := time.Duration(1 << 62)
		for range 3 {
			start := time.Now()
			namedPeriods(text)
			best = min(best, time.Since(start))
		}
		return best
	}
	small, big := measure(2000), measure(16000)
	if big > 24*small+time.Millisecond {
		t.Fatalf("8 times the text took %v against %v: not linear", big, small)
	}
}

func FuzzNamedPeriods(f *testing.F) {
	for _, s := range []string{"on 1 February, 2023", "2023-10-13", "in June", "October 13th", "\xff2023-1", "13 May 2023-05"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ps := namedPeriods(text)
		if len(ps) > maxPeriods {
			t.Fatalf("%d periods", len(ps))
		}
		for _, p := range ps {
			if p.anyYear == (p.year != 0) || p.day != 0 && !validDay(p.year, p.month, p.day) || p.day != 0 && p.month == 0 {
				t.Fatalf("namedPeriods(%q) gave an invalid period %+v", text, p)
			}
		}
	})
}
