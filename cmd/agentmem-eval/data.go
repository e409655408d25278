package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// MaxDataBytes is the largest data file the command reads: 256 MiB, more
// than two hundred times LoCoMo's full release.
const MaxDataBytes = 256 << 20

// sessionTimeLayout is the layout of LoCoMo's session date times, such as
// "1:56 pm on 8 May, 2023". They carry no time zone; they are read as UTC.
const sessionTimeLayout = "3:04 pm on 2 January, 2006"

// Dataset is a LoCoMo-format file reduced to what the evaluation uses: the
// conversations' turns with their session times, and the questions with
// their evidence. Annotations (event summaries, observations, session
// summaries) are never read.
type Dataset struct {
	// Conversations are in file order.
	Conversations []Conversation
}

// Conversation is one LoCoMo sample: two speakers' sessions of turns and
// the questions asked about them.
type Conversation struct {
	// SampleID is the sample_id, unique in the file.
	SampleID string
	// SpeakerA and SpeakerB are the two speakers' names.
	SpeakerA, SpeakerB string
	// Turns are every session's turns in time order: sessions by their
	// date time (then by number), turns in file order within a session.
	Turns []Turn
	// Questions are the qa entries in file order, skipped ones included.
	Questions []Question
}

// Turn is one dialogue turn.
type Turn struct {
	// DiaID is the turn's id, such as "D1:3", unique in its conversation.
	DiaID string
	// Speaker is the speaker's name, one of the conversation's two.
	Speaker string
	// Text is what was said.
	Text string
	// Session is the session number N of the session_N it belongs to.
	Session int
	// Created is the session's date time plus Index seconds, moved later
	// when needed so that every turn is strictly later than the one
	// before it (see loadConversation).
	Created time.Time
}

// Question is one qa entry.
type Question struct {
	// Index is the entry's position in the conversation's qa list, from 0.
	Index int
	// Text is the question, used verbatim as the query.
	Text string
	// Category is LoCoMo's category, 1 to 5.
	Category int
	// Evidence are the dia_ids of the turns that answer the question.
	Evidence []string
	// Skip says why the question is not scored; empty when it is. A
	// question is skipped when it has no evidence, or when one of its
	// evidence ids names no turn of the conversation (a typo such as
	// "D:2:5", or several ids in one string such as "D1:4; D2:7"):
	// the evaluation does not guess what was meant.
	Skip string
}

// The reasons a question is skipped.
const (
	skipNoEvidence      = "no evidence"
	skipUnknownEvidence = "evidence id names no turn"
)

