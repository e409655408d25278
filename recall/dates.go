package recall

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Dates named in a query. "What did Gina find for her store on
// 1 February, 2023?" names a day, "in July 2023" a month, "in June" a
// month of any year, "in 2023" a year; a record created within a period
// the query names gains Options.DateBoost. The forms read are English:
//
//	13 October 2023, 13th October, 2023, October 13, 2023, Oct 13 2023
//	October 2023, October (in full, capitalised, not the query's first word)
//	2023-10-13, 2023-10
//	2023 (a year from 1900 to 2099, when no other form names a date)
//
// A day or month without a year matches that day or month of any year. A
// month name alone must be capitalised and not open the query, so the
// verbs "may" and "march" name nothing; an impossible day (30 February)
// names nothing. Reading costs time linear in the query's length, and at
// most maxPeriods periods are kept.

// maxPeriods is the most periods a query names that are kept.
const maxPeriods = 16

// period is a span of calendar time a query names: a day, a month or a
// year, of one year or (anyYear) of every year.
type period struct {
	year    int        // 0 with anyYear
	month   time.Month // 0: the whole year
	day     int        // 0: the whole month
	anyYear bool
}

// contains reports whether t, read in loc, falls in p.
func (p period) contains(t time.Time, loc *time.Location) bool {
	t = t.In(loc)
	y, m, d := t.Date()
	switch {
	case !p.anyYear && y != p.year:
		return false
	case p.month != 0 && m != p.month:
		return false
	case p.day != 0 && d != p.day:
		return false
	}
	return true
}

// dateWord is a word of a query, with what it can name.
type dateWord struct {
	text  string
	start int        // byte offset in the query
	end   int        // byte offset just past it
	month time.Month // 0: not a month name
	day   int        // 1–31 as a day of the month ("13", "13th"); 0: not one
	year  int        // 1900–2099 as a four-digit number; 0: not one
	upper bool       // starts with an upper-case letter
}

// months are the English month names and their three-letter
// abbreviations, folded to lower case.
var months = func() map[string]time.Month {
	m := map[string]time.Month{}
	for mo := time.January; mo <= time.December; mo++ {
		name := strings.ToLower(mo.String())
		m[name] = mo
		m[name[:3]] = mo
	}
	return m
}()

// namedPeriods returns the periods text names, in order, at most
// maxPeriods of them.
func namedPeriods(text string) []period {
	words := dateWords(text)
	var out []period
	add := func(p period) {
		if len(out) < maxPeriods {
			out = append(out, p)
		}
	}
	named := false
	for i := 0; i < len(words); i++ {
		w := words[i]
		next := func(k int) *dateWord {
			if i+k < len(words) {
				return &words[i+k]
			}
			return nil
		}
		switch {
		case w.year != 0 && isoNext(text, words, i):
			// 2023-10 or 2023-10-13
			mo, _ := strconv.Atoi(words[i+1].text)
			p := period{year: w.year, month: time.Month(mo)}
			i++
			if isoNext(text, words, i) {
				if d, _ := strconv.Atoi(words[i+1].text); validDay(p.year, p.month, d) {
					p.day = d
					i++
				} else {
					continue
				}
			}
			add(p)
			named = true
		case w.day != 0 && next(1) != nil && next(1).month != 0:
			// 13 October [2023]
			month := next(1).month
			i++
			if p, ok := dayOf(month, w.day, words, &i); ok {
				add(p)
				named = true
			}
		case w.month != 0 && next(1) != nil && next(1).day != 0 && next(1).year == 0:
			// October 13 [2023]
			day := next(1).day
			i++
			if p, ok := dayOf(w.month, day, words, &i); ok {
				add(p)
				named = true
			}
		case w.month != 0 && next(1) != nil && next(1).year != 0:
			// October 2023
			add(period{year: next(1).year, month: w.month})
			i++
			named = true
		case w.month != 0 && w.upper && i > 0 && strings.EqualFold(w.text, w.month.String()):
			// in October (a full name: "Jan" alone is more often a name)
			add(period{month: w.month, anyYear: true})
			named = true
		}
	}
	if named {
		return out
	}
	for _, w := range words {
		if w.year != 0 {
			add(period{year: w.year})
		}
	}
	return out
}

// dayOf returns the period of day of month, in the year words[*i+1]
// names (moving *i past it) or of any year, and whether that day exists.
func dayOf(month time.Month, day int, words []dateWord, i *int) (period, bool) {
	p := period{month: month, day: day, anyYear: true}
	if *i+1 < len(words) && words[*i+1].year != 0 {
		p.year, p.anyYear = words[*i+1].year, false
		*i++
	}
	return p, validDay(p.year, p.month, p.day)
}

// isoNext reports whether words[i] and words[i+1] are joined by one '-',
// words[i+1] being a two-digit month (after a year) or day (after a
// month), as in 2023-10-13.
func isoNext(text string, words []dateWord, i int) bool {
	if i+1 >= len(words) {
		return false
	}
	a, b := words[i], words[i+1]
	if b.start != a.end+1 || text[a.end] != '-' || len(b.text) != 2 || !isDigits(b.text) {
		return false
	}
	n, _ := strconv.Atoi(b.text)
	if a.year != 0 && len(a.text) == 4 {
		return n >= 1 && n <= 12
	}
	return n >= 1 && n <= 31 && len(a.text) == 2
}

// validDay reports whether day exists in month of year, or of some year
// when year is 0.
func validDay(year int, month time.Month, day int) bool {
	if year == 0 {
		year = 2000 // a leap year: 29 February exists in some year
	}
	if month < time.January || month > time.December || day < 1 {
		return false
	}
	return time.Date(year, month, day, 0, 0, 0, 0, time.UTC).Day() == day
}

// dateWords splits text into its runs of letters and digits and reads
// what each can name.
func dateWords(text string) []dateWord {
	var out []dateWord
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		out = append(out, readDateWord(text[start:end], start, end))
		start = -1
	}
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(text))
	return out
}

// readDateWord reads what the word s, at [start, end) of its text, can
// name.
func readDateWord(s string, start, end int) dateWord {
	w := dateWord{text: s, start: start, end: end}
	if r, _ := utf8.DecodeRuneInString(s); unicode.IsUpper(r) {
		w.upper = true
	}
	if len(s) <= len("september") {
		w.month = months[strings.ToLower(s)]
	}
	digits := s
	for _, suffix := range []string{"st", "nd", "rd", "th"} {
		if len(s) > 2 && strings.HasSuffix(strings.ToLower(s), suffix) {
			digits = s[:len(s)-2]
			break
		}
	}
	if isDigits(digits) && len(digits) <= 2 {
		if d, _ := strconv.Atoi(digits); d >= 1 && d <= 31 {
			w.day = d
		}
	}
	if digits == s && isDigits(s) && len(s) == 4 {
		if y, _ := strconv.Atoi(s); y >= 1900 && y <= 2099 {
			w.year = y
		}
	}
	return w
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
