package reports

import "testing"

// The tail says the path settled only where it did: after its last new
// state it went on among states it had been in. A path new at every step
// (terms climbing) settles nowhere, and the tail says nothing of it.
func TestTailSettles(t *testing.T) {
	step := func(i int, fp uint64) Step {
		return Step{Step: i, Kind: "timer", Node: 0, Event: "timer t at 0", State: fp}
	}
	for _, tc := range []struct {
		name            string
		states          []uint64
		settled, within int
	}{
		{"a cycle of two", []uint64{1, 2, 3, 2, 3, 2}, 3, 2},
		{"one state again and again", []uint64{1, 2, 2, 2}, 2, 1},
		{"new at every step", []uint64{1, 2, 3, 4, 5}, 0, 0},
		{"new at the last step", []uint64{1, 2, 1, 2, 3}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var path []Step
			for i, fp := range tc.states {
				path = append(path, step(i+1, fp))
			}
			tail := SummarizeTail(path, 0)
			if tail.SettledAfter != tc.settled || tail.Distinct != tc.within {
				t.Errorf("settled after step %d within %d states, want %d within %d (%s)", tail.SettledAfter, tail.Distinct, tc.settled, tc.within, tail)
			}
		})
	}
}
