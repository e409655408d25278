package qdrant

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
)

// A point's payload key fWrites holds its recent writes, newest first,
// each the version it wrote, the writing call's token and the wall-clock
// second it was written, as "version:token:second", joined by ';'.
// Qdrant skips a conditional write silently and reports nothing of what
// it wrote, so a writer learns whether its write was applied by reading
// the point back: its own entry there means it was, even when later
// writes have replaced the record since. Every write carries the entries
// of the point it replaces forward, less those older than historyAge, at
// most historyMax.
const (
	historyAge = 120 // seconds
	historyMax = 64
)

// write is one entry of a point's recent writes.
type write struct {
	version int64
	token   string
	second  int64
}

// newToken returns a random token naming one call's writes.
func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// formatWrites returns the payload string of ws.
func formatWrites(ws []write) string {
	var b []byte
	for i, w := range ws {
		if i > 0 {
			b = append(b, ';')
		}
		b = strconv.AppendInt(b, w.version, 10)
		b = append(b, ':')
		b = append(b, w.token...)
		b = append(b, ':')
		b = strconv.AppendInt(b, w.second, 10)
	}
	return string(b)
}

// parseWrites reverses formatWrites; ok is false for a string it did not
// make (an empty string is no writes).
func parseWrites(s string) (ws []write, ok bool) {
	if s == "" {
		return nil, true
	}
	for e := range strings.SplitSeq(s, ";") {
		v, rest, ok1 := strings.Cut(e, ":")
		tok, sec, ok2 := strings.Cut(rest, ":")
		version, err1 := strconv.ParseInt(v, 10, 64)
		second, err2 := strconv.ParseInt(sec, 10, 64)
		if !ok1 || !ok2 || err1 != nil || err2 != nil || tok == "" || strings.ContainsAny(tok, ":;") {
			return nil, false
		}
		ws = append(ws, write{version, tok, second})
	}
	return ws, true
}

// pushWrite returns w followed by the entries of ws written at most
// historyAge seconds before it, at most historyMax in all.
func pushWrite(ws []write, w write) []write {
	out := make([]write, 0, min(len(ws)+1, historyMax))
	out = append(out, w)
	for _, old := range ws {
		if len(out) == historyMax || old.second < w.second-historyAge {
			break
		}
		out = append(out, old)
	}
	return out
}

// outcome is what a point's recent writes say of a write of version by
// token.
type outcome int

const (
	// applied: the write is among them.
	applied outcome = iota
	// lost: another write took the version (or a later one, from the
	// version the write replaced): the write was skipped.
	lost
	// unknown: the entries no longer reach back to the version.
	unknown
)

// outcomeOf reads ws, a point's recent writes, for the write of version
// by token.
func outcomeOf(ws []write, version int64, token string) outcome {
	for _, w := range ws {
		if w.token == token && w.version == version {
			return applied
		}
	}
	if len(ws) == 0 || ws[0].version < version || ws[len(ws)-1].version <= version {
		// Nothing has reached the version, or the entries reach back to
		// it and it is another's.
		return lost
	}
	return unknown
}
