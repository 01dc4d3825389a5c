package reports

import (
	"strings"
	"testing"
)

// The event graph of a small path, every kind of event in it, is exactly
// this: arrows point from sender to receiver either way and across a lane
// between, a drop ends in x, the critical step is marked.
func TestWriteGraph(t *testing.T) {
	steps := []Step{
		{Step: 9, Kind: "timer", Node: 1, Event: "timer start at 1", Sent: []string{"Join{Joiner:1 Epoch:1} 1->0"}},
		{Step: 10, Kind: "deliver", Node: 0, Peer: 1, Event: "deliver Join{Joiner:1 Epoch:1} 1->0", Sent: []string{"JoinReply{Root:0} 0->1", "Probe 0->2"}},
		{Step: 11, Kind: "drop", Node: 0, Peer: 2, Event: "drop Probe 2->0"},
		{Step: 12, Kind: "deliver", Node: 2, Peer: 0, Event: "deliver Probe 0->2"},
		{Step: 13, Kind: "reset", Node: 2, Event: "reset 2"},
		{Step: 14, Kind: "socket-error", Node: 0, Peer: 2, Event: "socket-error 0<->2"},
		{Step: 15, Kind: "app", Node: 0, Event: "app Put{K:1} at 0"},
		{Step: 16, Kind: "deliver", Node: 1, Peer: 1, Event: "deliver Tick{} 1->1", Violation: "two roots"},
	}
	var b strings.Builder
	WriteGraph(&b, 3, steps, 12)
	want := `  step  0   1   2
     9  |   T   |  timer start  => Join 1->0
    10  <---o   |  Join 1->0  => JoinReply 0->1, Probe 0->2
    11  x-------o  drop Probe 2->0
*   12  o------->  Probe 0->2
    13  |   |   R  reset
    14  E=======E  socket error
    15  A   |   |  app Put{K:1}
    16  |   @   |  Tick 1->1  !! two roots
`
	if got := b.String(); got != want {
		t.Errorf("graph:\n%s\nwant:\n%s", got, want)
	}
}
