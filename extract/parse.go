package extract

import (
	"strings"
	"unicode/utf8"
)

// maxStarts is how many JSON values ParseFacts tries in one region of a
// reply before it gives the region up: prose before the JSON ("Here are
// the facts [as requested]:") may hold a bracket or two. The values tried
// never overlap (the next is looked for after the end of the last), so a
// region is read once however many are tried.
const maxStarts = 4

// ParseFacts reads the facts in a model's reply. It is tolerant of what
// models do around and to JSON, and refuses what it cannot read whole:
//
//   - The facts may come as {"facts": [...]} (or "memories", "memory"),
//     as a bare array [...], or as one fact object {"text": ...}.
//   - A fact is an object with its text under "text" (or "fact",
//     "memory", "content", "statement"), its sources under "sources" (or
//     "source", "source_turns", "turns", "turn_ids", "evidence") as a
//     string, a number or a list of them, and what it replaces under
//     "supersedes" (or "replaces", "contradicts", "updates"), or a bare
//     string, which is a fact with no sources.
//   - The JSON may sit in a fenced code block (```json ... ```, the
//     fences at the start of a line), which is read first, or anywhere in
//     prose. The values that open with the
//     first '{' or '[', and with the next after the end of each that is
//     not facts, are tried in turn, up to four in the block and four in
//     the whole reply, and the first that holds facts wins; so the JSON
//     may follow prose with a bracket or two, but a list inside a value
//     that is not facts is never taken for one. Text after the JSON is
//     ignored.
//   - Trailing commas, raw line breaks and tabs in strings, and strings
//     in typographic quotes (“…”, outside any ASCII-quoted string) are
//     mended.
//   - A reply cut off inside the list keeps the facts that are whole
//     before the cut; the one cut off is dropped.
//
// Each fact's text is made one line (runs of white space and control
// characters become one space); a fact whose text is then empty or
// longer than MaxFactBytes is dropped. Sources and Supersedes are the
// references as the reply wrote them (a string of several is split at
// commas, semicolons and spaces): Reconcile maps them onto the batch. An
// empty list is no facts and no error.
//
// A reply over MaxReplyBytes is refused before any of it is read, with
// memory.ErrTooLarge; one that is empty, not valid UTF-8, nested deeper
// than 16 levels, holds no JSON of those shapes, or has a list element
// that is neither a string nor an object with a string text, is
// memory.ErrInvalidArgument. Both wrap ErrMalformedOutput, and no facts
// come with them. The cost is linear in the size of the reply, whatever
// it holds.
func ParseFacts(reply string) ([]Fact, error) {
	switch {
	case len(reply) > MaxReplyBytes:
		return nil, tooLargeReply(len(reply))
	case !utf8.ValidString(reply):
		return nil, Malformed("the model's reply is not valid UTF-8")
	case strings.TrimSpace(reply) == "":
		return nil, Malformed("the model's reply is empty")
	}
	var first error
	for _, region := range regions(reply) {
		for at, tries := 0, 0; tries < maxStarts; tries++ {
			start := strings.IndexAny(region[at:], "{[")
			if start < 0 {
				break
			}
			start += at
			facts, end, err := decodeFacts(region[start:])
			if err == nil {
				return facts, nil
			}
			if first == nil {
				first = err
			}
			at = start + end
		}
	}
	if first == nil {
		first = Malformed("the model's reply holds no JSON object or array")
	}
	return nil, first
}

// regions returns where to look for the JSON of a reply: the first fenced
// code block, when there is one (see fencedBlock), then the whole reply.
func regions(reply string) []string {
	if block, ok := fencedBlock(reply); ok {
		return []string{block, reply}
	}
	return []string{reply}
}
