package tiers_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/tiers"
)

// FuzzParseTTL checks ParseTTL on arbitrary text: it never panics, every
// failure is ErrInvalidArgument naming the value, a success is never
// negative, and whatever time.ParseDuration accepts without days or weeks
// parses to the same duration.
func FuzzParseTTL(f *testing.F) {
	for _, s := range []string{"1h", "24h", "7d", "2w", "1d12h", "90m", "1.5h", "0", "", "-1h", "7", "d", "1e9d", "106751d", "1h 2m", "١h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := tiers.ParseTTL(s)
		if err != nil {
			if !errors.Is(err, memory.ErrInvalidArgument) {
				t.Fatalf("ParseTTL(%q) error %v is not ErrInvalidArgument", s, err)
			}
			if !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("ParseTTL(%q) error %q does not name the value", s, err)
			}
			return
		}
		if d < 0 {
			t.Fatalf("ParseTTL(%q) = %v, negative", s, d)
		}
		if !strings.ContainsAny(s, "dw") {
			if want, err := time.ParseDuration(s); err == nil && want != d {
				t.Fatalf("ParseTTL(%q) = %v, time.ParseDuration gives %v", s, d, want)
			}
		}
	})
}
