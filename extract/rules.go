package extract

import (
	"context"
	"strings"

	"github.com/agentmem/memory"
)

// DefaultMaxDigestBytes is the size of the digest Rules keeps when
// Rules.MaxDigestBytes is zero: about a thousand tokens of English.
const DefaultMaxDigestBytes = 4096

// MinDigestBytes is the smallest digest limit other than zero that Rules
// and ParseDigest take: room for a speaker and a few words.
const MinDigestBytes = 64

// Rules is the deterministic Extractor and Summarizer: it calls no model
// (its Usage is always zero), reads English, and gives the same output
// for the same input, so the tiers work offline and in tests. It is what
// a few fixed rules can do, no more: a model (extract/llmextract) writes
// better facts and digests. The zero value is ready to use; a Rules is
// safe for concurrent use.
//
// # Facts
//
// Extract reads the turns whose role is in FactRoles (the user's only, by
// default), sentence by sentence. A sentence ends at a line break or at
// '.', '!', '?' or '…' followed by white space (not after "Dr." and the
// like, nor after an initial). Lead-ins are dropped from its start ("Hi,",
// "Hey Caroline,", "Actually,", "btw", "Remember that", "Note that"), and
// it is kept as a fact when it says something about the speaker or a
// date:
//
//   - it has "I", "my", "we", "our" or one of their forms ("I'm", "mine",
//     "we've", ...), or names a date or time (a month, a weekday, today,
//     tomorrow, yesterday, a weekend or birthday, "next week" and the
//     like, a year from 1900 to 2099, "May 3");
//   - and it is not a question (it ends with '?', or opens with "what",
//     "can", "do" and the like and has no closing punctuation), not
//     filler (greetings, thanks and acknowledgements only, or one of a
//     list such as "I see", "I don't know", "I'm fine", leaving out a
//     closing "..., Caroline" and words such as "so" and "totally"), not
//     addressed to the listener (no "you" or "your": a request or a
//     reaction), not a
//     request that opens with a verb ("Please", "Tell", "Book", ...), not
//     code (two or more of {}<>=`|\^~), has two words or more, and is at
//     most MaxFactBytes long.
//
// The fact is the sentence as said, on one line (whitespace normalised,
// first letter upper case); a turn that names its speaker (metadata
// memory.SpeakerKey) gets "<speaker>: " in front, so that "I" stays whose it
// was. Its source is the turn. The same fact said again (same words,
// ignoring case and punctuation) is one fact with every turn that said it
// as a source, and a fact equal to a known fact is left out.
//
// A new statement of something a person has one of at a time replaces
// the old, in these slots: "my" or "our", one to three words that include
// "favourite" or end in name, surname, nickname, birthday, email, phone,
// number, address, job, title, role, occupation, profession, employer,
// salary, age, height, weight, timezone, username, handle, website,
// pronouns, hometown, location, budget or deadline, then "is" or "are"
// ("My favorite color is green", "My email address is ..."); "I live in",
// "I'm living in" or "I'm based in" (one slot), and the same with "we";
// "I work at" or "for", or "I'm working at", "for" or "employed at", "by"
// (one slot); "I work as" or "I'm working as"; "I am N years old". Only
// the start of the sentence counts, after the speaker, spelled
// "favourite"/"favorite", "colour"/"color" alike. Within the batch the
// later statement in a slot wins and the earlier is left out; against
// the known facts, the new fact's Supersedes is the id of the first known
// fact in the same slot about the same speaker (a fact stored by Rules
// from a named speaker starts with "<speaker>: ").
//
// # Digest
//
// Summarize appends one line per user or assistant turn to the previous
// digest (system and tool turns are left out): "<speaker>: " (the turn's
// memory.SpeakerKey metadata, or "User" or "Assistant") and the first two of its
// sentences that are not filler, each cut at a word to 240 bytes at most.
// Then, while the digest is over MaxDigestBytes, older lines are thinned
// first: oldest first, each line but the newest is cut to its speaker and
// first sentence; then the oldest lines are dropped; then the newest line
// is cut at a word. The digest's lines are the previous digest's lines
// (blank ones dropped, each on one line) followed by the new ones, so a
// digest written by a model can be carried on by Rules. With no turn to
// add and no previous digest the digest is empty.
type Rules struct {
	// FactRoles are the roles whose turns Extract takes facts from. Nil
	// means the user's turns only: what the assistant says is mostly
	// advice, not facts about anyone. A conversation between two people
	// recorded as user and assistant turns (as cmd/agentmem-eval stores
	// LoCoMo's) wants both.
	FactRoles []memory.Role
	// MaxDigestBytes bounds the digest Summarize returns. Zero means
	// DefaultMaxDigestBytes; other values must be from MinDigestBytes to
	// memory.MaxContentBytes.
	MaxDigestBytes int
}

