package lines

import (
	"testing"
	"unsafe"
)

// TestNewPads: the T New returns has Size bytes of its own allocation
// before and after it, so no other object's bytes are within a line of
// it.
func TestNewPads(t *testing.T) {
	type three struct{ a, b, c int64 }
	p := New[three]()
	var z padded[three]
	if off := unsafe.Offsetof(z.v); off != Size {
		t.Errorf("the value is %d bytes into its block, want %d", off, Size)
	}
	if n := unsafe.Sizeof(z); n < 2*Size+unsafe.Sizeof(three{}) {
		t.Errorf("a padded value is %d bytes, want at least %d", n, 2*Size+unsafe.Sizeof(three{}))
	}
	p.a, p.c = 1, 3
	if *p != (three{a: 1, c: 3}) {
		t.Errorf("*New() = %+v after two writes", *p)
	}
}
