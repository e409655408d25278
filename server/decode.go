package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
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
// unknown field, nothing after it — and validates it.
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
	return v, v.Validate()
}