var (
	_ Extractor  = Rules{}
	_ Summarizer = Rules{}
)

// check validates r's options.
func (r Rules) check() error {
	for _, role := range r.FactRoles {
		if !role.Valid() {
			return memory.Errorf(memory.ErrInvalidArgument, "extract: Rules.FactRoles holds %q; the roles are %v", role, memory.Roles)
		}
	}
	if m := r.MaxDigestBytes; m != 0 && (m < MinDigestBytes || m > memory.MaxContentBytes) {
		return memory.Errorf(memory.ErrInvalidArgument, "extract: Rules.MaxDigestBytes is %d; it must be 0 or from %d to %d", m, MinDigestBytes, memory.MaxContentBytes)
	}
	return nil
}

// Extract returns the facts of turns as the type's documentation says.
// Errors are those of CheckExtract, invalid options
// (memory.ErrInvalidArgument) and ctx's own.
func (r Rules) Extract(ctx context.Context, turns, known []memory.Record) ([]Fact, Usage, error) {
	if err := ctx.Err(); err != nil {
		return nil, Usage{}, err
	}
	if err := r.check(); err != nil {
		return nil, Usage{}, err
	}
	if err := CheckExtract(turns, known); err != nil {
		return nil, Usage{}, err
	}
	roles := map[memory.Role]bool{memory.RoleUser: true}
	if r.FactRoles != nil {
		roles = map[memory.Role]bool{}
		for _, role := range r.FactRoles {
			roles[role] = true
		}
	}
	knownSlots := map[string]string{}
	for _, k := range known {
		if s := slotOf(oneLine(k.Content)); s != "" && knownSlots[s] == "" {
			knownSlots[s] = k.ID
		}
	}
	var b slotBatch
	for i, t := range turns {
		if i%64 == 63 {
			if err := ctx.Err(); err != nil {
				return nil, Usage{}, err
			}
		}
		if !roles[memory.Role(t.Label)] {
			continue
		}
		speaker := speakerName(t)
		for s := range sentences(t.Content) {
			text, ok := factSentence(s)
			if !ok {
				continue
			}
			if speaker != "" {
				text = speaker + ": " + text
			}
			if len(text) > MaxFactBytes {
				continue
			}
			slot := slotOf(text)
			b.add(Fact{Text: text, Sources: []string{t.ID}, Supersedes: knownSlots[slot]}, slot)
		}
	}
	return Reconcile(b.kept(), turns, known), Usage{}, nil
}

// factSentence returns sentence s, without its lead-ins, when it is a
// fact by the rules of Rules.
func factSentence(s string) (string, bool) {
	if len(s) > 2*MaxFactBytes {
		return "", false // too long to be one fact, however many lead-ins it has
	}
	s = stripLeadIns(s)
	if len(s) > MaxFactBytes || codeLike(s) {
		return "", false
	}
	w := words(s)
	switch {
	case len(w) < 2, question(s, w), filler(s), anyOf(w, listener), imperatives[w[0]]:
		return "", false
	}
	return s, anyOf(w, selfWords) || mentionsDate(w)
}

// speakerName returns the name a turn's metadata gives its speaker, one
// line, without colons (which would blur where the name ends), at most
// maxSpeakerLabel bytes; or "".
func speakerName(t memory.Record) string {
	return cutText(oneLine(strings.ReplaceAll(t.Metadata[memory.SpeakerKey], ":", " ")), maxSpeakerLabel)
}

// slotBatch collects the candidate facts of one batch, leaving out those
// a later statement in the same slot replaced.
type slotBatch struct {
	facts   []Fact
	dropped []bool
	byKey   map[string][]int  // the words of a fact: its places in facts
	inSlot  map[string]string // a slot: the words of its latest fact
}

// add appends f, which fills slot (or none, for ""), and drops the
// earlier facts of another text in the same slot.
func (b *slotBatch) add(f Fact, slot string) {
	if b.byKey == nil {
		b.byKey, b.inSlot = map[string][]int{}, map[string]string{}
	}
	key := normKey(f.Text)
	if slot != "" {
		if prev, ok := b.inSlot[slot]; ok && prev != key {
			for _, i := range b.byKey[prev] {
				b.dropped[i] = true
			}
			delete(b.byKey, prev)
		}
		b.inSlot[slot] = key
	}
	b.byKey[key] = append(b.byKey[key], len(b.facts))
	b.facts = append(b.facts, f)
	b.dropped = append(b.dropped, false)
}

// kept returns the facts not dropped, in the order added.
func (b *slotBatch) kept() []Fact {
	var out []Fact
	for i, f := range b.facts {
		if !b.dropped[i] {
			out = append(out, f)
		}
	}
	return out
}
