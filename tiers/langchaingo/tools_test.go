package langchaingo_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/tiers/langchaingo"
	"github.com/agentmem/memory/tiers/tiered"
)

// facts returns the contents of the facts id reads at level.
func facts(t *testing.T, m *tiered.Memory, id memory.Identity, level memory.Level) []string {
	t.Helper()
	recs, err := m.Facts().List(context.Background(), id, level, false)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, r.Content)
	}
	slices.Sort(out)
	return out
}

// TestSaveTool: a saved fact is stored with the bound identity's
// attribution and recalled in the user's next session; a mistake in the
// input is the tool's answer, not an error, and stores nothing.
func TestSaveTool(t *testing.T) {
	eachDriver(t, func(t *testing.T, m *tiered.Memory) {
		ctx := context.Background()
		save, err := langchaingo.NewSaveTool(m, s1)
		if err != nil {
			t.Fatal(err)
		}
		if save.Name() != "save_memory" || !strings.Contains(save.Description(), "long-term memory") {
			t.Errorf("name %q, description %q", save.Name(), save.Description())
		}
		for _, in := range []string{"Alice prefers window seats", ` {"fact": " Alice flies from Lisbon "} `, `"Alice is vegetarian"`} {
			out, err := save.Call(ctx, in)
			if err != nil || !strings.HasPrefix(out, "Saved to long-term memory: Alice ") {
				t.Errorf("Call(%q) = %q, %v", in, out, err)
			}
		}
		want := []string{"Alice flies from Lisbon", "Alice is vegetarian", "Alice prefers window seats"}
		if got := facts(t, m, s1, memory.LevelSession); !slices.Equal(got, want) {
			t.Errorf("facts of s1 = %q, want %q", got, want)
		}
		recs, _ := m.Facts().List(ctx, s1, memory.LevelSession, false)
		for _, r := range recs {
			if r.Identity != s1 {
				t.Errorf("fact %q attributed to %+v, want %+v", r.Content, r.Identity, s1)
			}
		}
		rec, err := m.RecallWith(ctx, s2, "Which seat does Alice prefer?", tiered.RecallOptions{Level: memory.LevelAgent, K: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.Facts) != 1 || rec.Facts[0].Record.Content != "Alice prefers window seats" {
			t.Errorf("the next session recalls %+v", rec.Facts)
		}

		for _, bad := range []string{
			"", "   ", "two\nlines", `{"fact": ""}`, `{"text": "x"}`, `{"fact": "a", "level": "store"}`, `{"fact": "a"} extra`,
			`{"fact": 3}`, `"unterminated`, "\xff", strings.Repeat("a", extract.MaxFactBytes+1), strings.Repeat("a", langchaingo.MaxInputBytes+1),
		} {
			out, err := save.Call(ctx, bad)
			if err != nil || !strings.HasPrefix(out, "The save_memory call was not run: ") || !strings.Contains(out, "Call save_memory with") {
				t.Errorf("Call(%.30q) = %q, %v; want a mistake answer", bad, out, err)
			}
		}
		if got := facts(t, m, s1, memory.LevelSession); !slices.Equal(got, want) {
			t.Errorf("after refused calls the facts are %q", got)
		}
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := save.Call(cancelled, "Alice likes tea"); !errors.Is(err, context.Canceled) {
			t.Errorf("Call on a cancelled context = %v", err)
		}
	})
}

// TestSearchToolCap: the search tool searches at the scope asked for when
// it is no wider than the maximum read scope, and at the maximum read
// scope when it is wider or not given, never wider.
func TestSearchToolCap(t *testing.T) {
	eachDriver(t, func(t *testing.T, m *tiered.Memory) {
		ctx := context.Background()
		if _, err := m.Remember(ctx, s1, "Alice's cat is called Miso"); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Remember(ctx, other, "Bob's cat is called Rex"); err != nil {
			t.Fatal(err)
		}
		search := func(max memory.Level, input string) string {
			t.Helper()
			tool, err := langchaingo.NewSearchTool(m, s2, langchaingo.SearchOptions{MaxReadScope: max})
			if err != nil {
				t.Fatal(err)
			}
			out, err := tool.Call(ctx, input)
			if err != nil {
				t.Fatalf("search %q capped at %s: %v", input, max, err)
			}
			return out
		}
		for _, c := range []struct {
			max         memory.Level
			input       string
			finds       bool // Alice's cat
			capped      string
			searchedLvl string
		}{
			// Session 2 holds no fact: a session-level search finds none,
			// whatever the model asks for.
			{"", "cat", false, "", "session"},
			{memory.LevelSession, `{"query": "cat", "scope": "user"}`, false, "user", "session"},
			{memory.LevelSession, `{"query": "cat", "scope": "store"}`, false, "store", "session"},
			// The agent level reaches session 1's fact, and never Bob's.
			{memory.LevelAgent, "What is the cat called?", true, "", "agent"},
			{memory.LevelAgent, `{"query": "cat", "scope": "user"}`, true, "user", "agent"},
			{memory.LevelAgent, `{"query": "cat", "scope": "session"}`, false, "", "session"},
			{memory.LevelUser, `{"query": "cat", "k": 3}`, true, "", "user"},
		} {
			out := search(c.max, c.input)
			if got := strings.Contains(out, "Alice's cat is called Miso"); got != c.finds {
				t.Errorf("max %q, %s: found Alice's fact %v, want %v:\n%s", c.max, c.input, got, c.finds, out)
			}
			if strings.Contains(out, "Rex") {
				t.Errorf("max %q, %s: found another user's fact:\n%s", c.max, c.input, out)
			}
			wantCap := c.capped != ""
			if got := strings.Contains(out, "is wider than this agent may read"); got != wantCap {
				t.Errorf("max %q, %s: capped %v, want %v:\n%s", c.max, c.input, got, wantCap, out)
			}
			if !strings.Contains(out, " "+c.searchedLvl+" memory") {
				t.Errorf("max %q, %s: not searched at %s:\n%s", c.max, c.input, c.searchedLvl, out)
			}
		}
		// The store level is the posture's to allow: the default refuses
		// it, as a Go error the model cannot fix.
		tool, _ := langchaingo.NewSearchTool(m, s2, langchaingo.SearchOptions{MaxReadScope: memory.LevelStore})
		if _, err := tool.Call(ctx, "cat"); !errors.Is(err, memory.ErrPermissionDenied) {
			t.Errorf("a store-level search under the default posture = %v, want ErrPermissionDenied", err)
		}
	})
}

// TestSearchScope: Scope caps every wider level and keeps narrower ones.
func TestSearchScope(t *testing.T) {
	m := newTiered(t, "inmem")
	levels := []memory.Level{memory.LevelSession, memory.LevelAgent, memory.LevelUser, memory.LevelStore}
	for mi, max := range levels {
		tool, err := langchaingo.NewSearchTool(m, s1, langchaingo.SearchOptions{MaxReadScope: max})
		if err != nil {
			t.Fatal(err)
		}
		if got, capped := tool.Scope(""); got != max || capped {
			t.Errorf("max %s: Scope(\"\") = %s, %v", max, got, capped)
		}
		for ri, req := range levels {
			got, capped := tool.Scope(req)
			want, wantCapped := req, false
			if ri > mi {
				want, wantCapped = max, true
			}
			if got != want || capped != wantCapped {
				t.Errorf("max %s: Scope(%s) = %s, %v; want %s, %v", max, req, got, capped, want, wantCapped)
			}
		}
		for _, l := range levels[mi+1:] {
			if strings.Contains(tool.Description(), `search "`+string(l)) || strings.Contains(tool.Description(), `, "`+string(l)+`". `) {
				t.Errorf("max %s: the description offers %s:\n%s", max, l, tool.Description())
			}
		}
	}
}

// TestSearchMistakes: input the search tool cannot use is its answer,
// with a nil error.
func TestSearchMistakes(t *testing.T) {
	m := newTiered(t, "inmem")
	tool, err := langchaingo.NewSearchTool(m, s1, langchaingo.SearchOptions{MaxReadScope: memory.LevelAgent})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", " \n", `{"query": ""}`, `{"scope": "agent"}`, `{"query": "x", "scope": "Agent"}`,
		`{"query": "x", "scope": "SQUAD"}`, `{"query": "x", "k": 0}`, `{"query": "x", "k": 1.5}`, `{"query": "x", "k": 51}`,
		`{"query": "x", "user": "bob"}`, `{"query": "x"}{}`, `{query}`, "\xff", strings.Repeat("q", langchaingo.MaxQueryBytes+1)} {
		out, err := tool.Call(context.Background(), bad)
		if err != nil || !strings.HasPrefix(out, "The search_memory call was not run: ") || !strings.Contains(out, `"scope" is optional, one of "session", "agent" (default "agent")`) {
			t.Errorf("Call(%.30q) = %q, %v; want a mistake answer", bad, out, err)
		}
	}
}

