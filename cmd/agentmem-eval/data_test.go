package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// miniData is a small file in LoCoMo's format: sessions out of numeric
// order in the file (session_10 sorts after session_2), a date time
// without its session, a question with two evidence ids, one with a
// typo'd id, one without evidence, and annotations the loader must ignore.
const miniData = `[
 {"sample_id": "conv-x",
  "conversation": {
   "speaker_a": "Ann", "speaker_b": "Bob",
   "session_10_date_time": "9:00 am on 3 June, 2023",
   "session_10": [{"speaker": "Bob", "dia_id": "D10:1", "text": "ten one"}],
   "session_1_date_time": "1:56 pm on 8 May, 2023",
   "session_1": [
     {"speaker": "Ann", "dia_id": "D1:1", "text": "hello bob", "img_url": ["x"], "blip_caption": "a cat"},
     {"speaker": "Bob", "dia_id": "D1:2", "text": "hi ann"}],
   "session_2_date_time": "12:05 am on 9 May, 2023",
   "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "two one"}],
   "session_3_date_time": "10:00 am on 1 July, 2023"
  },
  "qa": [
   {"question": "who said hello?", "answer": "Ann", "evidence": ["D1:1"], "category": 1},
   {"question": "what of ten?", "answer": 2022, "evidence": ["D2:1", "D10:1"], "category": 4},
   {"question": "typo?", "answer": "x", "evidence": ["D1:1; D1:2"], "category": 2},
   {"question": "none?", "answer": "x", "evidence": [], "category": 3},
   {"question": "trick?", "adversarial_answer": "no", "evidence": ["D1:2"], "category": 5}
  ],
  "event_summary": {"x": "the answer is Ann"}, "observation": {}, "session_summary": {}
 }
]`

func TestParseMini(t *testing.T) {
	ds, err := Parse([]byte(miniData))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Conversations) != 1 {
		t.Fatalf("%d conversations, want 1", len(ds.Conversations))
	}
	c := ds.Conversations[0]
	if c.SampleID != "conv-x" || c.SpeakerA != "Ann" || c.SpeakerB != "Bob" {
		t.Errorf("conversation %q speakers %q, %q", c.SampleID, c.SpeakerA, c.SpeakerB)
	}
	var got []string
	for _, tr := range c.Turns {
		got = append(got, tr.DiaID)
	}
	if want := "D1:1 D1:2 D2:1 D10:1"; strings.Join(got, " ") != want {
		t.Errorf("turn order %v, want %s", got, want)
	}
	at := func(s string) time.Time { return time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC).Add(mustDuration(t, s)) }
	for i, want := range []time.Time{at("0s"), at("1s"), time.Date(2023, 5, 9, 0, 5, 0, 0, time.UTC), time.Date(2023, 6, 3, 9, 0, 0, 0, time.UTC)} {
		if !c.Turns[i].Created.Equal(want) {
			t.Errorf("turn %s created %v, want %v", c.Turns[i].DiaID, c.Turns[i].Created, want)
		}
	}
	if c.Turns[0].Text != "hello bob" || c.Turns[3].Speaker != "Bob" || c.Turns[3].Session != 10 {
		t.Errorf("turns %+v", c.Turns)
	}
	skips := []string{"", "", skipUnknownEvidence, skipNoEvidence, ""}
	if len(c.Questions) != len(skips) {
		t.Fatalf("%d questions, want %d", len(c.Questions), len(skips))
	}
	for i, q := range c.Questions {
		if q.Skip != skips[i] || q.Index != i {
			t.Errorf("question %d %q: skip %q index %d, want skip %q", i, q.Text, q.Skip, q.Index, skips[i])
		}
	}
	if q := c.Questions[1]; q.Category != 4 || q.Text != "what of ten?" || strings.Join(q.Evidence, ",") != "D2:1,D10:1" {
		t.Errorf("question 2: %+v", q)
	}
}

