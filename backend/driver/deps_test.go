package driver_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The packages a driver must not depend on: Store and what it brings.
var storePackages = []string{
	"github.com/agentmem/memory/backend",
	"github.com/agentmem/memory/internal/tokens",
}

// TestDriversImportNoStore checks, with go list -deps, that the drivers
// depend on the contract and not on backend.Store or its token counter,
// so a program that uses a driver directly links neither. As a check of
// the check, the tiers package, which builds on Store, must show both.
func TestDriversImportNoStore(t *testing.T) {
	for _, pkg := range []string{"inmem", "sqlite", "postgres", "fs", "configmap", "qdrant"} {
		pkg = "github.com/agentmem/memory/backend/" + pkg
		deps := listDeps(t, pkg)
		if !slices.Contains(deps, "github.com/agentmem/memory/backend/driver") {
			t.Errorf("go list -deps of %s does not show backend/driver, which it implements", pkg)
		}
		for _, bad := range storePackages {
			if slices.Contains(deps, bad) {
				t.Errorf("%s depends on %s", pkg, bad)
			}
		}
	}
	deps := listDeps(t, "github.com/agentmem/memory/tiers")
	for _, want := range storePackages {
		if !slices.Contains(deps, want) {
			t.Errorf("go list -deps of tiers does not show %s, which it uses: the check cannot see it", want)
		}
	}
}

// listDeps returns pkg's non-test dependencies.
func listDeps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, stderr)
	}
	return strings.Fields(string(out))
}
