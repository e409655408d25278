package extract

import (
	"cmp"
	"context"
	"strings"

	"github.com/agentmem/memory"
)

const (
	// digestSentences is how many sentences of a turn its digest line
	// keeps.
	digestSentences = 2
	// maxDigestSentence is the longest sentence a digest line keeps whole.
	maxDigestSentence = 240
)

// Summarize returns the previous digest with turns folded in, as the
// type's documentation says. Errors are those of CheckSummarize, invalid
// options (memory.ErrInvalidArgument) and ctx's own.
func (r Rules) Summarize(ctx context.Context, previous string, turns []memory.Record) (string, Usage, error) {
	if err := ctx.Err(); err != nil {
		return "", Usage{}, err
	}
	if err := r.check(); err != nil {
		return "", Usage{}, err
	}
	if err := CheckSummarize(previous, turns); err != nil {
		return "", Usage{}, err
	}
	if len(turns) == 0 {
		return previous, Usage{}, nil
	}
	var lines []string
	for line := range strings.Lines(previous) {
		if l := oneLine(line); l != "" {
			lines = append(lines, l)
		}
	}
	for i, t := range turns {
		if i%64 == 63 {
			if err := ctx.Err(); err != nil {
				return "", Usage{}, err
			}
		}
		if line := digestLine(t); line != "" {
			lines = append(lines, line)
		}
	}
	return fitDigest(lines, cmp.Or(r.MaxDigestBytes, DefaultMaxDigestBytes)), Usage{}, nil
}

// digestLine returns the digest line of a user or assistant turn: its
// speaker and its first digestSentences sentences that are not filler, or
// "" when it has none or is another role's.
func digestLine(t memory.Record) string {
	var label string
	switch memory.Role(t.Label) {
	case memory.RoleUser:
		label = "User"
	case memory.RoleAssistant:
		label = "Assistant"
	default:
		return ""
	}
	if name := speakerName(t); name != "" {
		label = name
	}
	var picked []string
	for s := range sentences(t.Content) {
		if len(words(s)) == 0 || filler(s) {
			continue
		}
		picked = append(picked, cutText(s, maxDigestSentence))
		if len(picked) == digestSentences {
			break
		}
	}
	if len(picked) == 0 {
		return ""
	}
	return label + ": " + strings.Join(picked, " ")
}

// fitDigest joins lines into a digest of at most budget bytes: older
// lines are cut to their first sentence, oldest first, then the oldest
// are dropped, then the newest is cut at a word. Each step reads each line
// at most once.
func fitDigest(lines []string, budget int) string {
	if len(lines) == 0 {
		return ""
	}
	size := len(lines) - 1 // the line breaks
	for _, l := range lines {
		size += len(l)
	}
	for i := 0; size > budget && i < len(lines)-1; i++ {
		short := firstSentence(lines[i])
		size -= len(lines[i]) - len(short)
		lines[i] = short
	}
	for size > budget && len(lines) > 1 {
		size -= len(lines[0]) + 1
		lines = lines[1:]
	}
	if size > budget {
		lines[0] = cutText(lines[0], budget)
	}
	return strings.Join(lines, "\n")
}

// firstSentence returns a digest line cut to its speaker label (a prefix
// before ": " of at most maxSpeakerLabel bytes with no sentence end in
// it) and the first sentence after it.
func firstSentence(line string) string {
	label, body := "", line
	if i := strings.Index(line, ": "); i > 0 && i <= maxSpeakerLabel && !strings.ContainsAny(line[:i], ".!?…") {
		label, body = line[:i+2], line[i+2:]
	}
	for s := range sentences(body) {
		return label + s
	}
	return line
}
