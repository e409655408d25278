package qdrant

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/memory"
)

// A point's payload key fRecord holds its record, less the vector, in
// one string: reading a record is then one payload value to decode
// rather than one per field, which is most of a search's time in the
// client (protobuf maps of Values are costly to decode). The string is
// recordFormat and then the record's fields in this order, each as its
// length in bytes, in decimal, a ':' and its bytes:
//
//	id, kind, label, key, content, metadata, created, expires, tokens, version,
//	tenant, user, agent, instance, squad, session
//
// created and expires are unix nanoseconds in decimal (expires "" when
// the record never expires), tokens and version decimal integers, and
// metadata its keys and values in key order, each again a length, ':'
// and bytes. Every part is valid UTF-8, as Qdrant's strings must be: the
// record's strings are (memory.Record.Validate) and the rest is ASCII.
const recordFormat = "1|"

// recordFieldCount is how many fields a record string holds.
const recordFieldCount = 16

// appendField appends one length-prefixed field.
func appendField(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
}

// encodeRecord returns the record string of r stored at version.
func encodeRecord(r memory.Record, version int64) string {
	created, _ := memory.UnixNanos(r.Created) // Validate checked the range
	expires := ""
	if !r.Expires.IsZero() {
		exp, _ := memory.UnixNanos(r.Expires)
		expires = strconv.FormatInt(exp, 10)
	}
	var meta []byte
	if len(r.Metadata) > 0 {
		keys := make([]string, 0, len(r.Metadata))
		for k := range r.Metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			meta = appendField(appendField(meta, k), r.Metadata[k])
		}
	}
	n := len(recordFormat) + len(r.ID) + len(r.Kind) + len(r.Label) + len(r.Key) + len(r.Content) + len(meta) + 80 + 16*8
	b := make([]byte, 0, n)
	b = append(b, recordFormat...)
	for _, s := range [...]string{r.ID, string(r.Kind), r.Label, r.Key, r.Content, string(meta),
		strconv.FormatInt(created, 10), expires, strconv.Itoa(r.Tokens), strconv.FormatInt(version, 10)} {
		b = appendField(b, s)
	}
	for _, f := range identityFields {
		b = appendField(b, r.Identity.Get(f.f))
	}
	return string(b)
}

// fieldReader reads length-prefixed fields from a string.
type fieldReader struct {
	s   string
	bad bool
}

// next returns the next field; on a malformed one it sets bad and
// returns "".
func (fr *fieldReader) next() string {
	colon := strings.IndexByte(fr.s, ':')
	if colon <= 0 || colon > 10 { // at most ten digits: 1e10 bytes is more than any string
		fr.bad = true
		return ""
	}
	n := 0
	for _, c := range []byte(fr.s[:colon]) {
		if c < '0' || c > '9' {
			fr.bad = true
			return ""
		}
		n = n*10 + int(c-'0')
	}
	if (colon > 1 && fr.s[0] == '0') || n > len(fr.s)-colon-1 {
		fr.bad = true
		return ""
	}
	out := fr.s[colon+1 : colon+1+n]
	fr.s = fr.s[colon+1+n:]
	return out
}

// number returns the next field as a decimal integer, written as
// strconv writes it (no sign but '-', no leading zeros), so that one
// record has one string.
func (fr *fieldReader) number() int64 {
	return fr.parse(fr.next())
}

// parse returns s as a decimal integer written as strconv writes it.
func (fr *fieldReader) parse(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || strconv.FormatInt(n, 10) != s {
		fr.bad = true
	}
	return n
}

// decodeRecord reverses encodeRecord; ok is false for any string it did
// not make. The record has no vector: that is a payload key of its own.
func decodeRecord(s string) (r memory.Record, ok bool) {
	if !strings.HasPrefix(s, recordFormat) {
		return memory.Record{}, false
	}
	fr := &fieldReader{s: s[len(recordFormat):]}
	r.ID = fr.next()
	r.Kind = memory.Kind(fr.next())
	r.Label = fr.next()
	r.Key = fr.next()
	r.Content = fr.next()
	if meta := fr.next(); meta != "" {
		mr := &fieldReader{s: meta}
		r.Metadata = map[string]string{}
		prev := ""
		for first := true; mr.s != "" && !mr.bad; first = false {
			k := mr.next()
			if !first && k <= prev { // keys in order, once each
				mr.bad = true
			}
			r.Metadata[k], prev = mr.next(), k
		}
		fr.bad = fr.bad || mr.bad
	}
	r.Created = time.Unix(0, fr.number()).UTC()
	if exp := fr.next(); exp != "" {
		r.Expires = time.Unix(0, fr.parse(exp)).UTC()
	}
	r.Tokens = int(fr.number())
	r.Version = fr.number()
	for _, f := range identityFields {
		r.Identity = r.Identity.With(f.f, fr.next())
	}
	if fr.bad || fr.s != "" {
		return memory.Record{}, false
	}
	return r, true
}