// TestParseInput: the parsers' results and error classes.
func TestParseInput(t *testing.T) {
	for _, c := range []struct {
		in   string
		want langchaingo.SearchArgs
		err  error
	}{
		{"  where is the ferry? ", langchaingo.SearchArgs{Query: "where is the ferry?"}, nil},
		{`"quoted query"`, langchaingo.SearchArgs{Query: "quoted query"}, nil},
		{`{"query": " ferry ", "scope": "user", "k": 7}`, langchaingo.SearchArgs{Query: "ferry", Scope: memory.LevelUser, K: 7}, nil},
		{`{"query": "ferry", "k": 2.0}`, langchaingo.SearchArgs{Query: "ferry", K: 2}, nil},
		{`{"query": "ferry", "scope": "AGENT"}`, langchaingo.SearchArgs{}, memory.ErrInvalidArgument},
		{`{"query": "ferry", "k": -1}`, langchaingo.SearchArgs{}, memory.ErrInvalidArgument},
		{`{"query": "ferry", "k": "2"}`, langchaingo.SearchArgs{}, memory.ErrInvalidArgument},
		{"{not json", langchaingo.SearchArgs{}, memory.ErrInvalidArgument},
		{`{"query": "` + strings.Repeat("q", langchaingo.MaxQueryBytes+1) + `"}`, langchaingo.SearchArgs{}, memory.ErrTooLarge},
		{strings.Repeat("q", langchaingo.MaxInputBytes+1), langchaingo.SearchArgs{}, memory.ErrTooLarge},
	} {
		got, err := langchaingo.ParseSearchInput(c.in)
		if c.err == nil && (err != nil || got != c.want) || c.err != nil && !errors.Is(err, c.err) {
			t.Errorf("ParseSearchInput(%.40q) = %+v, %v; want %+v, %v", c.in, got, err, c.want, c.err)
		}
	}
	for _, c := range []struct {
		in, want string
		err      error
	}{
		{" Alice likes tea ", "Alice likes tea", nil},
		{`{"fact": "Alice likes tea"}`, "Alice likes tea", nil},
		{`"Alice likes tea"`, "Alice likes tea", nil},
		{"Alice\tlikes tea", "", memory.ErrInvalidArgument},
		{`{"fact": "a\nb"}`, "", memory.ErrInvalidArgument},
		{strings.Repeat("a", extract.MaxFactBytes+1), "", memory.ErrTooLarge},
	} {
		got, err := langchaingo.ParseSaveInput(c.in)
		if c.err == nil && (err != nil || got != c.want) || c.err != nil && !errors.Is(err, c.err) {
			t.Errorf("ParseSaveInput(%.40q) = %q, %v; want %q, %v", c.in, got, err, c.want, c.err)
		}
	}
}

