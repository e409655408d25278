package tokens

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// The Go reference: github.com/pkoukk/tiktoken-go, a port of tiktoken
// that runs the encodings' own patterns through a backtracking regular
// expression engine (dlclark/regexp2) and merges with tiktoken's
// algorithm. Checked against OpenAI's tiktoken on the golden inputs, it
// differs only on code points that Go's unicode package does not know
// (newer than its Unicode version), so comparisons with it skip texts
// that hold such code points (knownToGo). It is quadratic in the length
// of a piece, so it is only given short texts.

var (
	refOnce sync.Once
	refEnc  map[string]*tiktoken.Tiktoken
)

// refCount returns the Go reference's count of text in the named encoding.
func refCount(t testing.TB, name, text string) int {
	t.Helper()
	refOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		refEnc = map[string]*tiktoken.Tiktoken{}
		for _, n := range Names() {
			e, err := tiktoken.GetEncoding(n)
			if err != nil {
				panic(err)
			}
			refEnc[n] = e
		}
	})
	return len(refEnc[name].EncodeOrdinary(text))
}

// knownToGo reports whether every code point of text has the same classes
// in Go's unicode package as in this package's tables, so that the Go
// reference splits it as tiktoken does.
func knownToGo(text string) bool {
	for _, r := range text {
		if r >= 0x80 && goClassOf(r) != tableClassOf(r) {
			return false
		}
	}
	return true
}

// locomoPath finds the LoCoMo dev split: $AGENTMEM_LOCOMO, or
// shared/eval/locomo-dev.json in a directory above this one (the
// repository's parent holds shared/).
func locomoPath() string {
	if p := os.Getenv("AGENTMEM_LOCOMO"); p != "" {
		return p
	}
	dir, _ := filepath.Abs(".")
	for {
		p := filepath.Join(dir, "shared", "eval", "locomo-dev.json")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
}

// locomoTurns returns the text of every turn of the LoCoMo dev
// conversations, read at run time; the test is skipped when the file is
// absent.
func locomoTurns(t testing.TB) []string {
	t.Helper()
	p := locomoPath()
	if p == "" {
		t.Skip("LoCoMo dev split not found: set AGENTMEM_LOCOMO or put shared/eval/locomo-dev.json above the repository")
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var samples []struct {
		Conversation map[string]json.RawMessage `json:"conversation"`
	}
	if err := json.Unmarshal(data, &samples); err != nil {
		t.Fatal(err)
	}
	var turns []string
	for _, s := range samples {
		for _, v := range s.Conversation {
			var session []struct {
				Text string `json:"text"`
			}
			if json.Unmarshal(v, &session) != nil {
				continue // speaker names and dates
			}
			for _, turn := range session {
				turns = append(turns, turn.Text)
			}
		}
	}
	if len(turns) == 0 {
		t.Fatalf("%s holds no turns", p)
	}
	return turns
}
