//go:build amd64 && !purego

package vecmath

import "testing"

func TestDetectionAgreesWithCPUInfo(t *testing.T) {
	// On Linux, /proc/cpuinfo lists avx2 and fma only when the CPU has
	// them and the kernel enabled the AVX register state, which is what
	// the CPUID and XGETBV check looks for; the two must agree.
	if !cpuinfoHas(t) {
		t.Logf("no CPU flags in /proc/cpuinfo to cross-check; CPUID says AVX2+FMA = %v", hasAVX2FMA)
		return
	}
	want := cpuinfoHas(t, "avx2", "fma")
	if hasAVX2FMA != want {
		t.Errorf("CPUID detection says AVX2+FMA = %v, /proc/cpuinfo says %v", hasAVX2FMA, want)
	}
	if !hasAVX2FMA {
		t.Logf("this CPU lacks AVX2 or FMA: the assembly kernel is not tested, only the generic one")
	}
}
