package extract_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies checks the package documentation's promise: extract
// links the standard library and package memory only (langchaingo stays
// in extract/llmextract).
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	sawMemory := false
	for _, p := range strings.Fields(string(out)) {
		switch {
		case p == "github.com/agentmem/memory":
			sawMemory = true
		case p == "github.com/agentmem/memory/extract":
		case strings.Contains(strings.Split(p, "/")[0], "."):
			t.Errorf("extract imports %s", p)
		}
	}
	if !sawMemory {
		t.Error("go list -deps does not show package memory, which extract imports: the check cannot see dependencies")
	}
}
