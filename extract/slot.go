package extract

import (
	"slices"
	"strings"
)

// exclusiveNouns are the things a person has one of at a time: a new
// "my <noun> is ..." replaces the old one.
var exclusiveNouns = wordSet("name surname nickname birthday email phone number address job title role " +
	"occupation profession employer salary age height weight timezone username handle website pronouns " +
	"hometown location budget deadline")

// slotPrefixes are statements of where someone lives or works, each
// with the name of its slot: a new statement in a slot replaces the old
// one, however it is worded.
var slotPrefixes = []struct {
	words []string
	slot  string
}{
	{[]string{"i", "live", "in"}, "i live in"},
	{[]string{"i", "am", "living", "in"}, "i live in"},
	{[]string{"i", "am", "based", "in"}, "i live in"},
	{[]string{"we", "live", "in"}, "we live in"},
	{[]string{"we", "are", "living", "in"}, "we live in"},
	{[]string{"we", "are", "based", "in"}, "we live in"},
	{[]string{"i", "work", "at"}, "i work at"},
	{[]string{"i", "work", "for"}, "i work at"},
	{[]string{"i", "am", "working", "at"}, "i work at"},
	{[]string{"i", "am", "working", "for"}, "i work at"},
	{[]string{"i", "am", "employed", "at"}, "i work at"},
	{[]string{"i", "am", "employed", "by"}, "i work at"},
	{[]string{"i", "work", "as"}, "i work as"},
	{[]string{"i", "am", "working", "as"}, "i work as"},
}

// maxSpeakerLabel is the longest prefix before ": " read as the name of
// whoever a fact or digest line is about.
const maxSpeakerLabel = 64

// slotOf returns the slot a fact fills, when it says something a person
// has one of at a time, so that a newer fact in the same slot replaces
// the older: "<speaker>|my favourite colour is" for "My favorite color
// is green." (one spelling of favourite), "|i live in" for "I'm living in
// Berlin." as for "I live in Oslo.", "|i am years old" for "I am 34
// years old." It returns "" for every other fact. The slots are:
//
//   - "my" or "our", one to three words that include "favourite" or end
//     in one of exclusiveNouns, then "is" or "are" and the value;
//   - one of slotPrefixes ("I live in", "I work at", "I work as", ...)
//     and the value;
//   - "I am <number> years old".
//
// The speaker is the part of text before ": " when text has one within
// its first maxSpeakerLabel bytes (Rules writes "<speaker>: " in front of
// the facts of turns that name their speaker).
func slotOf(text string) string {
	speaker, body := "", text
	if i := strings.Index(text, ": "); i > 0 && i <= maxSpeakerLabel {
		speaker, body = normKey(text[:i]), text[i+2:]
	}
	w := slotWords(words(body))
	if slot := possessionSlot(w); slot != "" {
		return speaker + "|" + slot
	}
	for _, p := range slotPrefixes {
		if len(w) > len(p.words) && slices.Equal(w[:len(p.words)], p.words) {
			return speaker + "|" + p.slot
		}
	}
	if len(w) == 5 && w[0] == "i" && w[1] == "am" && digits(w[2]) && w[3] == "years" && w[4] == "old" {
		return speaker + "|i am years old"
	}
	return ""
}

// possessionSlot returns "my <nouns> is" (or "our ... are") when w is such
// a statement about an exclusive noun, with a value after it.
func possessionSlot(w []string) string {
	if len(w) < 4 || w[0] != "my" && w[0] != "our" {
		return ""
	}
	for k := 2; k <= 4 && k+1 < len(w); k++ {
		if w[k] != "is" && w[k] != "are" {
			continue
		}
		nouns := w[1:k]
		if exclusiveNouns[nouns[len(nouns)-1]] || slices.Contains(nouns, "favourite") {
			return strings.Join(w[:k+1], " ")
		}
		return ""
	}
	return ""
}

// slotWords spells the words of a slot one way: "i'm" as "i am", "we're"
// as "we are", "favorite" as "favourite", "color" as "colour".
func slotWords(w []string) []string {
	out := make([]string, 0, len(w)+2)
	for _, x := range w {
		switch x {
		case "i'm":
			out = append(out, "i", "am")
		case "we're":
			out = append(out, "we", "are")
		case "favorite":
			out = append(out, "favourite")
		case "color":
			out = append(out, "colour")
		default:
			out = append(out, x)
		}
	}
	return out
}
