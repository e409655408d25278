package qdrantserver

import (
	"strconv"
	"strings"
)

// A path addresses values in a payload as Qdrant's JSON paths do: "a.b"
// descends into objects, "a[]" into every element of an array and "a[2]"
// into one; a key may be quoted ("a.\"b.c\"").
type path struct {
	first string
	rest  []step
}

type stepKind int

const (
	stepKey stepKind = iota
	stepIndex
	stepAll
)

type step struct {
	kind  stepKind
	key   string
	index int
}

// parsePath reads a payload key.
func parsePath(s string) (path, error) {
	var p path
	key, rest, err := readKey(s)
	if err != nil {
		return p, err
	}
	p.first = key
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, "[]"):
			p.rest = append(p.rest, step{kind: stepAll})
			rest = rest[2:]
		case rest[0] == '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return p, badInput("Invalid JSON path: %q", s)
			}
			n, err := strconv.Atoi(rest[1:end])
			if err != nil || n < 0 {
				return p, badInput("Invalid JSON path: %q", s)
			}
			p.rest = append(p.rest, step{kind: stepIndex, index: n})
			rest = rest[end+1:]
		case rest[0] == '.':
			k, r, err := readKey(rest[1:])
			if err != nil {
				return p, err
			}
			p.rest = append(p.rest, step{kind: stepKey, key: k})
			rest = r
		default:
			return p, badInput("Invalid JSON path: %q", s)
		}
	}
	return p, nil
}

func readKey(s string) (key, rest string, err error) {
	if strings.HasPrefix(s, `"`) {
		end := strings.IndexByte(s[1:], '"')
		if end < 0 {
			return "", "", badInput("Invalid JSON path: %q", s)
		}
		return s[1 : end+1], s[end+2:], nil
	}
	i := strings.IndexAny(s, ".[")
	if i < 0 {
		i = len(s)
	}
	if i == 0 {
		return "", "", badInput("Invalid JSON path: %q", s)
	}
	return s[:i], s[i:], nil
}

// arrayKey appends "[]" unless the path already ends with it, as a nested
// condition's key is read.
func (p path) arrayKey() path {
	if n := len(p.rest); n > 0 && p.rest[n-1].kind == stepAll {
		return p
	}
	rest := append(append([]step(nil), p.rest...), step{kind: stepAll})
	return path{first: p.first, rest: rest}
}

// get returns the values at the path, as Qdrant's value_get does: a key
// step only descends into an object, "[]" into every element and "[n]" into
// one, and the values reached are returned as they are: an array at the end
// is one value, not flattened.
func (p path) get(payload map[string]any) []any {
	v, ok := payload[p.first]
	if !ok {
		return nil
	}
	var out []any
	var walk func(v any, steps []step)
	walk = func(v any, steps []step) {
		if len(steps) == 0 {
			out = append(out, v)
			return
		}
		s := steps[0]
		switch s.kind {
		case stepKey:
			if obj, ok := v.(map[string]any); ok {
				if next, ok := obj[s.key]; ok {
					walk(next, steps[1:])
				}
			}
		case stepIndex:
			if arr, ok := v.([]any); ok && s.index < len(arr) {
				walk(arr[s.index], steps[1:])
			}
		case stepAll:
			if arr, ok := v.([]any); ok {
				for _, e := range arr {
					walk(e, steps[1:])
				}
			}
		}
	}
	walk(v, p.rest)
	return out
}
