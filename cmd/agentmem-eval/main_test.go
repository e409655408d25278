package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
)

// runCmd runs the command with args and returns its exit status, standard
// output and standard error.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr strings.Builder
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func writeMini(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mini.json")
	if err := os.WriteFile(path, []byte(miniData), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

var summaryLine = regexp.MustCompile(`^overall hit@1=[01]\.\d{3} hit@5=[01]\.\d{3} hit@10=[01]\.\d{3} hit@20=[01]\.\d{3} mrr=[01]\.\d{3}$`)

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestRunMini runs the command on the in-memory driver and the library's
// text search: each scored question of the small file shares a word with
// its evidence turn only, so every one is found first.
func TestRunMini(t *testing.T) {
	path := writeMini(t)
	code, out, errOut := runCmd(t, "-data", path)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if got, want := lastLine(out), "overall hit@1=1.000 hit@5=1.000 hit@10=1.000 hit@20=1.000 mrr=1.000"; got != want {
		t.Errorf("last line %q, want %q; output:\n%s", got, want, out)
	}
	if !strings.Contains(out, "mode lexical, driver inmem, data "+path) {
		t.Errorf("the report does not name its configuration:\n%s", out)
	}
	for _, want := range []string{`skipped conversation conv-x, question 3 (category 2) "typo?": evidence id names no turn (evidence ["D1:1; D1:2"])`, "\rconversation 1/1, question 1/5"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%q", want, errOut)
		}
	}
	code, out2, errOut := runCmd(t, "-data", path, "-quiet")
	if code != 0 || errOut != "" {
		t.Errorf("-quiet: exit %d, stderr %q", code, errOut)
	}
	if cut := func(s string) string { return s[strings.Index(s, "\n\n"):strings.Index(s, "recall latency")] }; cut(out) != cut(out2) {
		t.Errorf("two runs scored differently:\n%s\n%s", out, out2)
	}
	if code, _, errOut := runCmd(t, "-data", path, "-strict"); code != 1 || !strings.Contains(errOut, `"typo?": evidence id names no turn`) {
		t.Errorf("-strict: exit %d, stderr %q", code, errOut)
	}
}

func TestRunUsage(t *testing.T) {
	path := writeMini(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-mode", "hybrid", "-data", path}, 2, `unknown mode "hybrid"; the modes are hybrid-hash, lexical, text`},
		{[]string{"-driver", "postgres", "-data", path}, 2, `unknown driver "postgres"; the drivers are fs, inmem, qdrant, sqlite`},
		{[]string{"-data", path, "extra"}, 2, `unexpected arguments ["extra"]`},
		{[]string{"-nope"}, 2, "flag provided but not defined: -nope"},
		{[]string{"-data", filepath.Join(t.TempDir(), "absent.json")}, 1, "absent.json: no such file"},
		{[]string{"-help"}, 0, `"overall" is categories 1-4 together`},
	} {
		code, out, errOut := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and stderr containing %q", tc.args, code, out, errOut, tc.code, tc.want)
		}
	}
}

func TestFindData(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	if _, err := findData([]string{a, b}); err == nil || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), b) || !strings.Contains(err.Error(), "-data FILE") {
		t.Errorf("none exists: %v", err)
	}
	if err := os.WriteFile(b, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := findData([]string{a, b}); got != b || err != nil {
		t.Errorf("findData = %q, %v; want %q", got, err, b)
	}
}

// TestTempStores checks that the SQLite and fs conversation stores live
// in a temporary directory that closing them removes, and that each
// answers a text search (or, for a driver without it, says so). Without
// cgo, opening a SQLite store fails with memory.ErrUnimplemented and
// leaves nothing behind.
func TestTempStores(t *testing.T) {
	for name, open := range map[string]opener{"sqlite": openSQLite, "fs": openFS} {
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			ctx := context.Background()
			st, err := open(ctx, "conv-x", time.Now())
			if err != nil {
				if name != "sqlite" || !errors.Is(err, memory.ErrUnimplemented) {
					t.Fatal(err)
				}
			} else {
				c := mini(t).Conversations[0]
				for _, rec := range Records(c) {
					if err := st.Add(ctx, rec.Identity, rec); err != nil {
						t.Fatal(err)
					}
				}
				if ents, _ := os.ReadDir(tmp); len(ents) != 1 {
					t.Errorf("%d entries in the temporary directory while the store is open, want 1", len(ents))
				}
				ms, err := st.SearchText(ctx, Identity(c), recallQuery, "who said hello?", Depth)
				switch {
				case errors.Is(err, memory.ErrUnimplemented):
					t.Logf("the %s driver has no text search yet: %v", name, err)
				case err != nil:
					t.Error(err)
				case len(ms) == 0 || ms[0].Record.Metadata[diaKey] != "D1:1":
					t.Errorf("search found %v, want D1:1 first", ms)
				}
				if err := st.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Errorf("the store left %v behind", ents)
			}
		})
	}
}

// devData is where the tests look for LoCoMo's development split.
var devData = []string{filepath.Join("..", "..", "..", "shared", "eval", "locomo-dev.json"), "/work/shared/eval/locomo-dev.json"}

// TestLoCoMoDev runs the whole evaluation on LoCoMo's development split.
// It skips when the file is absent, unless AGENTMEM_REQUIRE_EVAL_DATA=1
// (CI), which makes the absence a failure.
func TestLoCoMoDev(t *testing.T) {
	path, err := findData(devData)
	if err != nil {
		if os.Getenv("AGENTMEM_REQUIRE_EVAL_DATA") == "1" {
			t.Fatalf("AGENTMEM_REQUIRE_EVAL_DATA=1: %v", err)
		}
		t.Skip(err)
	}
	code, out, errOut := runCmd(t, "-data", path, "-quiet")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if !strings.Contains(out, "5 conversations, 2760 turns, 999 questions (993 scored, 6 skipped)") {
		t.Errorf("unexpected counts:\n%s", out)
	}
	last := lastLine(out)
	if !summaryLine.MatchString(last) {
		t.Fatalf("last line %q is not a summary", last)
	}
	if strings.Contains(last, "hit@20=0.000") {
		t.Errorf("no question's evidence was recalled: %s", last)
	}
	t.Log("\n" + out)
}

// TestQdrantStore checks the qdrant driver's opener: two conversations
// get stores of their own on the one in-process server, each answering
// a text search over its own records only.
func TestQdrantStore(t *testing.T) {
	ctx := context.Background()
	c := mini(t).Conversations[0]
	var stores []textStore
	for range 2 {
		st, err := openQdrant(ctx, "conv-x", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		stores = append(stores, st)
	}
	for _, rec := range Records(c) {
		if err := stores[0].Add(ctx, rec.Identity, rec); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := stores[0].SearchText(ctx, Identity(c), recallQuery, "who said hello?", Depth)
	if err != nil || len(ms) == 0 || ms[0].Record.Metadata[diaKey] != "D1:1" {
		t.Errorf("search found %v, %v; want D1:1 first", ms, err)
	}
	if ms, err := stores[1].SearchText(ctx, Identity(c), recallQuery, "who said hello?", Depth); err != nil || len(ms) != 0 {
		t.Errorf("the second conversation's store found %v, %v; want nothing: it holds no records", ms, err)
	}
}
