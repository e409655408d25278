package tiers

import (
	"math"
	"time"

	"github.com/agentmem/memory"
)

// ParseTTL parses a time-to-live as the memory spec writes it: "1h",
// "24h", "7d". It accepts everything time.ParseDuration accepts ("90m",
// "1h30m", "1.5h") plus two longer units, "d" (24 hours) and "w" (7 days),
// which may be mixed with the others ("1d12h", "2w"). The empty string and
// any zero duration ("0", "0d") mean no expiry and return 0. A negative
// value, a missing or unknown unit, a value that overflows time.Duration,
// or any other text is memory.ErrInvalidArgument naming the value. White
// space is not accepted.
func ParseTTL(s string) (time.Duration, error) {
	if s == "" || s == "0" {
		return 0, nil
	}
	bad := func(why string) (time.Duration, error) {
		return 0, memory.Errorf(memory.ErrInvalidArgument, "ttl %q: %s", s, why)
	}
	if s[0] == '-' {
		return bad("a time-to-live cannot be negative")
	}
	var total time.Duration
	for rest := s; rest != ""; {
		// One segment: a decimal number, then a unit.
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		if i == 0 {
			return bad("expected a number")
		}
		j := i
		for j < len(rest) && !(rest[j] >= '0' && rest[j] <= '9' || rest[j] == '.') {
			j++
		}
		number, unit, segment := rest[:i], rest[i:j], rest[:j]
		rest = rest[j:]
		if unit == "" {
			return bad("missing unit (use s, m, h, d or w)")
		}
		var scale time.Duration = 1
		switch unit {
		case "d":
			unit, scale = "h", 24
		case "w":
			unit, scale = "h", 24*7
		}
		d, err := time.ParseDuration(number + unit)
		if err != nil {
			return bad("malformed number, unknown unit or out of range: " + segment)
		}
		if d > math.MaxInt64/scale {
			return bad("too long")
		}
		d *= scale
		if total > math.MaxInt64-d {
			return bad("too long")
		}
		total += d
	}
	return total, nil
}
