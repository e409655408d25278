// Command lead-pipeline shows keyed JSON working memory on the embedded
// default: one SQLite file, no services.
//
//	go run ./examples/lead-pipeline
//
// A lead-generation squad runs two steps. The keyword agent writes the
// run's search keywords and the domains it found as squad memory
// (SQUAD_AGENT rows); the outreach agent, another instance in the same
// squad, finds them through the squad listing, the way a workspace's
// pipeline UI does, and writes its organisations. Both count the squad's
// runs in one document updated with compare-and-swap.
//
// Then the AI Opportunity Analyst loads its live-chat vendor fingerprints
// (memory_key live_chat_vendors, AGENT scope): platform defaults seeded
// under the system tenant by an administrative store (its posture allows
// platform writes; the tenants' store cannot write them), merged on read
// with the tenant acme's override,
// which adds one vendor and changes another, and detects the vendors on a
// prospect's page. AGENT rows never appear in squad listings.
//
// Set AGENTMEM_DB to choose the database file; delete it to start over.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/tiers/working"
)

func main() {
	path, err := databasePath()
	if err == nil {
		err = run(context.Background(), os.Stdout, path, fmt.Sprintf("run-%d", time.Now().UnixNano()))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "lead-pipeline:", err)
		os.Exit(1)
	}
}

// The identities a host program would set from verified credentials.
const (
	tenant        = "acme"
	squad         = "lead-gen"
	keywordAgent  = "kaos://agent/leads/keyword-researcher"
	outreachAgent = "kaos://agent/leads/outreach-writer"
	analystAgent  = "kaos://agent/sales/opportunity-analyst"
)

// vendor is one live-chat vendor fingerprint.
type vendor struct {
	ID      string   `json:"id"`
	Label   string   `json:"label"`
	Signals []string `json:"signals"`
}

// Platform defaults, seeded once under the system tenant, and acme's
// override: a vendor of its own, and Tidio's EU script host added.
var (
	platformVendors = []vendor{
		{"intercom", "Intercom", []string{"widget.intercom.io"}},
		{"tidio", "Tidio", []string{"code.tidio.co"}},
		{"hubspot", "HubSpot", []string{"js.hs-scripts.com"}},
		{"primepilot", "PrimePilot", []string{"chat.primepilot.ai"}},
	}
	acmeVendors = []vendor{
		{"tidio", "Tidio (EU)", []string{"code.tidio.co", "eu.tidio.co"}},
		{"acmechat", "Acme Chat", []string{"chat.acme.example"}},
	}
)

// prospectPage is the HTML the analyst inspects.
const prospectPage = `<html><head>
<script src="https://eu.tidio.co/widget.js"></script>
<script src="https://chat.acme.example/embed.js"></script>
</head><body>Welcome</body></html>`

