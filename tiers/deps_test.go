package tiers_test

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// kubernetesPrefixes are the import paths of Kubernetes code.
var kubernetesPrefixes = []string{"k8s.io/", "sigs.k8s.io/"}

// TestMemoryTypesImportNoKubernetes checks, with go list -deps, that
// importing the memory types pulls in no Kubernetes package: the
// spec.memory machinery that needs them is package tiers/agentspec's
// alone. As a check of the check, agentspec's own dependencies must show
// the Kubernetes packages it uses.
func TestMemoryTypesImportNoKubernetes(t *testing.T) {
	for _, pkg := range []string{
		"github.com/agentmem/memory/tiers",
		"github.com/agentmem/memory/tiers/working",
		"github.com/agentmem/memory/tiers/vectortool",
	} {
		deps := kubernetesDeps(t, pkg)
		if len(deps) == 0 {
			continue
		}
		t.Errorf("%s depends on %d Kubernetes packages", pkg, len(deps))
		for _, dep := range slices.Sorted(maps.Keys(deps)) {
			if importers := deps[dep]; len(importers) > 0 {
				t.Errorf("  %s is imported by %s", dep, strings.Join(importers, ", "))
			}
		}
	}
	spec := kubernetesDeps(t, "github.com/agentmem/memory/tiers/agentspec")
	for _, want := range []string{"sigs.k8s.io/yaml", "k8s.io/apimachinery/pkg/util/validation"} {
		if _, ok := spec[want]; !ok {
			t.Errorf("go list -deps of tiers/agentspec does not show %s, which it imports: the check cannot see Kubernetes packages", want)
		}
	}
}

// kubernetesDeps returns the Kubernetes packages among pkg's non-test
// dependencies, each with the packages outside Kubernetes that import it.
func kubernetesDeps(t *testing.T, pkg string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, pkg).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, stderr)
	}
	isKubernetes := func(p string) bool {
		return slices.ContainsFunc(kubernetesPrefixes, func(prefix string) bool { return strings.HasPrefix(p, prefix) })
	}
	found := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if isKubernetes(fields[0]) {
			if _, ok := found[fields[0]]; !ok {
				found[fields[0]] = nil
			}
			continue
		}
		for _, imp := range fields[1:] {
			if isKubernetes(imp) {
				found[imp] = append(found[imp], fields[0])
			}
		}
	}
	return found
}
