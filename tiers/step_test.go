package tiers_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/tiers"
)

func TestStepSummaryFormat(t *testing.T) {
	s := tiers.Step{Workflow: "nightly-scan", Name: "check-pods", Input: "List failing pods", Output: "3 pods in CrashLoopBackOff"}
	want := "[nightly-scan/check-pods] Task: List failing pods | Result: 3 pods in CrashLoopBackOff"
	if got := s.Summary(); got != want {
		t.Fatalf("Summary() =\n%q\nwant\n%q", got, want)
	}
	empty := tiers.Step{Workflow: "w", Name: "s"}
	if got, want := empty.Summary(), "[w/s] Task:  | Result: "; got != want {
		t.Fatalf("empty input and output: %q, want %q", got, want)
	}
}

func TestStepSummaryRuneLimits(t *testing.T) {
	prefix := "[w/s] Task: "
	cases := []struct {
		name           string
		input, output  string
		wantIn, wantOu string
	}{
		{"ascii at limits", strings.Repeat("a", 200), strings.Repeat("b", 500), strings.Repeat("a", 200), strings.Repeat("b", 500)},
		{"ascii over limits", strings.Repeat("a", 201), strings.Repeat("b", 501), strings.Repeat("a", 200), strings.Repeat("b", 500)},
		{"three-byte runes", strings.Repeat("日", 300), strings.Repeat("本", 600), strings.Repeat("日", 200), strings.Repeat("本", 500)},
		{"four-byte rune across the cut", strings.Repeat("a", 199) + "😀😀", strings.Repeat("b", 499) + "😀x", strings.Repeat("a", 199) + "😀", strings.Repeat("b", 499) + "😀"},
		{"combining sequence counted by runes", strings.Repeat("e\u0301", 150), "", strings.Repeat("e\u0301", 100), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tiers.Step{Workflow: "w", Name: "s", Input: tc.input, Output: tc.output}.Summary()
			want := prefix + tc.wantIn + " | Result: " + tc.wantOu
			if got != want {
				t.Fatalf("got %q\nwant %q", got, want)
			}
			if !utf8.ValidString(got) {
				t.Fatal("summary is not valid UTF-8")
			}
		})
	}
	// The 300-rune input keeps exactly 200 runes.
	got := tiers.Step{Workflow: "w", Name: "s", Input: strings.Repeat("日", 300)}.Summary()
	task := strings.TrimSuffix(strings.TrimPrefix(got, prefix), " | Result: ")
	if n := utf8.RuneCountInString(task); n != 200 {
		t.Fatalf("kept %d runes of input, want 200", n)
	}
}

func TestStepSummaryOneLine(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"newline", "line one\nline two", "line one line two"},
		{"crlf is one break", "a\r\nb", "a b"},
		{"lone cr", "a\rb", "a b"},
		{"tab", "a\tb", "a b"},
		{"blank lines kept as spaces", "a\n\nb", "a  b"},
		{"unicode separators", "a\u2028b\u2029c\u0085d", "a b c d"},
		{"other controls", "a\x00b\x1bc\x7fd\ve\ff", "a b c d e f"},
		{"surrounding space trimmed", "\n\t  hello  \n", "hello"},
		{"invalid utf-8 replaced", "a\xffb", "a\uFFFDb"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tiers.Step{Workflow: "w", Name: "s", Input: tc.in, Output: tc.in}.Summary()
			want := "[w/s] Task: " + tc.want + " | Result: " + tc.want
			if got != want {
				t.Fatalf("got %q, want %q", got, want)
			}
			if strings.ContainsAny(got, "\r\n\t") || !utf8.ValidString(got) {
				t.Fatalf("summary %q is not one valid line", got)
			}
		})
	}
	// Flattening happens before the cut: newlines count as one rune each.
	in := strings.Repeat("ab\n", 100) // 300 runes
	got := tiers.Step{Workflow: "w", Name: "s", Input: in}.Summary()
	task := strings.TrimSuffix(strings.TrimPrefix(got, "[w/s] Task: "), " | Result: ")
	if want := strings.TrimSpace(strings.Repeat("ab ", 67)[:200]); task != want {
		t.Fatalf("task %q, want %q", task, want)
	}
	// Leading white space does not use up the limit.
	got = tiers.Step{Workflow: "w", Name: "s", Input: strings.Repeat("\n", 50) + strings.Repeat("x", 250)}.Summary()
	if want := "[w/s] Task: " + strings.Repeat("x", 200) + " | Result: "; got != want {
		t.Fatalf("leading breaks: got %q", got)
	}
}

func TestStepValidate(t *testing.T) {
	long := strings.Repeat("a", tiers.MaxStepNameBytes+1)
	cases := []struct {
		workflow, name string
		ok             bool
	}{
		{"nightly-scan", "check-pods", true},
		{"ワークフロー", "ステップ.1_a", true},
		{strings.Repeat("a", tiers.MaxStepNameBytes), "s", true},
		{"", "s", false},
		{"w", "", false},
		{"a/b", "s", false},
		{"w", "a/b", false},
		{"w[1]", "s", false},
		{"w", "s]", false},
		{"w", "s[", false},
		{"w\n", "s", false},
		{"w", "s\tx", false},
		{"w", "a\u2028b", false},
		{" w", "s", false},
		{"w", "s ", false},
		{"w", "\xff", false},
		{long, "s", false},
		{"w", long, false},
	}
	for _, tc := range cases {
		err := tiers.Step{Workflow: tc.workflow, Name: tc.name, Input: "any text\n[with] brackets", Output: "日本"}.Validate()
		if tc.ok && err != nil {
			t.Errorf("Validate(%q, %q) = %v, want nil", tc.workflow, tc.name, err)
		}
		if !tc.ok && !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("Validate(%q, %q) = %v, want ErrInvalidArgument", tc.workflow, tc.name, err)
		}
	}
	// Input and output are free text, but never invalid UTF-8.
	for _, s := range []tiers.Step{
		{Workflow: "w", Name: "s", Input: "a\xffb"},
		{Workflow: "w", Name: "s", Output: "\xe6\x97"},
		{Workflow: "w", Name: "s", Input: "ok", Output: strings.Repeat("x", 10000) + "\xff"}, // past what the summary keeps
	} {
		if err := s.Validate(); !errors.Is(err, memory.ErrInvalidArgument) || !strings.Contains(err.Error(), "not valid UTF-8") {
			t.Errorf("Validate(input %.20q, output %.20q) = %v, want ErrInvalidArgument", s.Input, s.Output, err)
		}
	}
}

func TestPrepend(t *testing.T) {
	if got := tiers.Prepend(memory.Recollection{}, "You are a monitor."); got != "You are a monitor." {
		t.Fatalf("empty recollection changed the prompt: %q", got)
	}
	r := memory.Recollection{Text: "[Previous execution context]\n[w/s] Task: a | Result: b\n\n[Current task follows]\n"}
	want := "[Previous execution context]\n[w/s] Task: a | Result: b\n\n[Current task follows]\nYou are a monitor."
	if got := tiers.Prepend(r, "You are a monitor."); got != want {
		t.Fatalf("Prepend = %q, want %q", got, want)
	}
}