func mustDuration(t *testing.T, s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestParseStrictOrder checks that turns are strictly ordered in time even
// when a session starts before the previous one's turns end.
func TestParseStrictOrder(t *testing.T) {
	data := `[{"sample_id": "s", "qa": [], "conversation": {"speaker_a": "A", "speaker_b": "B",
	 "session_1_date_time": "1:00 pm on 1 May, 2023",
	 "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "a"}, {"speaker": "B", "dia_id": "D1:2", "text": "b"}, {"speaker": "A", "dia_id": "D1:3", "text": "c"}],
	 "session_2_date_time": "1:00 pm on 1 May, 2023",
	 "session_2": [{"speaker": "A", "dia_id": "D2:1", "text": "d"}]}}]`
	ds, err := Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	turns := ds.Conversations[0].Turns
	for i := 1; i < len(turns); i++ {
		if !turns[i].Created.After(turns[i-1].Created) {
			t.Errorf("turn %s at %v is not after %s at %v", turns[i].DiaID, turns[i].Created, turns[i-1].DiaID, turns[i-1].Created)
		}
	}
}

func TestParseSessionTime(t *testing.T) {
	for in, want := range map[string]time.Time{
		"1:56 pm on 8 May, 2023":         time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC),
		"12:06 am on 11 November, 2022":  time.Date(2022, 11, 11, 0, 6, 0, 0, time.UTC),
		"12:30 pm on 1 January, 2024":    time.Date(2024, 1, 1, 12, 30, 0, 0, time.UTC),
		" 10:04 am on 19 December, 2023": time.Date(2023, 12, 19, 10, 4, 0, 0, time.UTC),
	} {
		got, err := ParseSessionTime(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseSessionTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "1:56 pm 8 May 2023", "13:56 pm on 8 May, 2023", "1:56 pm on 31 February, 2023", "2023-05-08T13:56:00Z"} {
		if _, err := ParseSessionTime(in); err == nil || !strings.Contains(err.Error(), "1:56 pm on 8 May, 2023") {
			t.Errorf("ParseSessionTime(%q) = %v, want an error showing the expected form", in, err)
		}
	}
}

// TestParseBad checks that malformed input is refused with an error naming
// what is wrong and where.
func TestParseBad(t *testing.T) {
	conv := func(fields string) string {
		return `[{"sample_id": "c1", "qa": [], "conversation": {"speaker_a": "A", "speaker_b": "B", ` + fields + `}}]`
	}
	session := `"session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "a"}]`
	withQA := func(qa string) string {
		return `[{"sample_id": "c1", "qa": [` + qa + `], "conversation": {"speaker_a": "A", "speaker_b": "B", ` + session + `}}]`
	}
	for _, tc := range []struct{ name, data, want string }{
		{"empty", ``, "line 1, column 1: malformed JSON"},
		{"truncated", "[\n {\"sample_id\": \"c1\",\n", "line 3, column 1: malformed JSON"},
		{"trailing comma", "[{\"sample_id\": \"c1\"},]", "line 1, column 22: malformed JSON"},
		{"not an array", `{"sample_id": "c1"}`, "must be a JSON array"},
		{"no conversations", `[]`, "no conversations"},
		{"invalid UTF-8", "[\n{\"sample_id\": \"c\xff\"}]", "line 2, column 17: invalid UTF-8"},
		{"conversation not an object", "[\n  5]", "line 2, column 3: conversation 1: the value is a JSON number where a JSON object belongs"},
		{"sample_id a number", "[\n {\"sample_id\": 7}]", "line 2, column 16: conversation 1: sample_id is a JSON number where a JSON string belongs"},
		{"category a string", "[{\"sample_id\": \"c1\",\n \"qa\": [{\"question\": \"q\", \"category\": \"2\"}]}]", "line 2, column 41: conversation 1: qa.category is a JSON string where a JSON integer belongs"},
		{"no sample_id", `[{"qa": [], "conversation": {}}]`, "conversation 1: sample_id is missing"},
		{"bad sample_id", `[{"sample_id": " c1", "qa": [], "conversation": {}}]`, "sample_id cannot name a store's user"},
		{"no conversation", `[{"sample_id": "c1", "qa": []}]`, "conversation 1 (c1): the conversation field is missing"},
		{"no qa", `[{"sample_id": "c1", "conversation": {}}]`, "conversation 1 (c1): the qa field is missing"},
		{"no speaker_b", `[{"sample_id": "c1", "qa": [], "conversation": {"speaker_a": "A"}}]`, "conversation.speaker_b is missing"},
		{"same speakers", `[{"sample_id": "c1", "qa": [], "conversation": {"speaker_a": "A", "speaker_b": "A"}}]`, `speaker_a and speaker_b are both "A"`},
		{"no turns", conv(`"session_1_date_time": "1:00 pm on 1 May, 2023"`), "the conversation has no turns"},
		{"session without time", conv(`"session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "a"}]`), "conversation.session_1_date_time is missing"},
		{"bad time", conv(`"session_1_date_time": "yesterday", "session_1": []`), `session_1_date_time: date time "yesterday"`},
		{"bad orphan time", conv(session + `, "session_2_date_time": 5`), "conversation.session_2_date_time must be a string"},
		{"session not a list", conv(`"session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": {}`), "session_1 must be an array of turns"},
		{"turn text a number", conv(`"session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": 3}]`), "text is a JSON number where a JSON string belongs"},
		{"session zero", conv(`"session_0_date_time": "1:00 pm on 1 May, 2023", "session_0": []`), "session_0 is not a session number"},
		{"no dia_id", conv(`"session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": [{"speaker": "A", "text": "a"}]`), "session_1, turn 1: dia_id is missing"},
		{"no text", conv(`"session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": [{"speaker": "A", "dia_id": "D1:1"}]`), "turn 1 (D1:1): text is missing"},
		{"no speaker", conv(`"session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": [{"dia_id": "D1:1", "text": "a"}]`), "turn 1 (D1:1): speaker is missing"},
		{"stranger", conv(`"session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": [{"speaker": "C", "dia_id": "D1:1", "text": "a"}]`), `speaker "C" is neither speaker_a "A" nor speaker_b "B"`},
		{"duplicate dia_id", conv(session + `, "session_2_date_time": "1:00 pm on 2 May, 2023", "session_2": [{"speaker": "A", "dia_id": "D1:1", "text": "b"}]`), `session_2, turn 1: dia_id "D1:1" is used twice (also at session_1, turn 1)`},
		{"no question", withQA(`{"evidence": [], "category": 1}`), "question 1: question is missing"},
		{"blank question", withQA(`{"question": " ", "evidence": [], "category": 1}`), "question 1: question is missing or empty"},
		{"no category", withQA(`{"question": "q", "evidence": []}`), "question 1: category is missing"},
		{"category 6", withQA(`{"question": "q", "evidence": [], "category": 6}`), "question 1: category is 6"},
		{"no evidence field", withQA(`{"question": "q", "category": 1}, {"question": "r", "category": 1}`), "question 1: evidence is missing"},
		{"NUL in text", conv(`"session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "a\u0000b"}]`), `session_1, turn 1 ("D1:1"): dia_id or text contains a NUL character`},
		{"huge turn", conv(`"session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "` + strings.Repeat("x", 1<<20) + `"}]`), "session_1, turn 1 (D1:1): the turn is 1048579 bytes with its speaker; a record holds at most 1048576"},
		{"huge dia_id", conv(`"session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": [{"speaker": "A", "dia_id": "` + strings.Repeat("D", 64<<10) + `", "text": "a"}]`), "session_1, turn 1: dia_id is 65536 bytes; a record's metadata holds at most 65530"},
		{"NUL in question", withQA(`{"question": "q\u0000", "evidence": [], "category": 1}`), "question 1: question contains a NUL character"},
		{"huge question", withQA(`{"question": "` + strings.Repeat("q", 64<<10+1) + `", "evidence": [], "category": 1}`), "question 1: question is 65537 bytes; a text search takes at most 65536"},
		{"comma after the last conversation", `[` + strings.Repeat(`{"sample_id": "c1", "qa": [], "conversation": {"speaker_a": "A", "speaker_b": "B", `+session+`}},`, 2) + `]`, "malformed JSON"},
		{"duplicate sample_id", `[{"sample_id": "c1", "qa": [], "conversation": {"speaker_a": "A", "speaker_b": "B", ` + session + `}}, {"sample_id": "c1", "qa": [], "conversation": {"speaker_a": "A", "speaker_b": "B", ` + session + `}}]`, `conversations 1 and 2 have the same sample_id "c1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := Parse([]byte(tc.data))
			if err == nil {
				t.Fatalf("Parse succeeded with %d conversations, want an error containing %q", len(ds.Conversations), tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestParseIgnoresAnnotations checks that the summaries and observations
// are not read: changing them, even to the wrong type, changes nothing.
func TestParseIgnoresAnnotations(t *testing.T) {
	a, err := Parse([]byte(miniData))
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(miniData, `"event_summary": {"x": "the answer is Ann"}, "observation": {}, "session_summary": {}`,
		`"event_summary": 1, "observation": [true], "session_summary": null`, 1)
	if other == miniData {
		t.Fatal("the fixture has no annotations to change")
	}
	b, err := Parse([]byte(other))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Conversations[0].Turns) != len(b.Conversations[0].Turns) || len(a.Conversations[0].Questions) != len(b.Conversations[0].Questions) {
		t.Error("changing the annotations changed what was loaded")
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data.json")
	if err := os.WriteFile(path, []byte(miniData), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(path, int64(len(miniData))); err != nil {
		t.Errorf("a file of exactly the limit: %v", err)
	}
	_, err := LoadFile(path, int64(len(miniData))-1)
	if err == nil || !strings.Contains(err.Error(), "the limit is") || !strings.Contains(err.Error(), path) {
		t.Errorf("a file over the limit: %v, want an error naming the file and the limit", err)
	}
	if _, err := LoadFile(filepath.Join(dir, "missing.json"), MaxDataBytes); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("a missing file: %v, want an error naming it", err)
	}
	if _, err := LoadFile(dir, MaxDataBytes); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v, want an error saying it is not a regular file", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("[\n{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(bad, MaxDataBytes); err == nil || !strings.Contains(err.Error(), bad+": line 2") {
		t.Errorf("a malformed file: %v, want an error naming the file and the line", err)
	}
}

// FuzzParse checks that no input makes the loader panic, and that what it
// accepts is consistent: turns strictly ordered in time, unique dia_ids,
// and questions marked skipped exactly when an evidence id is unknown.
func FuzzParse(f *testing.F) {
	f.Add([]byte(miniData))
	f.Add([]byte(`[{"sample_id": "s", "qa": [], "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "a"}]}}]`))
	f.Add([]byte(`[5]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ds, err := Parse(data)
		if err != nil {
			return
		}
		for _, c := range ds.Conversations {
			ids := map[string]bool{}
			for i, tr := range c.Turns {
				if ids[tr.DiaID] {
					t.Fatalf("dia_id %q twice", tr.DiaID)
				}
				ids[tr.DiaID] = true
				if i > 0 && !tr.Created.After(c.Turns[i-1].Created) {
					t.Fatalf("turn %d not after turn %d", i, i-1)
				}
			}
			for _, q := range c.Questions {
				unknown := len(q.Evidence) == 0
				for _, e := range q.Evidence {
					unknown = unknown || !ids[e]
				}
				if unknown != (q.Skip != "") {
					t.Fatalf("question %q with evidence %q: skip %q", q.Text, q.Evidence, q.Skip)
				}
			}
		}
	})
}
