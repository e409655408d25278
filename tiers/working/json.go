package working

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/agentmem/memory"
)

// member is one name/value pair of a JSON object, the value kept as its
// raw text.
type member struct {
	name  string
	value json.RawMessage
}

// object is a parsed JSON object: its members in order, and an index by
// name once it has more than a few.
type object struct {
	ms  []member
	idx map[string]int
}

// linearObject is how many members an object is searched linearly at most.
const linearObject = 8

// find returns the position of the member named name, or -1.
func (o *object) find(name string) int {
	if len(o.ms) <= linearObject {
		for i, m := range o.ms {
			if m.name == name {
				return i
			}
		}
		return -1
	}
	if o.idx == nil {
		o.idx = make(map[string]int, len(o.ms))
		for i, m := range o.ms {
			o.idx[m.name] = i
		}
	}
	if i, ok := o.idx[name]; ok {
		return i
	}
	return -1
}

// set replaces the value of the member named name, in its place, or adds
// the member at the end.
func (o *object) set(name string, v json.RawMessage) {
	if i := o.find(name); i >= 0 {
		o.ms[i].value = v
		return
	}
	o.ms = append(o.ms, member{name, v})
	if o.idx != nil {
		o.idx[name] = len(o.ms) - 1
	}
}

// valueKind returns the first byte of a JSON value's text: '{', '[', '"',
// 't', 'f', 'n' or a digit or '-'; 0 for empty text.
func valueKind(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// parseObject returns the members of the JSON object b in their order,
// each value as its raw text: json.RawMessage keeps numbers and nested
// values as written. A name given twice keeps its first position and its
// last value, as encoding/json keeps the last value. ok is false when b
// is not an object; err, when b is not valid JSON (the decoder checks b
// as it reads it, so b need not be checked before).
func parseObject(b []byte) (o *object, ok bool, err error) {
	if valueKind(b) != '{' {
		return nil, false, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // the '{'
		return nil, true, err
	}
	o = &object{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, true, err
		}
		name, _ := t.(string) // in an object, the decoder gives names here
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, true, err
		}
		o.set(name, v)
	}
	if _, err := dec.Token(); err != nil { // the '}'
		return nil, true, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, true, errors.New("data after the object")
	}
	return o, true, nil
}

// writeObject writes the members of o as a JSON object. Values keep their
// text, inner white space included; names are written without
// encoding/json's HTML escaping, so they read back as written.
func writeObject(o *object) json.RawMessage {
	n := 2
	for _, m := range o.ms {
		n += len(m.name) + len(m.value) + 4
	}
	b := bytes.NewBuffer(make([]byte, 0, n))
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	b.WriteByte('{')
	for i, m := range o.ms {
		if i > 0 {
			b.WriteByte(',')
		}
		_ = enc.Encode(m.name)  // a string always encodes
		b.Truncate(b.Len() - 1) // Encode's newline
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// writeArray writes elems as a JSON array.
func writeArray(elems []json.RawMessage) json.RawMessage {
	n := 2 + len(elems)
	for _, e := range elems {
		n += len(e)
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, e := range elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, ']')
}

// notValid is the error of a side of a merge that is not valid JSON.
func notValid(what string) error {
	return memory.Errorf(memory.ErrInvalidArgument, "%s is not valid JSON", what)
}

// checkValid reports ErrInvalidArgument naming what when b is not one
// valid JSON value.
func checkValid(what string, b json.RawMessage) error {
	if !json.Valid(b) {
		return notValid(what)
	}
	return nil
}
