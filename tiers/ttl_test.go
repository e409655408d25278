package tiers_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/tiers"
)

func TestParseTTL(t *testing.T) {
	day := 24 * time.Hour
	good := []struct {
		in   string
		want time.Duration
	}{
		{"1h", time.Hour},
		{"24h", 24 * time.Hour},
		{"7d", 7 * day},
		{"90m", 90 * time.Minute},
		{"1h30m", 90 * time.Minute},
		{"1.5h", 90 * time.Minute},
		{"1.5d", 36 * time.Hour},
		{"1d12h", 36 * time.Hour},
		{"2w", 14 * day},
		{"1w2d", 9 * day},
		{"30s", 30 * time.Second},
		{"500ms", 500 * time.Millisecond},
		{"10µs", 10 * time.Microsecond},
		{"", 0},
		{"0", 0},
		{"0d", 0},
		{"0s", 0},
		{"106751d", 106751 * day},
	}
	for _, tc := range good {
		got, err := tiers.ParseTTL(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseTTL(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	bad := []string{
		"-1h", "-7d", "7", "d", "7x", "7 d", " 7d", "7d ", "seven days", "1h-", "+1h",
		"1..5h", ".d", "7dd", "7D", "1e3h", "106752d", "15251w", "99999999999999999999h",
	}
	for _, in := range bad {
		got, err := tiers.ParseTTL(in)
		if !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("ParseTTL(%q) = %v, %v; want ErrInvalidArgument", in, got, err)
			continue
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", in)) {
			t.Errorf("ParseTTL(%q) error %q does not name the value", in, err)
		}
	}
}
