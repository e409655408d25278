package hugepages

import (
	"testing"
	"unsafe"
)

func TestInside(t *testing.T) {
	for _, c := range []struct{ p, n, off, size uintptr }{
		{0, Size, 0, Size},
		{Size, 3 * Size, 0, 3 * Size},
		{1, 2 * Size, Size - 1, Size},
		{1, 2*Size - 2, 0, 0}, // ends one byte short of a whole page
		{Size + 10, Size, 0, 0},
		{Size - 10, 2*Size + 20, 10, 2 * Size},
		{5, 0, 0, 0},
	} {
		if off, size := inside(c.p, c.n); off != c.off || size != c.size {
			t.Errorf("inside(%#x, %#x) = %#x, %#x; want %#x, %#x", c.p, c.n, off, size, c.off, c.size)
		}
	}
}

func TestMake(t *testing.T) {
	for _, c := range []struct{ n, capacity int }{{0, 0}, {3, 10}, {1 << 20, 1 << 20}, {10, 4 << 20}} {
		s := Make[int32](c.n, c.capacity)
		if len(s) != c.n || cap(s) != c.capacity {
			t.Fatalf("Make(%d, %d): len %d, cap %d", c.n, c.capacity, len(s), cap(s))
		}
		for i, v := range s[:cap(s)] {
			if v != 0 {
				t.Fatalf("Make(%d, %d)[%d] = %d", c.n, c.capacity, i, v)
			}
		}
	}
}

// interior returns the address of the first whole huge page in s.
func interior[T any](t *testing.T, s []T) uintptr {
	t.Helper()
	var zero T
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	off, size := inside(p, uintptr(cap(s))*unsafe.Sizeof(zero))
	if size == 0 {
		t.Fatalf("a slice of %d bytes holds no whole huge page", uintptr(cap(s))*unsafe.Sizeof(zero))
	}
	return p + off
}