// rawConversation is the JSON shape of one sample, limited to the fields
// the evaluation may use.
type rawConversation struct {
	SampleID     *string                    `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           *[]rawQuestion             `json:"qa"`
}

type rawQuestion struct {
	Question *string   `json:"question"`
	Evidence *[]string `json:"evidence"`
	Category *int      `json:"category"`
}

type rawTurn struct {
	Speaker *string `json:"speaker"`
	DiaID   *string `json:"dia_id"`
	Text    *string `json:"text"`
}

var (
	sessionKey     = regexp.MustCompile(`^session_([0-9]+)$`)
	sessionTimeKey = regexp.MustCompile(`^session_([0-9]+)_date_time$`)
)

// LoadFile reads and checks the LoCoMo-format file at path. A file larger
// than limit bytes is refused before it is read.
func LoadFile(path string, limit int64) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("data file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("data file %s is not a regular file", path)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("data file %s is %d bytes, the limit is %d", path, st.Size(), limit)
	}
	// The file may grow between Stat and the read: read one byte past the
	// limit to notice.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("data file %s is larger than the limit of %d bytes", path, limit)
	}
	ds, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	return ds, nil
}

// Parse checks and decodes a LoCoMo-format file's contents. Errors name
// the line and column, or the conversation, session, turn or question, of
// what is wrong.
func Parse(data []byte) (*Dataset, error) {
	if !utf8.Valid(data) {
		off := invalidUTF8(data)
		line, col := position(data, off)
		return nil, fmt.Errorf("line %d, column %d: invalid UTF-8 (byte offset %d)", line, col, off)
	}
	// Decoding the whole file once checks its syntax, with positions for
	// the errors; the conversations are then decoded one by one, each
	// with the offset it starts at, so a wrong type is placed too.
	if err := json.Unmarshal(data, new([]json.RawMessage)); err != nil {
		return nil, jsonError(data, 0, err, "the file must be a JSON array of conversations")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // the opening bracket, checked above
		return nil, jsonError(data, 0, err, "the file")
	}
	ds := &Dataset{}
	seen := map[string]int{}
	for i := 0; dec.More(); i++ {
		base := int(dec.InputOffset())
		for base < len(data) && (data[base] == ',' || isSpace(data[base])) {
			base++
		}
		var msg json.RawMessage
		if err := dec.Decode(&msg); err != nil {
			return nil, jsonError(data, 0, err, fmt.Sprintf("conversation %d", i+1))
		}
		c, err := loadConversation(i, msg)
		if err != nil {
			var typ *json.UnmarshalTypeError
			if errors.As(err, &typ) {
				return nil, jsonError(data, base, typ, fmt.Sprintf("conversation %d", i+1))
			}
			return nil, err
		}
		if j, dup := seen[c.SampleID]; dup {
			return nil, fmt.Errorf("conversations %d and %d have the same sample_id %q", j+1, i+1, c.SampleID)
		}
		seen[c.SampleID] = i
		ds.Conversations = append(ds.Conversations, c)
	}
	if len(ds.Conversations) == 0 {
		return nil, errors.New("the file holds no conversations")
	}
	return ds, nil
}

// loadConversation decodes and checks the i-th sample.
func loadConversation(i int, msg json.RawMessage) (Conversation, error) {
	var rc rawConversation
	if err := json.Unmarshal(msg, &rc); err != nil {
		return Conversation{}, err
	}
	where := fmt.Sprintf("conversation %d", i+1)
	if rc.SampleID == nil || *rc.SampleID == "" {
		return Conversation{}, fmt.Errorf("%s: sample_id is missing or empty", where)
	}
	c := Conversation{SampleID: *rc.SampleID}
	where = fmt.Sprintf("conversation %d (%s)", i+1, c.SampleID)
	if err := (memory.Identity{User: c.SampleID}).Validate(); err != nil {
		return Conversation{}, fmt.Errorf("%s: sample_id cannot name a store's user: %w", where, err)
	}
	if rc.Conversation == nil {
		return Conversation{}, fmt.Errorf("%s: the conversation field is missing", where)
	}
	if rc.QA == nil {
		return Conversation{}, fmt.Errorf("%s: the qa field is missing", where)
	}
	var err error
	if c.SpeakerA, err = stringField(rc.Conversation, "speaker_a", where); err != nil {
		return Conversation{}, err
	}
	if c.SpeakerB, err = stringField(rc.Conversation, "speaker_b", where); err != nil {
		return Conversation{}, err
	}
	if c.SpeakerA == c.SpeakerB {
		return Conversation{}, fmt.Errorf("%s: speaker_a and speaker_b are both %q", where, c.SpeakerA)
	}
	if c.Turns, err = loadTurns(rc.Conversation, c, where); err != nil {
		return Conversation{}, err
	}
	ids := make(map[string]bool, len(c.Turns))
	for _, t := range c.Turns {
		ids[t.DiaID] = true
	}
	for j, rq := range *rc.QA {
		qw := fmt.Sprintf("%s, question %d", where, j+1)
		switch {
		case rq.Question == nil || strings.TrimSpace(*rq.Question) == "":
			return Conversation{}, fmt.Errorf("%s: question is missing or empty", qw)
		case rq.Category == nil:
			return Conversation{}, fmt.Errorf("%s: category is missing", qw)
		case *rq.Category < 1 || *rq.Category > 5:
			return Conversation{}, fmt.Errorf("%s: category is %d; LoCoMo's categories are 1 to 5", qw, *rq.Category)
		case rq.Evidence == nil:
			return Conversation{}, fmt.Errorf("%s: evidence is missing", qw)
		case strings.IndexByte(*rq.Question, 0) >= 0:
			return Conversation{}, fmt.Errorf("%s: question contains a NUL character", qw)
		case len(*rq.Question) > driver.MaxSearchTextBytes:
			return Conversation{}, fmt.Errorf("%s: question is %d bytes; a text search takes at most %d", qw, len(*rq.Question), driver.MaxSearchTextBytes)
		}
		q := Question{Index: j, Text: *rq.Question, Category: *rq.Category, Evidence: *rq.Evidence}
		if len(q.Evidence) == 0 {
			q.Skip = skipNoEvidence
		}
		for _, e := range q.Evidence {
			if !ids[e] {
				q.Skip = skipUnknownEvidence
				break
			}
		}
		c.Questions = append(c.Questions, q)
	}
	return c, nil
}

// session is one session_N of a conversation before its turns are timed.
type session struct {
	n     int
	start time.Time
	turns []rawTurn
}

// loadTurns decodes the conversation's sessions and returns their turns in
// time order. A session_N_date_time without its session_N is allowed
// (LoCoMo has such entries); a session_N without its date time is not.
func loadTurns(conv map[string]json.RawMessage, c Conversation, where string) ([]Turn, error) {
	var sessions []session
	for key, msg := range conv {
		m := sessionKey.FindStringSubmatch(key)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s: %s is not a session number from 1", where, key)
		}
		s := session{n: n}
		if err := json.Unmarshal(msg, &s.turns); err != nil {
			return nil, fmt.Errorf("%s: %s must be an array of turns with string fields speaker, dia_id and text: %s", where, key, describe(err))
		}
		timeKey := key + "_date_time"
		text, err := stringField(conv, timeKey, where)
		if err != nil {
			return nil, err
		}
		if s.start, err = ParseSessionTime(text); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", where, timeKey, err)
		}
		sessions = append(sessions, s)
	}
	for key := range conv {
		if m := sessionTimeKey.FindStringSubmatch(key); m != nil {
			if _, err := stringField(conv, key, where); err != nil {
				return nil, err
			}
		}
	}
	slices.SortFunc(sessions, func(a, b session) int {
		if c := a.start.Compare(b.start); c != 0 {
			return c
		}
		return a.n - b.n
	})
	var turns []Turn
	seen := map[string]string{}
	var last time.Time
	for _, s := range sessions {
		for i, rt := range s.turns {
			tw := fmt.Sprintf("%s: session_%d, turn %d", where, s.n, i+1)
			switch {
			case rt.DiaID == nil || *rt.DiaID == "":
				return nil, fmt.Errorf("%s: dia_id is missing or empty", tw)
			case rt.Speaker == nil:
				return nil, fmt.Errorf("%s (%s): speaker is missing", tw, *rt.DiaID)
			case rt.Text == nil:
				return nil, fmt.Errorf("%s (%s): text is missing", tw, *rt.DiaID)
			case *rt.Speaker != c.SpeakerA && *rt.Speaker != c.SpeakerB:
				return nil, fmt.Errorf("%s (%s): speaker %q is neither speaker_a %q nor speaker_b %q", tw, *rt.DiaID, *rt.Speaker, c.SpeakerA, c.SpeakerB)
			}
			if strings.IndexByte(*rt.Text, 0) >= 0 || strings.IndexByte(*rt.DiaID, 0) >= 0 {
				return nil, fmt.Errorf("%s (%q): dia_id or text contains a NUL character", tw, *rt.DiaID)
			}
			if n := len(*rt.Speaker) + len(": ") + len(*rt.Text); n > memory.MaxContentBytes {
				return nil, fmt.Errorf("%s (%s): the turn is %d bytes with its speaker; a record holds at most %d", tw, *rt.DiaID, n, memory.MaxContentBytes)
			}
			if n := len(diaKey) + len(*rt.DiaID); n > memory.MaxMetadataBytes {
				return nil, fmt.Errorf("%s: dia_id is %d bytes; a record's metadata holds at most %d", tw, len(*rt.DiaID), memory.MaxMetadataBytes-len(diaKey))
			}
			if prev, dup := seen[*rt.DiaID]; dup {
				return nil, fmt.Errorf("%s: dia_id %q is used twice (also at %s)", tw, *rt.DiaID, prev)
			}
			seen[*rt.DiaID] = fmt.Sprintf("session_%d, turn %d", s.n, i+1)
			created := s.start.Add(time.Duration(i) * time.Second)
			if !created.After(last) && !last.IsZero() {
				created = last.Add(time.Second)
			}
			last = created
			turns = append(turns, Turn{DiaID: *rt.DiaID, Speaker: *rt.Speaker, Text: *rt.Text, Session: s.n, Created: created})
		}
	}
	if len(turns) == 0 {
		return nil, fmt.Errorf("%s: the conversation has no turns", where)
	}
	return turns, nil
}

// stringField returns conv[key] as a non-empty string.
func stringField(conv map[string]json.RawMessage, key, where string) (string, error) {
	msg, ok := conv[key]
	if !ok {
		return "", fmt.Errorf("%s: conversation.%s is missing", where, key)
	}
	var s string
	if err := json.Unmarshal(msg, &s); err != nil {
		return "", fmt.Errorf("%s: conversation.%s must be a string", where, key)
	}
	if s == "" {
		return "", fmt.Errorf("%s: conversation.%s is empty", where, key)
	}
	return s, nil
}

// ParseSessionTime parses a LoCoMo session date time such as
// "1:56 pm on 8 May, 2023", as UTC.
func ParseSessionTime(s string) (time.Time, error) {
	t, err := time.Parse(sessionTimeLayout, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, fmt.Errorf("date time %q is not of the form \"1:56 pm on 8 May, 2023\"", s)
	}
	return t, nil
}

// jsonError turns a decoding error into one that names its line and column
// in data; base is the offset in data of the text that was decoded. A
// syntax error is placed at the byte that is wrong (past the end for
// input that ends too early), a type error at the
// last byte of the value of the wrong type.
func jsonError(data []byte, base int, err error, what string) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off := base + int(syn.Offset) - 1
		if syn.Error() == "unexpected end of JSON input" {
			off = len(data) // the input ended early: point past its end
		}
		line, col := position(data, off)
		return fmt.Errorf("line %d, column %d: malformed JSON: %v", line, col, syn)
	case errors.As(err, &typ):
		line, col := position(data, base+int(typ.Offset)-1)
		return fmt.Errorf("line %d, column %d: %s: %s", line, col, what, describe(typ))
	}
	return fmt.Errorf("%s: %w", what, err)
}

// describe says what a nested decoding error found, without a position
// (its offset is relative to the nested value).
func describe(err error) string {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		field := typ.Field
		if field == "" {
			field = "the value"
		}
		return fmt.Sprintf("%s is a JSON %s where a JSON %s belongs", field, typ.Value, jsonKind(typ.Type))
	}
	return err.Error()
}

// jsonKind names the JSON value that decodes into a value of type t.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	}
	return t.String()
}

// isSpace reports whether c is JSON white space.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// position returns the 1-based line and column (in bytes) of offset off.
func position(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	return line, off - (bytes.LastIndexByte(before, '\n') + 1) + 1
}

// invalidUTF8 returns the offset of the first byte of data that is not
// part of valid UTF-8.
func invalidUTF8(data []byte) int {
	for off := 0; off < len(data); {
		r, size := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && size <= 1 {
			return off
		}
		off += size
	}
	return len(data)
}
