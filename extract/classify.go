package extract

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The word lists the rules read. They are English: a conversation in
// another language yields few facts from Rules (a model does better).
var (
	// interrogatives open a question that lacks its question mark.
	interrogatives = wordSet("what why how when where who whom whose which can could would will shall should " +
		"do does did is are am was were have has may might isn't aren't don't doesn't didn't won't wouldn't can't couldn't shouldn't")
	// fillerWords make up greetings, thanks and acknowledgements: a
	// sentence of these words only says nothing to remember.
	fillerWords = wordSet("hi hello hey there thanks thank thx ty cheers ok okay k sure yes yeah yep yup no nope nah " +
		"cool great nice awesome perfect fine good morning afternoon evening night bye goodbye later see soon " +
		"lol haha hmm um uh oh ah wow well right alright sounds got it that that's this is so very much a lot " +
		"for all too again welcome np problem indeed exactly true agree agreed totally absolutely of course please")
	// fillerPhrases are first-person sentences that say nothing about the
	// speaker worth keeping.
	fillerPhrases = setOf(fillerPhraseList)
	// listener are the words that address the other party: a sentence
	// with one is a request or a reaction, not a fact about the speaker.
	listener = wordSet("you your you're yours yourself yourselves you've you'll you'd ya")
	// imperatives open a request ("tell me", "book my flight").
	imperatives = wordSet("please help tell give show find book make write send remind let check explain fix add " +
		"remove delete create list set get call schedule translate summarize summarise draft look search open " +
		"update change cancel keep use try don't do go stop start run compare describe suggest recommend " +
		"calculate convert generate rewrite edit correct review read")
	// selfWords name the speaker as the subject or owner.
	selfWords = wordSet("i i'm i've i'll i'd my mine myself we we're we've we'll we'd our ours ourselves")
	// leadInWords open a sentence with a comma after them and are dropped:
	// "Actually, I moved to Berlin." keeps "I moved to Berlin."
	leadInWords = wordSet("hi hello hey well so ok okay oh yes yeah yep no nope sure anyway anyways also " +
		"actually honestly basically alright right thanks great cool um uh hmm ah wow btw fyi sorry")
	// dateWords name a day or month, or a day relative to the turn.
	dateWords = wordSet("january february march april june july august september october november december " +
		"jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday " +
		"sunday mondays tuesdays wednesdays thursdays fridays saturdays sundays today tonight tomorrow " +
		"yesterday weekend birthday anniversary")
	// periodWords follow "next", "last" or "this" to name a time.
	periodWords = wordSet("week month year weekend summer winter spring autumn fall semester quarter")
)

var fillerPhraseList = []string{
	"i see", "i agree", "i know", "i understand", "i guess", "i mean", "i think so", "i don't know",
	"i dunno", "i guess so", "i hope so", "i suppose so", "i'm not sure", "i am not sure", "i got it",
	"i see now", "i'm in", "me too", "i do", "i don't", "i did", "i didn't", "i will", "i won't",
	"i can", "i can't", "i would", "i have", "i haven't", "i'm fine", "i am fine", "i'm good",
	"i am good", "i'm ok", "i'm okay", "i'm sorry", "i am sorry", "i'm back", "i am back",
	"i'm here", "i am here", "i'm done", "i am done", "i'm ready", "i am ready", "i'm sure",
	"i am sure", "i'm glad", "i am glad", "i'd love to", "i would love to", "i think", "i believe so",
	"my bad", "my pleasure", "oh my", "my god", "oh my god", "we'll see", "i'll try", "i'll see",
}

// wordSet returns the set of the space-separated words of list.
func wordSet(list string) map[string]bool { return setOf(strings.Fields(list)) }

func setOf(items []string) map[string]bool {
	m := make(map[string]bool, len(items))
	for _, x := range items {
		m[x] = true
	}
	return m
}

// leadIns are phrases that introduce what follows without adding to it;
// they are dropped, case-insensitively, before a sentence is judged.
var leadIns = []string{
	"please remember that ", "please remember ", "remember that ", "remember, ", "note that ",
	"please note that ", "just so you know, ", "just so you know ", "for the record, ",
	"by the way, ", "fyi, ", "fyi ", "btw, ", "btw ",
}

