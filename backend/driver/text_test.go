package driver_test

import (
	"testing"

	"github.com/agentmem/memory/backend/driver"
)

// TestAsks checks what counts as asking a question.
func TestAsks(t *testing.T) {
	for text, want := range map[string]bool{
		"where?": true, "where ?)": true, "where?” ": true, "どこ？": true, "where?'\n": true,
		"here.": false, "": false, "?!": false, "why? no": false, " ) ": false, "a\xff": false,
	} {
		if got := driver.Asks(text); got != want {
			t.Errorf("Asks(%q) = %v, want %v", text, got, want)
		}
	}
}
