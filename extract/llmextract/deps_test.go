package llmextract_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies checks the package documentation's promise: of this
// module llmextract links memory and extract only, and of langchaingo its
// llms package (and what that imports) only.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	sawLLMs := false
	for _, p := range strings.Fields(string(out)) {
		switch {
		case p == "github.com/agentmem/memory", p == "github.com/agentmem/memory/extract", p == "github.com/agentmem/memory/extract/llmextract":
		case strings.HasPrefix(p, "github.com/agentmem/memory/"):
			t.Errorf("llmextract imports %s", p)
		case p == "github.com/tmc/langchaingo/llms":
			sawLLMs = true
		case strings.HasPrefix(p, "github.com/tmc/langchaingo/"):
			if !strings.HasPrefix(p, "github.com/tmc/langchaingo/internal/") {
				t.Errorf("llmextract imports %s", p)
			}
		}
	}
	if !sawLLMs {
		t.Error("go list -deps does not show github.com/tmc/langchaingo/llms, which llmextract imports: the check cannot see langchaingo")
	}
}
