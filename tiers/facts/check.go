package facts

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
)

// checkFact validates fact i of an Add: its text, its sources (record ids,
// each once) and its Supersedes (empty or a record id).
func checkFact(i int, f extract.Fact) error {
	if err := extract.CheckFactText(f.Text); err != nil {
		e := err.(*memory.Error)
		return memory.Errorf(e.Kind, "fact %d: %s", i, e.Msg)
	}
	seen := make(map[string]bool, len(f.Sources))
	for j, s := range f.Sources {
		if err := checkID(fmt.Sprintf("source %d of fact %d", j, i), s); err != nil {
			return err
		}
		if seen[s] {
			return memory.Errorf(memory.ErrInvalidArgument, "facts: fact %d names source %q twice", i, s)
		}
		seen[s] = true
	}
	if f.Supersedes != "" {
		return checkID(fmt.Sprintf("the fact that fact %d supersedes", i), f.Supersedes)
	}
	return nil
}

// checkID validates a record id a caller names: not empty, at most
// memory.MaxIDBytes bytes of valid UTF-8 without NUL. It reports
// memory.ErrInvalidArgument naming what the id is.
func checkID(what, id string) error {
	switch {
	case id == "":
		return memory.Errorf(memory.ErrInvalidArgument, "facts: %s: the id is empty", what)
	case len(id) > memory.MaxIDBytes:
		return memory.Errorf(memory.ErrInvalidArgument, "facts: %s: the id is %d bytes, the limit is %d", what, len(id), memory.MaxIDBytes)
	case !utf8.ValidString(id) || strings.IndexByte(id, 0) >= 0:
		return memory.Errorf(memory.ErrInvalidArgument, "facts: %s: the id %q is not valid UTF-8 without NUL", what, id)
	}
	return nil
}
