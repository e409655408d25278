package extract

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSentences(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"One. Two! Three? Four…", []string{"One.", "Two!", "Three?", "Four…"}},
		{"Wait... what?! Yes.", []string{"Wait...", "what?!", "Yes."}},
		{`She said "go." Then left.`, []string{`She said "go."`, "Then left."}},
		{"(It was late.) We slept.", []string{"(It was late.)", "We slept."}},
		{"Dr. Lee and Mr. Smith met at 3.30 p.m. today. Fine.", []string{"Dr. Lee and Mr. Smith met at 3.30 p.m. today.", "Fine."}},
		{"J. R. R. Tolkien wrote it, e.g. The Hobbit. Yes.", []string{"J. R. R. Tolkien wrote it, e.g. The Hobbit.", "Yes."}},
		{"version 1.2.3 is out.Next", []string{"version 1.2.3 is out.Next"}},
		{"line one\nline two\r\n\r\nline three", []string{"line one", "line two", "line three"}},
		{"- item one\n* item two\n• item three\n1. item four", []string{"item one", "item two", "item three", "1.", "item four"}},
		{"  spaced \t out  . next", []string{"spaced out .", "next"}},
		{"no end", []string{"no end"}},
	}
	for _, c := range cases {
		got := slices.Collect(sentences(c.text))
		if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("sentences(%q) (-want +got):\n%s", c.text, diff)
		}
	}
	// The caller may stop early.
	for s := range sentences("One. Two. Three.") {
		if s != "One." {
			t.Errorf("first sentence %q", s)
		}
		break
	}
}

func TestCutText(t *testing.T) {
	cases := []struct {
		s    string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly ten", 11, "exactly ten"},
		{"one two three four", 12, "one two…"},
		{"onetwothreefour", 10, "onetwot…"},
		{"héllo wörld", 9, "héllo…"},
		{"日本語のテキスト", 10, "日本…"},
		{"abc", 2, ""},
	}
	for _, c := range cases {
		got := cutText(c.s, c.max)
		if got != c.want || len(got) > c.max || !utf8.ValidString(got) {
			t.Errorf("cutText(%q, %d) = %q (%d bytes), want %q", c.s, c.max, got, len(got), c.want)
		}
	}
}

func TestOneLineAndWords(t *testing.T) {
	if got := oneLine(" a\tb\n\nc\u2028d\x00e  "); got != "a b c d e" {
		t.Errorf("oneLine = %q", got)
	}
	got := words("I'm Sam’s friend — born 2024-05-03, 'quoted' Émile!")
	want := []string{"i'm", "sam's", "friend", "born", "2024", "05", "03", "quoted", "émile"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("words (-want +got):\n%s", diff)
	}
	if normKey("I like TEA!!") != normKey("i like tea") {
		t.Error("normKey differs for case and punctuation")
	}
}

func TestSlotOf(t *testing.T) {
	cases := map[string]string{
		"My favorite color is green.":        "|my favourite colour is",
		"my favourite colour is blue":        "|my favourite colour is",
		"My email address is a@b.c":          "|my email address is",
		"Our home address is 4 Main St.":     "|our home address is",
		"I'm living in Berlin.":              "|i live in",
		"I live in Oslo.":                    "|i live in",
		"We are based in Rome.":              "|we live in",
		"I work for Globex.":                 "|i work at",
		"I am 34 years old.":                 "|i am years old",
		"Caroline: My name is Caro.":         "caroline|my name is",
		"My brother is a doctor.":            "",
		"My name is":                         "",
		"I live in":                          "",
		"I think I live in Oslo.":            "",
		"My very long list of things is big": "",
	}
	for text, want := range cases {
		if got := slotOf(text); got != want {
			t.Errorf("slotOf(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestStripLeadIns(t *testing.T) {
	cases := map[string]string{
		"Hi, I'm Sam.":                         "I'm Sam.",
		"hey! i moved.":                        "I moved.",
		"Oh, well, actually, I moved.":         "I moved.",
		"Please remember that my code is 4.":   "My code is 4.",
		"BTW my cat is old.":                   "My cat is old.",
		"Just so you know, I'm allergic.":      "I'm allergic.",
		"Hello world is my first program.":     "Hello world is my first program.",
		strings.Repeat("so, ", 10) + "I left.": strings.Repeat("so, ", 6) + "I left.",
	}
	for in, want := range cases {
		if got := stripLeadIns(in); got != upperFirst(want) {
			t.Errorf("stripLeadIns(%q) = %q, want %q", in, got, upperFirst(want))
		}
	}
}
