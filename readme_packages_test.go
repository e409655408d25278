package memory_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadmePackageTable checks that the README's "What is here" table
// names every package of the module, and only packages that exist, so
// the table matches the tree.
func TestReadmePackageTable(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "## What is here")
	if start < 0 {
		t.Fatal(`README.md has no "## What is here" section`)
	}
	section := text[start:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	// The first column names one package or several, each in backticks.
	cell := regexp.MustCompile("(?m)^\\| ([^|]+) \\|")
	name := regexp.MustCompile("`([a-z0-9/_-]+)`")
	listed := map[string]bool{}
	for _, row := range cell.FindAllStringSubmatch(section, -1) {
		for _, m := range name.FindAllStringSubmatch(row[1], -1) {
			listed[m[1]] = true
		}
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, "github.com/agentmem/memory"), "/")
		if rel == "" {
			rel = "memory"
		}
		pkgs = append(pkgs, rel)
		if !listed[rel] {
			t.Errorf("package %s is not in the README's package table", rel)
		}
	}
	for p := range listed {
		if !slices.Contains(pkgs, p) {
			t.Errorf("the README's package table names %s, which is not a package of the module", p)
		}
	}
}