func run(ctx context.Context, out io.Writer, path, runID string) error {
	fmt.Fprintln(out, "Memory file:", path)
	driver, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		return err
	}
	store := backend.NewStore(driver, backend.StoreOptions{})
	defer store.Close()
	mem, err := working.New(store, working.Options{})
	if err != nil {
		return err
	}
	// The platform's own program seeds the defaults every tenant reads;
	// it shares the driver, with a posture that allows platform writes.
	admin, err := working.New(backend.NewStore(driver, backend.StoreOptions{Posture: memory.Posture{AllowPlatform: true}}), working.Options{})
	if err != nil {
		return err
	}
	mem.RegisterMerge("live_chat_vendors", working.MergeListByID("id"))

	keywords := memory.Identity{Tenant: tenant, Agent: keywordAgent, Instance: "ta-keywords", Squad: squad, Session: runID}
	outreach := memory.Identity{Tenant: tenant, Agent: outreachAgent, Instance: "ta-outreach", Squad: squad, Session: runID}

	// Step 1: the keyword agent saves its results as durable pipeline state.
	fmt.Fprintf(out, "\nStep 1 (%s): saving keywords and domains\n", keywords.Instance)
	if err := put(ctx, mem, keywords, memory.LevelSquadAgent, "keywords", "working", []string{"live chat software", "support widget"}); err != nil {
		return err
	}
	if err := put(ctx, mem, keywords, memory.LevelSquadAgent, "domains", "domain", []string{"northwind.example", "contoso.example"}); err != nil {
		return err
	}
	if err := countRun(ctx, mem, keywords); err != nil {
		return err
	}

	// Step 2: the outreach agent reads them through the squad listing.
	fmt.Fprintf(out, "\nStep 2 (%s): reading the squad's memory\n", outreach.Instance)
	rows, err := mem.ListSquad(ctx, outreach, "")
	if err != nil {
		return err
	}
	var domains []string
	for _, r := range rows {
		fmt.Fprintf(out, "  %-12s %-12s %-13s %s\n", r.Level, r.Type, r.Key, r.JSON)
		if r.Key == "domains" {
			if err := json.Unmarshal(r.JSON, &domains); err != nil {
				return err
			}
		}
	}
	if len(domains) == 0 {
		return errors.New("step 2 found no domains in the squad's memory")
	}
	orgs := make([]map[string]string, len(domains))
	for i, d := range domains {
		name, _, _ := strings.Cut(d, ".")
		orgs[i] = map[string]string{"domain": d, "name": strings.ToUpper(name[:1]) + name[1:]}
	}
	if err := put(ctx, mem, outreach, memory.LevelSquadAgent, "organizations", "organization", orgs); err != nil {
		return err
	}
	fmt.Fprintf(out, "  wrote %d organisation(s)\n", len(orgs))

	// The AI Opportunity Analyst: platform defaults and acme's override.
	fmt.Fprintln(out, "\nOpportunity analyst: live-chat vendor fingerprints")
	if err := seed(ctx, admin, analystAgent, platformVendors); err != nil {
		return err
	}
	analyst := memory.Identity{Tenant: tenant, Agent: analystAgent, Instance: "ta-analyst", Squad: squad, Session: runID}
	if err := put(ctx, mem, analyst, memory.LevelParentAgent, "live_chat_vendors", "domain", acmeVendors); err != nil {
		return err
	}
	merged, err := mem.LoadMerged(ctx, analyst, "live_chat_vendors")
	if err != nil {
		return err
	}
	var vendors []vendor
	if err := json.Unmarshal(merged.JSON, &vendors); err != nil {
		return err
	}
	fmt.Fprintf(out, "  %d platform default(s) (version %d), %d tenant override(s) (version %d), %d merged:\n",
		len(platformVendors), merged.Defaults.Version, len(acmeVendors), merged.Override.Version, len(vendors))
	for _, v := range vendors {
		found := slices.ContainsFunc(v.Signals, func(s string) bool { return strings.Contains(prospectPage, s) })
		mark := " "
		if found {
			mark = "*"
		}
		fmt.Fprintf(out, "  %s %-10s %-11s %s\n", mark, v.ID, v.Label, strings.Join(v.Signals, ", "))
	}
	fmt.Fprintln(out, "  (* found on the prospect's page)")

	// AGENT rows are shared agent data, not squad pipeline state.
	rows, err = mem.ListSquad(ctx, analyst, "")
	if err != nil {
		return err
	}
	agentRows := slices.ContainsFunc(rows, func(d working.Document) bool { return d.Level == memory.LevelParentAgent })
	fmt.Fprintf(out, "\nSquad listing: %d row(s), AGENT rows among them: %v\n", len(rows), agentRows)
	runs, err := mem.Get(ctx, keywords, memory.LevelSquad, "pipeline_runs")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Pipeline runs so far in squad %s: %s\n", squad, runs.JSON)
	return nil
}

// put stores v as JSON under key at level.
func put(ctx context.Context, mem *working.Memory, id memory.Identity, level memory.Level, key, memoryType string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = mem.Put(ctx, id, working.Document{Level: level, Key: key, Type: memoryType, JSON: b})
	return err
}

// seed writes the platform's vendor list for agent as its defaults unless
// an earlier run did.
func seed(ctx context.Context, admin *working.Memory, agent string, vendors []vendor) error {
	_, err := admin.GetDefault(ctx, agent, "live_chat_vendors")
	if !errors.Is(err, memory.ErrNotFound) {
		return err // seeded already, or the read failed
	}
	b, err := json.Marshal(vendors)
	if err != nil {
		return err
	}
	_, err = admin.PutDefault(ctx, agent, working.Document{Key: "live_chat_vendors", Type: "domain", JSON: b})
	return err
}

// countRun adds one to the squad's run counter, a SQUAD row every agent of
// the squad may update.
func countRun(ctx context.Context, mem *working.Memory, id memory.Identity) error {
	_, err := mem.Update(ctx, id, memory.LevelSquad, "pipeline_runs", "working", func(cur working.Document, found bool) (json.RawMessage, error) {
		var n int
		if found {
			if err := json.Unmarshal(cur.JSON, &n); err != nil {
				return nil, err
			}
		}
		return json.Marshal(n + 1)
	})
	return err
}

// databasePath is $AGENTMEM_DB, or lead-pipeline.db in the user's cache
// directory (the system temp directory when there is none).
func databasePath() (string, error) {
	if p := os.Getenv("AGENTMEM_DB"); p != "" {
		return p, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "agentmem")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return filepath.Join(dir, "lead-pipeline.db"), nil
}
