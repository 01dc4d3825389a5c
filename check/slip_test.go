package check

import "testing"

// The suspect is the sharpest fall by half the walks or more, before the
// critical step (the last figure), whose own fall never counts.
func TestSuspect(t *testing.T) {
	for _, tc := range []struct {
		recovered []int
		want      int
	}{
		{[]int{20, 20, 19, 0}, 0},          // only the critical step falls
		{[]int{20, 11, 10, 0}, 0},          // 9 of 20: not half
		{[]int{20, 10, 10, 0}, 11},         // 10 of 20
		{[]int{20, 9, 9, 1, 0}, 11},        // the first of two falls, the larger
		{[]int{20, 12, 20, 2, 2, 0}, 13},   // the larger of two
		{[]int{20, 10, 20, 10, 10, 0}, 11}, // equal falls: the first
		{[]int{5}, 0},
		{nil, 0},
	} {
		if got := suspect(10, tc.recovered, 20); got != tc.want {
			t.Errorf("suspect(10, %v, 20) = %d, want %d", tc.recovered, got, tc.want)
		}
	}
}
