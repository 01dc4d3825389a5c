package reports

import (
	"strings"
	"testing"
)

// Issue 26: the slip's reason in each of its forms, and "no slip found"
// said plainly.
func TestSlipReason(t *testing.T) {
	rec := &Evidence{Live: true, By: "search", StepsToLive: 2}
	for _, tc := range []struct {
		name string
		s    Slip
		want string
	}{
		{"fired", Slip{Found: true, Step: 18, Event: "timer recovery at 2", Timer: "recovery", Node: 2, How: "fired", State: "joining root=-1 timers=join,recovery",
			Changes: []Change{{Field: "timers", From: "join,recovery", To: "join"}}, Recovery: &Evidence{Live: true, By: "walk", StepsToLive: 47}},
			"step 18 fired timer recovery at 2 while node 2 was joining and did not set it again (timers: join,recovery -> join); had it still been set, the state after step 23 would recover: a walk of 47 steps from it reaches p"},
		{"cancelled, a failure", Slip{Found: true, Step: 3, Event: "deliver Ack{V:1} 1->0", Timer: "retry", Node: 0, How: "cancelled", State: "Node{V:2} timers=retry",
			Changes: []Change{{Field: "timers", From: "retry", To: "(none)"}}, Failure: true, Recovery: rec},
			"the protocol did not tolerate the failure at step 23 (drop X 0->1), which timer retry at 0 would have: step 3 (deliver Ack{V:1} 1->0) cancelled timer retry at 0 (timers: retry -> (none)); had it still been set, the state after step 23 would recover: p holds 2 steps from it (the nearest, by breadth-first search)"},
		{"reset", Slip{Found: true, Step: 5, Event: "reset 1", Timer: "t", Node: 1, How: "reset"},
			"step 5 reset node 1, which lost timer t at 1; had it still been set, the state after step 23 would recover"},
		{"ignored, the critical step", Slip{Found: true, Step: 23, Event: "deliver M 0->1", Message: "M 0->1", Node: 1, How: "ignored", State: "joining x=1", CriticalStep: true, Recovery: rec},
			"the slip is the critical step itself: step 23 delivered M 0->1, and node 1 did nothing with it while it was joining; had it still been in flight, the state would be the one before step 23, which recovers"},
		{"dropped", Slip{Found: true, Step: 4, Event: "drop M 0->1", Message: "M 0->1", Node: 1, How: "dropped"},
			"step 4 dropped M 0->1; had it still been in flight, the state after step 23 would recover"},
		{"lost", Slip{Found: true, Step: 4, Event: "socket-error 0<->1", Message: "M 0->1", Node: 1, How: "lost"},
			"step 4 (socket-error 0<->1) lost M 0->1; had it still been in flight, the state after step 23 would recover"},
		{"none lost", Slip{}, "no slip found: the path lost no timer or message by step 23 that is still missing after step 23"},
		{"one tried", Slip{Tried: 1}, "no slip found: the one timer or message the path lost by step 23 does not make the state after step 23 recover when put back"},
		{"several tried, a failure", Slip{Tried: 5, Failure: true},
			"no slip found: the protocol did not tolerate the failure at step 23 (drop X 0->1), and none of the 5 timers and messages the path lost before it makes the state after step 23 recover when put back"},
	} {
		if got := SlipReason(&tc.s, 23, "drop X 0->1", "p"); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// The recovery odds: a row of steps over a row of figures, sixteen a
// line, the critical step starred, and a sharp fall named.
func TestWriteOdds(t *testing.T) {
	o := &Odds{Walks: 20, WalkDepth: 5000, From: 3, Recovered: []int{20, 19, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 6, 5, 0}, Suspect: 19}
	var b strings.Builder
	writeOdds(&b, o, 21, &Slip{Found: true, Step: 19}, "p", "")
	want := "recovery odds: of 20 walks of 5,000 steps from the state after each step, how many reach p (a sample: two figures may differ by chance by up to about 7):\n" +
		"  after step  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18\n" +
		"  recover    20 19 20 20 20 20 20 20 20 20 20 20 20 20 20 20\n" +
		"  after step 19 20 21*\n" +
		"  recover     6  5   0\n" +
		"  a sharp fall after step 19 (20 -> 6 of 20): the slip\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	writeOdds(&b, o, 21, &Slip{Tried: 2}, "p", "")
	if !strings.HasSuffix(b.String(), "  a sharp fall after step 19 (20 -> 6 of 20): a suspect, though no slip was found\n") {
		t.Errorf("no slip found:\n%s", b.String())
	}

	// Where the state after step 20 is known to recover, so do those
	// before it: a 0 there is written +, and said why; the critical
	// step's own 0 stays.
	o = &Odds{Walks: 20, WalkDepth: 5000, From: 17, Recovered: []int{3, 0, 1, 0, 0}}
	b.Reset()
	writeOdds(&b, o, 21, nil, "p", "p holds 7 steps from it (the nearest, by breadth-first search)")
	want = "recovery odds: of 20 walks of 5,000 steps from the state after each step, how many reach p (a sample: two figures may differ by chance by up to about 7):\n" +
		"  after step 17 18 19 20 21*\n" +
		"  recover     3  +  1  +   0\n" +
		"  +: none of the 20 walks recovered, yet the state does: the path leads from it to the state after step 20, and p holds 7 steps from it (the nearest, by breadth-first search)\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
