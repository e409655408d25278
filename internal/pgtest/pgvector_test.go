package pgtest

import (
	"database/sql"
	"os"
	"strings"
	"testing"
)

// TestPgvectorExtension checks that the clusters can load pgvector, as
// they can when AGENTMEM_PG_BIN points at the prefix scripts/pgvector-prefix
// builds. Under AGENTMEM_REQUIRE_SERVERS a missing extension fails.
func TestPgvectorExtension(t *testing.T) {
	c := ForTest(t)
	db, err := sql.Open("postgres", c.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE EXTENSION vector"); err != nil {
		if strings.Contains(err.Error(), `extension "vector" is not available`) && os.Getenv(RequireEnv) == "" {
			t.Skipf("pgvector is not installed for this server (%v); set %s to the bin directory scripts/pgvector-prefix prints", err, BinEnv)
		}
		t.Fatal(err)
	}
	var distance float64
	if err := db.QueryRow("SELECT '[1,2,3]'::vector <-> '[1,2,5]'::vector").Scan(&distance); err != nil {
		t.Fatal(err)
	}
	if distance != 2 {
		t.Errorf("L2 distance = %v, want 2", distance)
	}
}
