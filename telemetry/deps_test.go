package telemetry_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies checks the package documentation's promise: the
// packages a program uses without telemetry link no OpenTelemetry code;
// only this package (and what imports it) does.
func TestDependencies(t *testing.T) {
	for _, pkg := range []string{"..", "../tiers/tiered", "../extract", "../backend"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, p := range strings.Fields(string(out)) {
			if strings.HasPrefix(p, "go.opentelemetry.io/") {
				t.Errorf("%s imports %s", pkg, p)
			}
		}
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if !strings.Contains(string(out), "go.opentelemetry.io/otel/metric\n") {
		t.Error("go list -deps does not show the otel metric API, which telemetry imports: the check cannot see dependencies")
	}
}
