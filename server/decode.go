package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/agentmem/memory"
)

// readBody reads r's body, at most limit bytes: a declared length over
// the limit is refused before anything is read, and reading stops as
// soon as it passes the limit.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, memory.Errorf(memory.ErrTooLarge, "server: a body of %d bytes, the limit is %d", r.ContentLength, limit)
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, memory.Errorf(memory.ErrTooLarge, "server: the body is over the limit of %d bytes", limit)
	case err != nil:
		if ctxErr := r.Context().Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, memory.Wrap(memory.ErrInvalidArgument, err, "server: reading the body")
	}
	return b, nil
}

// request is a request body of the contract.
type request interface{ Validate() error }

// decode reads body into v strictly — valid UTF-8, one JSON object, no
// unknown field, each key spelt exactly as the contract spells it and
// given once, nothing after it — and validates it.
func decode[T request](body []byte) (T, error) {
	var v T
	if !utf8.Valid(body) {
		return v, memory.Errorf(memory.ErrInvalidArgument, "server: the body is not valid UTF-8")
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return v, memory.Errorf(memory.ErrInvalidArgument, "server: the body is not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, memory.Wrap(memory.ErrInvalidArgument, err, "server: the body does not decode")
	}
	if _, err := dec.Token(); err != io.EOF {
		return v, memory.Errorf(memory.ErrInvalidArgument, "server: data after the JSON object")
	}
	// encoding/json matches keys without regard to case and lets a
	// repeated key win; the body decoded, so its shape is v's type's,
	// and a second reading checks the keys alone.
	if err := exactKeys(json.NewDecoder(bytes.NewReader(body)), reflect.TypeFor[T]()); err != nil {
		return v, err
	}
	return v, v.Validate()
}

// exactKeys reads one value of type t from dec, which decoded into t
// already, and fails on an object key that is not exactly one of its
// struct's JSON names or that the object repeats.
func exactKeys(dec *json.Decoder, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return memory.Wrap(memory.ErrInvalidArgument, err, "server: the body does not decode")
	}
	switch tok {
	case json.Delim('{'):
		if t.Kind() != reflect.Struct {
			return skipRest(dec, 1)
		}
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return memory.Wrap(memory.ErrInvalidArgument, err, "server: the body does not decode")
			}
			key, _ := k.(string)
			f, ok := jsonField(t, key)
			switch {
			case !ok:
				return memory.Errorf(memory.ErrInvalidArgument, "server: unknown field %q (field names are case-sensitive)", key)
			case seen[key]:
				return memory.Errorf(memory.ErrInvalidArgument, "server: field %q given twice", key)
			}
			seen[key] = true
			if err := exactKeys(dec, f.Type); err != nil {
				return err
			}
		}
		_, err = dec.Token() // '}'
	case json.Delim('['):
		for dec.More() {
			if err := exactKeys(dec, elem(t)); err != nil {
				return err
			}
		}
		_, err = dec.Token() // ']'
	}
	if err != nil {
		return memory.Wrap(memory.ErrInvalidArgument, err, "server: the body does not decode")
	}
	return nil
}

// elem is the element type of a slice or array type, or t itself.
func elem(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		return t.Elem()
	}
	return t
}

// skipRest reads to the end of depth open objects or arrays.
func skipRest(dec *json.Decoder, depth int) error {
	for depth > 0 {
		tok, err := dec.Token()
		if err != nil {
			return memory.Wrap(memory.ErrInvalidArgument, err, "server: the body does not decode")
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

// jsonField returns the field of struct type t whose JSON name is
// exactly key.
func jsonField(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