// stripLeadIns drops leading lead-in phrases and interjections (see
// leadIn) from s and makes its first letter upper case: "Hi, btw, I'm
// Sam." gives "I'm Sam."
func stripLeadIns(s string) string {
	for range 4 {
		before := s
		for _, p := range leadIns {
			if len(s) > len(p) && strings.EqualFold(s[:len(p)], p) {
				s = s[len(p):]
				break
			}
		}
		if n := leadIn(s); n > 0 {
			s = strings.TrimLeft(s[n:], " ")
		}
		if s == before {
			break
		}
	}
	return upperFirst(s)
}

// question reports whether s, with words w, asks something: it ends with
// '?' (before any closing quotes), or it has no closing punctuation and
// opens with an interrogative word.
func question(s string, w []string) bool {
	s = strings.TrimRight(s, `"')]”’»`)
	last, _ := utf8.DecodeLastRuneInString(s)
	if last == '?' {
		return true
	}
	return !terminal(last) && len(w) > 0 && interrogatives[w[0]]
}

// leadIn returns the length of the interjection that opens s with the
// comma or '!' after it, or 0: one of leadInWords, alone or followed by
// "there" or one or two names ("Actually,", "Hey Caroline,", "Hi there!").
func leadIn(s string) int {
	i := strings.IndexAny(s, ",!")
	if i <= 0 || i > 40 {
		return 0
	}
	ws := strings.Fields(s[:i])
	if len(ws) == 0 || len(ws) > 3 || !leadInWords[strings.ToLower(ws[0])] {
		return 0
	}
	for _, w := range ws[1:] {
		if w != "there" && !name(w) {
			return 0
		}
	}
	return i + 1
}

// name reports whether w looks like a name: a capital letter, then
// letters.
func name(w string) bool {
	for i, r := range w {
		if i == 0 && !unicode.IsUpper(r) || !unicode.IsLetter(r) {
			return false
		}
	}
	return w != ""
}

// intensifiers make no difference to whether a sentence says anything.
var intensifiers = wordSet("so really totally completely absolutely just definitely truly very")

// filler reports whether sentence s says nothing to remember: all its
// words are greeting, thanks or acknowledgement words, or they are one of
// the first-person filler phrases. A closing address ("Thanks,
// Caroline!", "I agree, Mel.": one or two names after the last comma) and
// intensifiers ("so", "really", "totally") are left out of the judgement.
func filler(s string) bool {
	if i := strings.LastIndex(s, ", "); i >= 0 {
		tail := strings.Fields(strings.TrimRight(s[i+2:], ".!?…)\"' "))
		if len(tail) > 0 && len(tail) <= 2 && !slices.ContainsFunc(tail, func(w string) bool { return !name(w) }) {
			s = s[:i]
		}
	}
	var w []string
	for _, x := range words(s) {
		if !intensifiers[x] {
			w = append(w, x)
		}
	}
	if fillerPhrases[strings.Join(w, " ")] {
		return true
	}
	for _, x := range w {
		if !fillerWords[x] {
			return false
		}
	}
	return true
}

// anyOf reports whether one of the words w is in set.
func anyOf(w []string, set map[string]bool) bool {
	for _, x := range w {
		if set[x] {
			return true
		}
	}
	return false
}

// codeLike reports whether s looks like code or markup rather than
// prose: it holds two or more of the characters {}<>=`|\^~.
func codeLike(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		if strings.IndexByte("{}<>=`|\\^~", s[i]) >= 0 {
			if n++; n == 2 {
				return true
			}
		}
	}
	return false
}

// mentionsDate reports whether the words w name a date or a time: a
// month or weekday, today, tomorrow and the like, "next week" and the
// like, a year from 1900 to 2099, or "may" next to a number ("May 3",
// "3 May"; alone, "may" is the verb).
func mentionsDate(w []string) bool {
	for i, x := range w {
		switch {
		case dateWords[x]:
			return true
		case (x == "next" || x == "last" || x == "this") && i+1 < len(w) && periodWords[w[i+1]]:
			return true
		case x == "may" && (i > 0 && number(w[i-1]) || i+1 < len(w) && number(w[i+1])):
			return true
		case year(x):
			return true
		}
	}
	return false
}

// number reports whether w is a day of the month: one or two digits,
// with an optional ordinal ending ("3", "21st").
func number(w string) bool {
	for _, suffix := range []string{"st", "nd", "rd", "th"} {
		if d, ok := strings.CutSuffix(w, suffix); ok {
			w = d
			break
		}
	}
	return (len(w) == 1 || len(w) == 2) && digits(w)
}

// year reports whether w is a year from 1900 to 2099.
func year(w string) bool {
	return len(w) == 4 && digits(w) && (w[:2] == "19" || w[:2] == "20")
}

func digits(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return w != ""
}
