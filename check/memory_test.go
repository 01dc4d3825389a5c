package check

import "testing"

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "200MB": 200e6, "200mb": 200e6, "1.5GB": 1.5e9, "512MiB": 512 << 20, "2g": 2 << 30, "100": 100, " 4 GiB ": 4 << 30,
	} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MB", "-1MB", "12XB", "1e99GB", "1..2"} {
		if got, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) = %d, want an error", in, got)
		}
	}
}

// A budget already spent stays spent, and a structure too large for it
// does not fit.
func TestMemBudget(t *testing.T) {
	m := newMemBudget(1 << 40)
	if !m.fits(0) || m.fits(1<<40) || m.fits(0) {
		t.Fatalf("a 1 TiB budget: fits(0), not fits(1 TiB), then spent")
	}
	if none := newMemBudget(0); !none.fits(1<<62) || none.over() {
		t.Fatal("no budget: everything fits")
	}
}
