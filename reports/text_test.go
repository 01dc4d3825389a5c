package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/coverage"
	"github.com/livecheck/livecheck/sim"
)

// Piped, a table is plain columns with its header as written: no box
// drawing, no colour, no reformatted header.
func TestTablePlainWhenPiped(t *testing.T) {
	var b strings.Builder
	if err := Table(&b, []string{"STATES", "MESSAGES (IN+OUT)", "TRANSITIONS/S"}, [][]string{{Thousands(13746), "7", Thousands(int64(56673))}}); err != nil {
		t.Fatal(err)
	}
	want := "STATES  MESSAGES (IN+OUT)  TRANSITIONS/S\n" +
		"13,746  7                  56,673\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

func TestCount(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Count(1, "step"), "1 step"},
		{Count(0, "step"), "0 steps"},
		{Count(5010, "step"), "5,010 steps"},
		{Count(int64(1), "class of states", "classes of states"), "1 class of states"},
		{Count(int64(29378), "class of states", "classes of states"), "29,378 classes of states"},
		{Thousands(-1234567), "-1,234,567"},
		{DescribeConfig("echo", 1, nil, nil, budget(1, 0, 2)), "echo, 1 node, no bugs, failures: 1 reset, 0 drops, 2 socket errors"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// A coverage line names the handlers that never ran, and says nothing of
// them when every one ran.
func TestCoverageNeverRan(t *testing.T) {
	all := &coverage.Summary{Transitions: 1234, Init: 3, Receive: []coverage.Count{{Name: "Ping", N: 1000}}, Timer: []coverage.Count{{Name: "tick", N: 200}}, App: 30, Error: 4}
	var b strings.Builder
	writeCoverage(&b, "search", all, "transitions")
	if want := "coverage (search, 1,234 transitions): Init 3, Receive 1,000 (Ping 1,000), Timer 200 (tick 200), App 30, Error 4\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	all.App, all.Error = 0, 0
	writeCoverage(&b, "search", all, "transitions")
	if !strings.HasSuffix(b.String(), "; never ran: App, Error\n") {
		t.Errorf("got %q", b.String())
	}
}

func budget(resets, drops, errs int) sim.Budget {
	return sim.Budget{Resets: resets, Drops: drops, Errors: errs}
}

// Issue 26: node ids read as people write them.
func TestNodeRanges(t *testing.T) {
	for _, tc := range []struct {
		ids  []int
		want string
	}{
		{[]int{2}, "node 2"},
		{[]int{0, 1}, "nodes 0 and 1"},
		{[]int{0, 1, 3}, "nodes 0, 1 and 3"},
		{[]int{0, 1, 2, 3}, "nodes 0 to 3"},
		{[]int{0, 2, 3, 4}, "nodes 0 and 2 to 4"},
		{[]int{0, 2, 3, 4, 7, 9, 10}, "nodes 0, 2 to 4, 7, 9 and 10"},
	} {
		if got := nodeRanges(tc.ids); got != tc.want {
			t.Errorf("nodeRanges(%v) = %q, want %q", tc.ids, got, tc.want)
		}
	}
}

// Issue 26: a shortened path keeps the trace's numbers, and says where
// steps were dropped, one line a gap.
func TestWriteGaps(t *testing.T) {
	steps := []Step{{Step: 1, Event: "a"}, {Step: 3, Event: "b"}, {Step: 4, Event: "c"}, {Step: 8, Event: "d"}}
	var b strings.Builder
	writeGaps(&b, steps, 1, 4, 3)
	want := "       (step 2 dropped)\n" +
		"    3. b\n" +
		"    4. c\n" +
		"       (steps 5 to 7 dropped)\n" +
		" *  8. d\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// A check whose observer postponement ran again under the proviso of
// levels says so under its figures, and in JSON; one that did not says
// nothing of it.
func TestProvisoRerunSaid(t *testing.T) {
	for _, rerun := range []bool{false, true} {
		c := &Check{Result: "ok", System: "x", Complete: true, Exhausted: true, Stats: Stats{States: 10, Transitions: 20, Postponed: 3, ProvisoRerun: rerun}}
		var text, js bytes.Buffer
		WriteCheck(&text, c, true)
		if err := WriteJSON(&js, c); err != nil {
			t.Fatal(err)
		}
		said := strings.Contains(text.String(), "the search ran again, taking every event in each state one of whose steps goes back")
		inJSON := strings.Contains(js.String(), `"proviso_rerun": true`)
		if said != rerun || inJSON != rerun {
			t.Errorf("rerun %v: said in text %v, in JSON %v\n%s\n%s", rerun, said, inJSON, text.String(), js.String())
		}
	}
}
