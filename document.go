package memory

import (
	"encoding/json"
	"unicode/utf8"
)

// MaxDocumentBytes is the largest JSON payload (memory_json) of one keyed
// working-memory document: the content limit of every record, 1 MiB.
const MaxDocumentBytes = MaxContentBytes

// CheckJSON validates the JSON payload of a document (KindDocument): at
// most MaxDocumentBytes, valid UTF-8, and one valid JSON value (RFC 8259)
// whose strings hold only characters every driver can store. PostgreSQL's
// jsonb, which the postgres driver keeps documents in, refuses the escape
// \u0000 and escapes of unpaired UTF-16 surrogates (such as a lone
// \ud800), so no driver accepts them: a document stored by one driver can
// be moved to any other. It reports ErrTooLarge or ErrInvalidArgument.
// Record.Validate applies it to every document.
func CheckJSON(payload string) error {
	if len(payload) > MaxDocumentBytes {
		return Errorf(ErrTooLarge, "JSON payload is %d bytes, the limit is %d", len(payload), MaxDocumentBytes)
	}
	if !utf8.ValidString(payload) {
		return Errorf(ErrInvalidArgument, "JSON payload is not valid UTF-8")
	}
	if !json.Valid([]byte(payload)) {
		var v any
		err := json.Unmarshal([]byte(payload), &v) // for the position and reason
		if err == nil {
			return Errorf(ErrInvalidArgument, "JSON payload is not valid JSON")
		}
		return Errorf(ErrInvalidArgument, "JSON payload is not valid JSON: %v", err)
	}
	return checkJSONEscapes(payload)
}

// checkJSONEscapes refuses \u0000 and unpaired surrogate escapes in a
// valid JSON text. In valid JSON a backslash occurs only inside strings,
// each one starting an escape, so the text can be scanned escape by
// escape without tracking strings.
func checkJSONEscapes(s string) error {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		i++ // the escaped character; valid JSON has one
		if s[i] != 'u' {
			continue
		}
		u := hex4(s[i+1 : i+5])
		i += 4
		switch {
		case u == 0:
			return Errorf(ErrInvalidArgument, "JSON payload contains the escape \\u0000, which PostgreSQL's jsonb cannot store")
		case u >= 0xDC00 && u <= 0xDFFF:
			return Errorf(ErrInvalidArgument, "JSON payload contains a low surrogate escape \\u%04x without a high surrogate before it", u)
		case u >= 0xD800 && u <= 0xDBFF:
			if i+2 >= len(s) || s[i+1] != '\\' || s[i+2] != 'u' {
				return Errorf(ErrInvalidArgument, "JSON payload contains a high surrogate escape \\u%04x without a low surrogate after it", u)
			}
			if lo := hex4(s[i+3 : i+7]); lo < 0xDC00 || lo > 0xDFFF {
				return Errorf(ErrInvalidArgument, "JSON payload contains a high surrogate escape \\u%04x without a low surrogate after it", u)
			}
			i += 6
		}
	}
	return nil
}

// hex4 decodes four hexadecimal digits, which valid JSON guarantees after
// \u.
func hex4(h string) int {
	n := 0
	for i := 0; i < 4; i++ {
		c := h[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		n = n<<4 | int(c)
	}
	return n
}
