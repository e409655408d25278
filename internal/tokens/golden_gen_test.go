//go:build golden

package tokens

// Regenerates testdata/golden.json from OpenAI's tiktoken. It needs Node.js
// and the npm package tiktoken installed outside the repository:
//
//	mkdir -p /tmp/tiktoken-js && (cd /tmp/tiktoken-js && npm install tiktoken@1.0.22)
//	TIKTOKEN_JS=/tmp/tiktoken-js go test -tags golden -run TestGenerateGolden ./internal/tokens/

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// countJS counts texts with tiktoken through Node.js; it returns the
// counts per text for cl100k_base and o200k_base, and tiktoken's version.
func countJS(t *testing.T, texts []string) ([][2]int, string) {
	dir := os.Getenv("TIKTOKEN_JS")
	if dir == "" {
		t.Skip("TIKTOKEN_JS names no directory with node_modules/tiktoken")
	}
	in := filepath.Join(t.TempDir(), "in.json")
	out := filepath.Join(t.TempDir(), "out.json")
	data, err := json.Marshal(texts)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, data, 0o600); err != nil {
		t.Fatal(err)
	}
	const script = `
const fs = require("fs");
const { get_encoding } = require("tiktoken");
const cl = get_encoding("cl100k_base"), o = get_encoding("o200k_base");
const texts = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
fs.writeFileSync(process.argv[2], JSON.stringify(texts.map(s => [cl.encode_ordinary(s).length, o.encode_ordinary(s).length])));
const path = require("path");
console.log(JSON.parse(fs.readFileSync(path.join(path.dirname(require.resolve("tiktoken")), "package.json"), "utf8")).version);
`
	cmd := exec.Command("node", "-e", script, in, out)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	cmd.Stderr = os.Stderr
	version, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	data, err = os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var counts [][2]int
	if err := json.Unmarshal(data, &counts); err != nil {
		t.Fatal(err)
	}
	return counts, strings.TrimSpace(string(version))
}

func TestGenerateGolden(t *testing.T) {
	cases := goldenCases()
	texts := make([]string, len(cases))
	for i, c := range cases {
		texts[i] = c.text
	}
	counts, version := countJS(t, texts)
	g := golden{Reference: "npm tiktoken " + version + " (encode_ordinary)"}
	for i, c := range cases {
		g.Cases = append(g.Cases, goldenCase{Name: c.name, SHA256: textHash(c.text), Cl100k: counts[i][0], O200k: counts[i][1]})
	}
	data, err := json.MarshalIndent(g, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goldenFile, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d cases to %s", len(cases), goldenFile)
}
