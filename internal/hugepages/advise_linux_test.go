package hugepages

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
)

// requireEnv turns a test's "this machine lacks what it checks" skip into
// a failure, as it does for the tests needing servers (pgtest.RequireEnv):
// CI sets it, and its machines have transparent huge pages.
const requireEnv = "AGENTMEM_REQUIRE_SERVERS"

// missing skips t for what the machine lacks, or fails it under
// requireEnv.
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv(requireEnv) != "" {
		t.Fatalf(format+" (and %s is set)", append(args, requireEnv)...)
	}
	t.Skipf(format+" (set %s to make this a failure)", append(args, requireEnv)...)
}

// vmFlags returns the VmFlags of the mapping holding address a, from
// /proc/self/smaps, and its AnonHugePages line.
func vmFlags(t *testing.T, a uintptr) (flags []string, huge string) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		missing(t, "no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 { // a mapping's first line
			in = lo <= a && a < hi
			continue
		}
		if !in {
			continue
		}
		if v, ok := strings.CutPrefix(line, "AnonHugePages:"); ok {
			huge = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "VmFlags:"); ok {
			return strings.Fields(v), huge
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("no mapping in /proc/self/smaps holds %#x", a)
	return nil, ""
}

func has(flags []string, f string) bool {
	for _, x := range flags {
		if x == f {
			return true
		}
	}
	return false
}

// TestAdvised checks that the kernel took the advice: the mapping of a
// large array made by Make is flagged for huge pages (hg), and that of
// one made while the advice is off, or of a small one, is not.
func TestAdvised(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		missing(t, "this kernel has no transparent huge pages: %v", err)
	}
	disabled = true
	off := Make[int64](0, 8<<20)
	disabled = false
	on := Make[int64](8<<20, 8<<20)
	for i := range on {
		on[i] = int64(i)
	}
	small := Make[byte](MinBytes-1, MinBytes-1)
	flags, huge := vmFlags(t, interior(t, on))
	if !has(flags, "hg") {
		t.Errorf("the advised array's mapping has flags %v, no hg", flags)
	}
	t.Logf("the advised array's mapping has AnonHugePages %s", huge)
	if flags, _ := vmFlags(t, interior(t, off)); has(flags, "hg") {
		t.Errorf("with disablethp=1, the array's mapping has flags %v", flags)
	}
	if flags, _ := vmFlags(t, interior(t, small)); has(flags, "hg") {
		t.Errorf("an array under MinBytes was advised: flags %v", flags)
	}
	runtime.KeepAlive(off)
	runtime.KeepAlive(on)
	runtime.KeepAlive(small)
}
