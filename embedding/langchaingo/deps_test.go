package langchaingo_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies checks the package documentation's promise: of this
// module the adapter links memory only, and of langchaingo its embeddings
// package (and what that imports) only.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		switch {
		case p == "github.com/agentmem/memory":
		case strings.HasPrefix(p, "github.com/agentmem/memory/"):
			if p != "github.com/agentmem/memory/embedding/langchaingo" {
				t.Errorf("the adapter imports %s", p)
			}
		case strings.HasPrefix(p, "github.com/tmc/langchaingo/"):
			if p != "github.com/tmc/langchaingo/embeddings" && !strings.HasPrefix(p, "github.com/tmc/langchaingo/internal/") {
				t.Errorf("the adapter imports %s", p)
			}
		case strings.Contains(strings.Split(p, "/")[0], "."):
			t.Errorf("the adapter imports %s, outside this module and langchaingo", p)
		}
	}
}