// TestNewToolErrors: what the tool constructors refuse.
func TestNewToolErrors(t *testing.T) {
	m := newTiered(t, "inmem")
	bad := s1
	bad.Agent = "agent\x00"
	if _, err := langchaingo.NewSaveTool(nil, s1); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("NewSaveTool(nil) = %v", err)
	}
	if _, err := langchaingo.NewSaveTool(m, bad); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("NewSaveTool with a bad identity = %v", err)
	}
	for _, opt := range []langchaingo.SearchOptions{
		{MaxReadScope: memory.LevelSquad}, {MaxReadScope: "everything"}, {K: -1}, {K: langchaingo.MaxSearchK + 1},
	} {
		if _, err := langchaingo.NewSearchTool(m, s1, opt); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("NewSearchTool(%+v) = %v, want ErrInvalidArgument", opt, err)
		}
	}
	if _, err := langchaingo.NewSearchTool(nil, s1, langchaingo.SearchOptions{}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("NewSearchTool(nil) = %v", err)
	}
	// A session-level search by an identity without a session is the
	// memory's to refuse, on the call: a Go error, not the model's mistake.
	noSession := s1
	noSession.Session = ""
	tool, err := langchaingo.NewSearchTool(m, noSession, langchaingo.SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tool.Call(context.Background(), "cat"); !errors.Is(err, memory.ErrIncompleteScope) {
		t.Errorf("a session-level search without a session = %v, want ErrIncompleteScope", err)
	}
}
