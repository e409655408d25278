package extract

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/agentmem/memory"
)

// digestKeys are the keys whose string is the digest when a model
// answers with a JSON object.
var digestKeys = []string{"digest", "summary", "text"}

// digestLabels are headings a model may put above a digest; a first line
// that is one of them (with or without a colon, '#' or '*') is dropped,
// and one that starts with one and a colon loses that prefix.
var digestLabels = []string{"digest", "summary", "new digest", "updated digest", "conversation digest", "rolling digest"}

// ParseDigest reads the digest in a model's reply. It takes the text of
// the first fenced code block when there is one (without its info
// string), the string under "digest", "summary" or "text" when the reply
// is a JSON object, and drops a heading such as "Digest:" or "## Summary"
// on the first line. In each line, runs of white space and control
// characters become one space, and none are kept at either end; runs of
// blank lines become one, and none are kept at either end of the digest. With maxBytes above zero, a longer digest is cut to it: after the
// last sentence or line that ends in its second half, or else at a word
// with "…".
//
// A reply over MaxReplyBytes is refused before any of it is read, with
// memory.ErrTooLarge; one that is not valid UTF-8, or has no text left,
// is memory.ErrInvalidArgument. Both wrap ErrMalformedOutput. A maxBytes
// other than zero below MinDigestBytes, which no digest might fit, is
// memory.ErrInvalidArgument.
func ParseDigest(reply string, maxBytes int) (string, error) {
	switch {
	case maxBytes != 0 && maxBytes < MinDigestBytes:
		return "", memory.Errorf(memory.ErrInvalidArgument, "extract: a digest limit of %d bytes; it must be 0 or at least %d", maxBytes, MinDigestBytes)
	case len(reply) > MaxReplyBytes:
		return "", tooLargeReply(len(reply))
	case !utf8.ValidString(reply):
		return "", Malformed("the model's reply is not valid UTF-8")
	}
	text := fencedText(reply)
	if s, ok := jsonDigest(text); ok {
		text = s
	}
	digest := tidyLines(dropHeading(text))
	if digest == "" {
		return "", Malformed("the model's digest is empty")
	}
	if maxBytes > 0 && len(digest) > maxBytes {
		digest = cutDigest(digest, maxBytes)
	}
	return digest, nil
}

// fencedText returns the body of the first fenced code block of s (see
// fencedBlock), without the opening fence's info string, or s when it has
// none.
func fencedText(s string) string {
	body, ok := fencedBlock(s)
	if !ok {
		return s
	}
	if nl := strings.IndexByte(body, '\n'); nl >= 0 {
		return body[nl+1:]
	}
	return strings.TrimLeft(body, "abcdefghijklmnopqrstuvwxyz")
}

// jsonDigest returns the digest of a reply that is a JSON object holding
// one under digestKeys.
func jsonDigest(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") {
		return "", false
	}
	rep, err := repair(s)
	if err != nil || !rep.complete {
		return "", false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(rep.json, &fields) != nil {
		return "", false
	}
	var digest string
	if raw := firstField(fields, digestKeys); raw == nil || json.Unmarshal(raw, &digest) != nil {
		return "", false
	}
	return digest, true
}

// dropHeading removes a heading from the first non-blank line of s.
func dropHeading(s string) string {
	s = strings.TrimLeft(s, " \t\r\n")
	line, rest, _ := strings.Cut(s, "\n")
	label := strings.TrimLeft(strings.TrimSpace(line), "#*_ ")
	for _, l := range digestLabels {
		if len(label) < len(l) || !strings.EqualFold(label[:len(l)], l) {
			continue
		}
		after := strings.TrimLeft(label[len(l):], "*_ ")
		switch {
		case strings.TrimRight(after, "*_: ") == "":
			return rest
		case after[0] == ':':
			return strings.TrimLeft(after[1:], "*_ ") + "\n" + rest
		}
	}
	return s
}

// tidyLines makes each line of s one line of single spaces, runs of blank
// lines one blank line, and drops blank lines at either end.
func tidyLines(s string) string {
	var b strings.Builder
	blank := false
	for line := range strings.Lines(s) {
		line = oneLine(line)
		if line == "" {
			blank = b.Len() > 0
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
			if blank {
				b.WriteByte('\n')
			}
		}
		blank = false
		b.WriteString(line)
	}
	return b.String()
}

// cutDigest cuts s to at most max bytes: after the last sentence end ('.',
// '!' or '?' before a space or a line break) or line break in the second
// half of the limit, or else as cutText does.
func cutDigest(s string, max int) string {
	for j := min(max, len(s)-1); j >= max/2; j-- {
		switch {
		case s[j] == '\n':
			return strings.TrimRight(s[:j], "\n ")
		case s[j] == ' ' && j > 0 && strings.IndexByte(".!?", s[j-1]) >= 0:
			return s[:j]
		}
	}
	return cutText(s, max)
}
