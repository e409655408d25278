package working_test

import (
	"os"
	"testing"

	_ "github.com/lib/pq"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/pgtest"
	"github.com/agentmem/memory/internal/storagetest"
	"github.com/agentmem/memory/tiers/working"
)

// workingDrivers are the drivers working memory is tested over.
var workingDrivers = storagetest.Drivers(&pgShared)

// forEachWorkingDriver runs test once per driver, each over fresh storage.
func forEachWorkingDriver(t *testing.T, test func(t *testing.T, open func() driver.Driver)) {
	storagetest.Run(t, workingDrivers, false, test)
}

// newWorking returns a Memory over a new store on d.
func newWorking(t testing.TB, d driver.Driver, opt working.Options) (*working.Memory, *backend.Store) {
	t.Helper()
	st := backend.NewStore(d, backend.StoreOptions{})
	w, err := working.New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	return w, st
}

// platformWorking returns working memory over d whose store may write
// platform defaults (Posture.AllowPlatform) under the given system
// tenant (empty: the default), as an administrative program has.
func platformWorking(t testing.TB, d driver.Driver, systemTenant string) *working.Memory {
	t.Helper()
	st := backend.NewStore(d, backend.StoreOptions{Posture: memory.Posture{AllowPlatform: true}, SystemTenant: systemTenant})
	w, err := working.New(st, working.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// pgShared is the PostgreSQL cluster working-memory tests share, started
// on first use and stopped by TestMain.
var pgShared pgtest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	pgShared.Stop()
	os.Exit(code)
}
