package tiers

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/osfile"
)

// vectorEntry is what the index knows of one entry file: enough to scope,
// order, budget and search it without opening the file.
type vectorEntry struct {
	name    string          // file name in the directory
	created int64           // unix nanoseconds, from the name
	who     memory.Identity // the writer's whole identity
	key     string          // "<workflow>/<step>"
	tokens  int             // token count of the text, counted once at Save
	text    string          // the entry's one-line text, as its file holds it
}

// entryCounter orders the names one process makes within one nanosecond.
var entryCounter atomic.Uint32

// Entry file names: a zero-padded 19-digit unix-nanosecond timestamp, a
// process-wide counter and 64 random bits, all fixed width, so names sort
// by time and two writers never pick the same one.
const (
	entryNameSuffix = ".txt"
	entryNameLen    = 19 + 1 + 8 + 1 + 16 + len(entryNameSuffix)
)

// newEntryName returns a fresh entry file name for time t.
func newEntryName(t time.Time) (string, error) {
	ns, ok := memory.UnixNanos(t)
	if !ok || ns < 0 {
		return "", memory.Errorf(memory.ErrInvalidArgument, "vector entry time %s is outside the years 1970 to 2262", t.Format(time.RFC3339))
	}
	var r [8]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails on supported platforms
	return fmt.Sprintf("%019d-%08x-%s%s", ns, entryCounter.Add(1), hex.EncodeToString(r[:]), entryNameSuffix), nil
}

// lowerHex marks the bytes of lower-case hexadecimal digits.
var lowerHex = func() (t [256]bool) {
	for _, c := range "0123456789abcdef" {
		t[c] = true
	}
	return t
}()

// parseEntryName returns the timestamp of a well-formed entry file name.
func parseEntryName(name string) (int64, bool) {
	if len(name) != entryNameLen || !strings.HasSuffix(name, entryNameSuffix) || name[19] != '-' || name[28] != '-' {
		return 0, false
	}
	var ns uint64 // 19 digits never overflow it
	for i := 0; i < 19; i++ {
		if name[i] < '0' || name[i] > '9' {
			return 0, false
		}
		ns = ns*10 + uint64(name[i]-'0')
	}
	for i := 20; i < 45; i++ {
		if !lowerHex[name[i]] && i != 28 {
			return 0, false
		}
	}
	if ns > math.MaxInt64 {
		return 0, false
	}
	return int64(ns), true
}

// The entry file format: a magic line, one "name=value" line per identity
// field, the key and the token count, a blank line, then the text.
const entryMagic = "agentmem-vector-entry 1"

var entryFields = []struct {
	name string
	f    memory.Field
}{
	{"tenant", memory.FieldTenant},
	{"user", memory.FieldUser},
	{"agent", memory.FieldAgent},
	{"instance", memory.FieldInstance},
	{"squad", memory.FieldSquad},
	{"session", memory.FieldSession},
}

// encodeEntry returns the contents of e's file.
func encodeEntry(e vectorEntry) []byte {
	var b strings.Builder
	b.WriteString(entryMagic)
	b.WriteByte('\n')
	for _, f := range entryFields {
		b.WriteString(f.name)
		b.WriteByte('=')
		b.WriteString(e.who.Get(f.f))
		b.WriteByte('\n')
	}
	b.WriteString("key=")
	b.WriteString(e.key)
	b.WriteString("\ntokens=")
	b.WriteString(strconv.Itoa(e.tokens))
	b.WriteString("\n\n")
	b.WriteString(e.text)
	b.WriteByte('\n')
	return []byte(b.String())
}

// decodeEntry parses the file called name; ok is false when it is not an
// entry file this package wrote.
func decodeEntry(name string, data []byte) (e vectorEntry, text string, ok bool) {
	created, ok := parseEntryName(name)
	if !ok {
		return e, "", false
	}
	e.name, e.created = name, created
	s := string(data)
	head, body, found := strings.Cut(s, "\n\n")
	if !found || !strings.HasSuffix(body, "\n") {
		return e, "", false
	}
	lines := strings.Split(head, "\n")
	if len(lines) != 1+len(entryFields)+2 || lines[0] != entryMagic {
		return e, "", false
	}
	vals := make([]string, 0, len(lines)-1)
	names := append(entryFieldNames(), "key", "tokens")
	for i, l := range lines[1:] {
		v, found := strings.CutPrefix(l, names[i]+"=")
		if !found {
			return e, "", false
		}
		vals = append(vals, v)
	}
	e.who = identityOf(vals[:len(entryFields)])
	e.key = vals[len(entryFields)]
	n, err := strconv.Atoi(vals[len(entryFields)+1])
	if err != nil || n < 0 {
		return e, "", false
	}
	e.tokens = n
	e.text = strings.TrimSuffix(body, "\n")
	if strings.ContainsAny(e.text, "\t\n") {
		return e, "", false
	}
	return e, e.text, true
}

func entryFieldNames() []string {
	out := make([]string, len(entryFields))
	for i, f := range entryFields {
		out[i] = f.name
	}
	return out
}

// identityOf builds an Identity from values in entryFields order.
func identityOf(vals []string) memory.Identity {
	return memory.Identity{Tenant: vals[0], User: vals[1], Agent: vals[2], Instance: vals[3], Squad: vals[4], Session: vals[5]}
}

// readEntry reads e's file and returns its text. The file must agree with
// the index about who wrote it; ok is false when the file is gone (pruned
// by another process, or never renamed into place by a writer that
// crashed).
func readEntry(dir string, e vectorEntry) (text string, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, e.name))
	if os.IsNotExist(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fsError(err, "reading vector entry "+e.name)
	}
	got, text, valid := decodeEntry(e.name, data)
	if !valid || got.who != e.who {
		return "", false, memory.Errorf(memory.ErrConflict, "vector entry %s does not match the index", e.name)
	}
	return text, true, nil
}

// tempName returns 96 random bits in hex: index headers carry the first
// 64 of them.
func tempName() string {
	var r [12]byte
	_, _ = rand.Read(r[:])
	return hex.EncodeToString(r[:])
}

// fsError classifies a file-system error with the memory sentinel it
// belongs to; see osfile.Classify.
func fsError(err error, msg string) error { return osfile.Classify(err, msg) }
