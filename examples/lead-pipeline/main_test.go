package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunTwice runs the example twice on one database file, as a user
// running the command twice would, and checks what each run prints.
func TestRunTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lead-pipeline.db")
	var outs [2]string
	for i := range outs {
		var b bytes.Buffer
		if err := run(context.Background(), &b, path, []string{"run-1", "run-2"}[i]); err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, b.String())
		}
		outs[i] = b.String()
	}
	for i, out := range outs {
		for _, want := range []string{
			`SQUAD_AGENT  domain       domains       ["northwind.example","contoso.example"]`,
			`SQUAD_AGENT  working      keywords      ["live chat software","support widget"]`,
			"wrote 2 organisation(s)",
			"4 platform default(s) (version 1), 2 tenant override(s)",
			"5 merged:",
			"    intercom   Intercom    widget.intercom.io\n",
			"  * tidio      Tidio (EU)  code.tidio.co, eu.tidio.co\n",
			"    primepilot PrimePilot  chat.primepilot.ai\n",
			"  * acmechat   Acme Chat   chat.acme.example\n",
			"Squad listing: 4 row(s), AGENT rows among them: false",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("run %d lacks %q:\n%s", i+1, want, out)
			}
		}
		if strings.Contains(out, "code.tidio.co\n") {
			t.Errorf("run %d shows the platform's Tidio entry, which acme overrides:\n%s", i+1, out)
		}
	}
	if !strings.Contains(outs[0], "Pipeline runs so far in squad lead-gen: 1\n") || !strings.Contains(outs[1], "Pipeline runs so far in squad lead-gen: 2\n") {
		t.Errorf("the run counter does not count:\n%s\n%s", outs[0], outs[1])
	}
	// The second run's step 2 also sees the organisations the first wrote.
	if !strings.Contains(outs[1], `SQUAD_AGENT  organization organizations [{"domain":"northwind.example","name":"Northwind"}`) {
		t.Errorf("run 2 does not list run 1's organisations:\n%s", outs[1])
	}
}
