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
	m := newMemBudget(1<<40, 1)
	if !m.fits(0) || m.fits(1<<40) || m.fits(0) {
		t.Fatalf("a 1 TiB budget: fits(0), not fits(1 TiB), then spent")
	}
	if none := newMemBudget(0, 1); !none.fits(1<<62) || none.over() {
		t.Fatal("no budget: everything fits")
	}
}

// The collector's pace: 128 MB of room for garbage while the live heap is
// small, 256 MB on more than one worker with much to scan, at most 16
// times the live heap; past 192 MB an eighth of the heap, busy or not.
func TestGCPercentFor(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		live int64
		busy bool
		want int64
	}{
		{50 * mb, false, 250}, // 128 MB over 50
		{50 * mb, true, 500},  // 256 MB over 50
		{100 * mb, true, 250}, // 256 MB over 100
		{4 * mb, false, 1600}, // 32 times the heap: 16
		{4 * mb, true, 1600},  // the same bound
		{300 * mb, false, 12}, // an eighth
		{300 * mb, true, 12},  // the same: the heap is not small
		{1000 * mb, true, 12}, // an eighth
		{150 * mb, false, 75}, // 128 MB over 150: 85, in steps of 25
		{150 * mb, true, 150}, // 256 MB over 150: 170
	} {
		if got := gcPercentFor(tc.live, tc.busy); got != tc.want {
			t.Errorf("live %d MB, busy %v: GOGC %d, want %d", tc.live/mb, tc.busy, got, tc.want)
		}
	}
}

// The busy room is for a check on more than one worker whose heap has had
// 32 MB to scan, and stays once it has, though the figure falls again.
func TestScansMuch(t *testing.T) {
	const mb = 1 << 20
	one, two := newMemBudget(0, 1), newMemBudget(0, 2)
	for i, tc := range []struct {
		scan     int64
		one, two bool
	}{
		{10 * mb, false, false},
		{31 * mb, false, false},
		{32 * mb, false, true},
		{10 * mb, false, true},
	} {
		if got := one.scansMuch(tc.scan); got != tc.one {
			t.Errorf("step %d, %d MB to scan, 1 worker: %v, want %v", i, tc.scan/mb, got, tc.one)
		}
		if got := two.scansMuch(tc.scan); got != tc.two {
			t.Errorf("step %d, %d MB to scan, 2 workers: %v, want %v", i, tc.scan/mb, got, tc.two)
		}
	}
}
