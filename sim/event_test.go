package sim_test

import (
	"slices"
	"testing"

	"github.com/livecheck/livecheck/sim"
)

func TestKinds(t *testing.T) {
	want := []sim.Kind{sim.Deliver, sim.Timer, sim.App, sim.Drop, sim.Duplicate, sim.SocketError, sim.Reset, sim.Crash, sim.Partition, sim.Heal}
	if got := sim.Kinds(); !slices.Equal(got, want) {
		t.Fatalf("Kinds() = %v, want %v", got, want)
	}
	names := []string{"deliver", "timer", "app", "drop", "duplicate", "socket-error", "reset", "crash", "partition", "heal"}
	for i, k := range want {
		if k.String() != names[i] {
			t.Errorf("Kind %d String = %q, want %q", k, k.String(), names[i])
		}
		got, err := sim.ParseKind(names[i])
		if err != nil || got != k {
			t.Errorf("ParseKind(%q) = %v, %v", names[i], got, err)
		}
	}
	if got := sim.Kind(42).String(); got != "kind(42)" {
		t.Errorf("unknown kind prints %q", got)
	}
	const msg = `unknown event kind "Deliver" (valid: deliver, timer, app, drop, duplicate, socket-error, reset, crash, partition, heal)`
	if _, err := sim.ParseKind("Deliver"); err == nil || err.Error() != msg {
		t.Errorf("ParseKind(Deliver) error = %v, want %q", err, msg)
	}
	if sim.Datagram.String() != "datagram" || sim.Stream.String() != "stream" {
		t.Errorf("transport names %q %q", sim.Datagram, sim.Stream)
	}
}

func TestEventString(t *testing.T) {
	cases := []struct {
		ev   sim.Event
		want string
	}{
		{sim.Event{Kind: sim.Deliver, Node: 2, Peer: 1, Msg: 0xab}, "deliver 1->2 #00000000000000ab"},
		{sim.Event{Kind: sim.Drop, Node: 0, Peer: 3, Msg: 0xfedcba9876543210}, "drop 3->0 #fedcba9876543210"},
		{sim.Event{Kind: sim.Timer, Node: 1, Timer: "election"}, "timer election at 1"},
		{sim.Event{Kind: sim.App, Node: 4, Call: 7}, "app call 7 at 4"},
		{sim.Event{Kind: sim.SocketError, Node: 0, Peer: 2}, "socket-error 0<->2"},
		{sim.Event{Kind: sim.Reset, Node: 3}, "reset 3"},
		{sim.Event{Kind: sim.Crash, Node: 2}, "crash 2"},
		{sim.Event{Kind: 10}, "kind(10)"},
	}
	for _, c := range cases {
		if got := c.ev.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
}

func TestPathClone(t *testing.T) {
	p := sim.Path{
		{Event: sim.Event{Kind: sim.App, Node: 1}, Choices: []int{1, 2}},
		{Event: sim.Event{Kind: sim.Reset, Node: 0}},
	}
	q := p.Clone()
	if len(q) != 2 || q[0].Event != p[0].Event || !slices.Equal(q[0].Choices, []int{1, 2}) || len(q[1].Choices) != 0 {
		t.Fatalf("Clone = %+v", q)
	}
	q[0].Choices[0] = 9
	q[1].Event.Node = 5
	if p[0].Choices[0] != 1 || p[1].Event.Node != 0 {
		t.Errorf("Clone shares memory with the original: %+v", p)
	}
	if len(sim.Path(nil).Clone()) != 0 {
		t.Errorf("Clone of nil path not empty")
	}
}

func TestNewState(t *testing.T) {
	s := sim.NewState([]sim.Node{&tnode{Log: []string{"a"}}, &tnode{}})
	if s.N() != 2 || logOf(s, 0)[0] != "a" || len(s.Timers(1)) != 0 || len(s.InFlight()) != 0 || s.HasTimer(0, "x") {
		t.Errorf("NewState: %s", s.Dump())
	}
	const want = "node 0: tnode{Log:[\"a\"] PanicOnError:false Up:false}\nnode 1: tnode{Log:[] PanicOnError:false Up:false}\n"
	if got := s.Dump(); got != want {
		t.Errorf("Dump:\n%s\nwant\n%s", got, want)
	}
	if got := sim.DumpNode(s, 0); got != `tnode{Log:["a"] PanicOnError:false Up:false}` {
		t.Errorf("DumpNode = %s", got)
	}
}
