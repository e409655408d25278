package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/agentmem/memory"
)

// The keys a reply's JSON may use. Only these spellings, in lower case,
// are read, so that two keys never compete in an order a map would pick.
var (
	listKeys       = []string{"facts", "memories", "memory"}
	textKeys       = []string{"text", "fact", "memory", "content", "statement"}
	sourceKeys     = []string{"sources", "source", "source_turns", "turns", "turn_ids", "evidence"}
	supersedesKeys = []string{"supersedes", "replaces", "contradicts", "updates"}
)

// decodeFacts reads the facts of the JSON value that opens at s[0], and
// returns where in s that value ends (s's end when it does not close, or
// when it nests too deeply to be read).
func decodeFacts(s string) ([]Fact, int, error) {
	rep, err := repair(s)
	if err != nil {
		return nil, len(s), err
	}
	facts, err := decodeRepaired(rep)
	return facts, rep.end, err
}

// decodeRepaired reads the facts of a repaired JSON value.
func decodeRepaired(rep repaired) ([]Fact, error) {
	dec := json.NewDecoder(bytes.NewReader(rep.json))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, Malformed("the model's reply is not JSON: %v", err)
	}
	switch tok {
	case json.Delim('['):
		elems, truncated, err := readList(dec)
		if err != nil {
			return nil, err
		}
		return listFacts(elems, truncated)
	case json.Delim('{'):
		return readObject(dec)
	}
	return nil, Malformed("the model's reply opens with %v, not an object or array", tok)
}

// readList reads the elements of a list whose '[' dec has just read, and
// its ']'. A list cut off by the end of the reply gives the elements
// before the cut and truncated true; any other error is malformed output.
func readList(dec *json.Decoder) (elems []json.RawMessage, truncated bool, err error) {
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if cutOff(err) {
				return elems, true, nil
			}
			return nil, false, Malformed("the model's list of facts is not JSON: %v", err)
		}
		elems = append(elems, raw)
	}
	if _, err := dec.Token(); err != nil {
		if cutOff(err) {
			return elems, true, nil
		}
		return nil, false, Malformed("the model's list of facts is not JSON: %v", err)
	}
	return elems, false, nil
}

// readObject reads an object whose '{' dec has just read: a list of facts
// under one of listKeys, or else one fact.
func readObject(dec *json.Decoder) ([]Fact, error) {
	fields := map[string]json.RawMessage{}
	var elems []json.RawMessage
	listed, listCut, truncated := false, false, false
	for !truncated && dec.More() {
		tok, err := dec.Token()
		if err != nil {
			if cutOff(err) {
				truncated = true
				break
			}
			return nil, Malformed("the model's reply is not JSON: %v", err)
		}
		key, _ := tok.(string) // in an object, Token returns keys as strings
		if !listed && slices.Contains(listKeys, key) {
			listed = true
			elems, listCut, err = readListValue(dec)
			if err != nil {
				return nil, err
			}
			truncated = listCut
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if cutOff(err) {
				truncated = true
				break
			}
			return nil, Malformed("the model's reply is not JSON: %v", err)
		}
		fields[key] = raw
	}
	if !truncated {
		if _, err := dec.Token(); err != nil && !cutOff(err) {
			return nil, Malformed("the model's reply is not JSON: %v", err)
		}
	}
	switch {
	case listed:
		return listFacts(elems, listCut)
	case truncated:
		return nil, Malformed("the model's reply ends inside its JSON object")
	case firstField(fields, textKeys) == nil:
		return nil, Malformed("the model's JSON object has no list of facts and no fact text")
	}
	f, ok, err := objectFact(fields)
	if err != nil {
		return nil, Malformed("the model's fact: %s", err.Error())
	}
	if !ok {
		return nil, nil
	}
	return []Fact{f}, nil
}

// readListValue reads the value of a list key: a list, a single string
// (one fact), or null (no facts).
func readListValue(dec *json.Decoder) (elems []json.RawMessage, truncated bool, err error) {
	tok, err := dec.Token()
	if err != nil {
		if cutOff(err) {
			return nil, true, nil
		}
		return nil, false, Malformed("the model's reply is not JSON: %v", err)
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			return readList(dec)
		}
	case string:
		raw, _ := json.Marshal(v)
		return []json.RawMessage{raw}, false, nil
	case nil:
		return nil, false, nil
	}
	return nil, false, Malformed("the model's list of facts is %v, not a list", tok)
}

// cutOff reports whether a decoding error is the end of the reply, which
// a truncated reply reaches inside a value.
func cutOff(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// listFacts reads the elements of a list of facts. A list cut off before
// its first element is whole is malformed: it is not a list of no facts.
func listFacts(elems []json.RawMessage, truncated bool) ([]Fact, error) {
	if truncated && len(elems) == 0 {
		return nil, Malformed("the model's reply ends before its first fact")
	}
	var facts []Fact
	for i, raw := range elems {
		f, ok, err := elementFact(raw)
		if err != nil {
			return nil, Malformed("fact %d of the model's reply: %s", i, err.Error())
		}
		if ok {
			facts = append(facts, f)
		}
	}
	return facts, nil
}

// elementFact reads one element of a list of facts: a string or an
// object. ok is false for a fact dropped for its text (see textFact).
func elementFact(raw json.RawMessage) (f Fact, ok bool, err error) {
	switch raw[0] {
	case '"':
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return Fact{}, false, err
		}
		f.Text, ok = textFact(text)
		return f, ok, nil
	case '{':
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return Fact{}, false, err
		}
		if firstField(fields, textKeys) == nil {
			return Fact{}, false, errors.New("the object has no text")
		}
		return objectFact(fields)
	}
	return Fact{}, false, errors.New("it is neither a string nor an object")
}

// objectFact reads a fact object whose fields hold a text key.
func objectFact(fields map[string]json.RawMessage) (Fact, bool, error) {
	var text string
	if err := json.Unmarshal(firstField(fields, textKeys), &text); err != nil {
		return Fact{}, false, errors.New("its text is not a string")
	}
	t, ok := textFact(text)
	if !ok {
		return Fact{}, false, nil
	}
	f := Fact{Text: t, Sources: refs(firstField(fields, sourceKeys))}
	if sup := refs(firstField(fields, supersedesKeys)); len(sup) > 0 {
		f.Supersedes = sup[0]
	}
	return f, true, nil
}

// textFact returns text as a fact's text, one line, and false when that
// is empty or longer than MaxFactBytes.
func textFact(text string) (string, bool) {
	t := oneLine(text)
	return t, t != "" && len(t) <= MaxFactBytes
}

// firstField returns the value of the first of keys that fields holds,
// or nil.
func firstField(fields map[string]json.RawMessage, keys []string) json.RawMessage {
	for _, k := range keys {
		if v, ok := fields[k]; ok {
			return v
		}
	}
	return nil
}

// refs reads references to turns or facts: a string (split at commas,
// semicolons and white space), a number, or a list of them; anything else
// is none. References longer than a record id are dropped.
func refs(raw json.RawMessage) []string {
	if raw == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	var out []string
	add := func(x any) {
		switch x := x.(type) {
		case string:
			for _, r := range strings.FieldsFunc(x, func(r rune) bool { return r == ',' || r == ';' || space(r) }) {
				if len(r) <= memory.MaxIDBytes {
					out = append(out, r)
				}
			}
		case json.Number:
			if len(x) <= memory.MaxIDBytes {
				out = append(out, x.String())
			}
		}
	}
	if list, ok := v.([]any); ok {
		for _, x := range list {
			add(x)
		}
	} else {
		add(v)
	}
	return out
}
