package randtree_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/randtree"
)

// model builds the world and properties of a configuration.
func model(t testing.TB, cfg livecheck.Config) (*sim.World, *livecheck.Model) {
	t.Helper()
	_, m, err := randtree.System.Model(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sim.NewWorld(m.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return w, m
}

func isLive(m *livecheck.Model, s *sim.State) bool {
	for i := range m.Properties {
		if p := &m.Properties[i]; p.Kind == properties.Liveness && !p.IsLive(s) {
			return false
		}
	}
	return true
}

func safety(m *livecheck.Model, s *sim.State) error {
	for i := range m.Properties {
		if p := &m.Properties[i]; p.Kind == properties.Safety {
			if err := p.CheckSafety(s); err != nil {
				return fmt.Errorf("%s: %v", p.Name, err)
			}
		}
	}
	return nil
}

// A scenario drives a world by hand, one line a step or a check:
//
//	start 1              fire node 1's timer "start" (also join, recovery)
//	deliver 1->0         deliver the next message from 1 to 0
//	deliver 3->0 choose 1   ... answering the step's Choose calls with 1
//	error 0 1            break the connection 0<->1
//	reset 2              reset node 2
//	sent: Join{...} 1->0 the messages the last step sent (sim.DescribeSent)
//	want 1: joined ...   node 1's state and timers (sim.DumpNode)
//	live / not live      whether single-tree holds
//
// Safety is checked after every step.
func runScenario(t *testing.T, cfg livecheck.Config, script string) {
	t.Helper()
	w, m := model(t, cfg)
	s, err := w.Initial()
	if err != nil {
		t.Fatal(err)
	}
	node := func(f string) sim.NodeID {
		v, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("bad node %q", f)
		}
		return sim.NodeID(v)
	}
	for n, line := range strings.Split(strings.TrimSpace(script), "\n") {
		line = strings.TrimSpace(line)
		where := fmt.Sprintf("line %d %q", n+1, line)
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "want "); ok {
			id, dump, _ := strings.Cut(rest, ": ")
			if got := sim.DumpNode(s, node(id)); got != dump {
				t.Fatalf("%s: node %s is\n\t%s", where, id, got)
			}
			continue
		}
		if rest, ok := strings.CutPrefix(line, "sent:"); ok {
			if got := sim.DescribeSent(w.Last().Sent); got != strings.TrimSpace(rest) {
				t.Fatalf("%s: the step sent %q", where, got)
			}
			continue
		}
		switch line {
		case "live", "not live":
			if live := isLive(m, s); live != (line == "live") {
				t.Fatalf("%s: single-tree is %v in\n%s", where, live, s.Dump())
			}
			continue
		}
		f := strings.Fields(line)
		var tape []int
		if i := len(f) - 2; i > 0 && f[i] == "choose" {
			v, _ := strconv.Atoi(f[i+1])
			tape, f = []int{v}, f[:i]
		}
		var ev sim.Event
		switch {
		case len(f) == 2 && (f[0] == "start" || f[0] == "join" || f[0] == "recovery"):
			ev = sim.Event{Kind: sim.Timer, Node: node(f[1]), Timer: f[0]}
		case len(f) == 2 && f[0] == "deliver":
			from, to, _ := strings.Cut(f[1], "->")
			ev = sim.Event{Kind: sim.Deliver, Node: node(to), Peer: node(from)}
			for _, e := range w.Enabled(s, nil) {
				if e.Kind == sim.Deliver && e.Node == ev.Node && e.Peer == ev.Peer {
					ev.Msg = e.Msg
				}
			}
		case len(f) == 3 && f[0] == "error":
			ev = sim.Event{Kind: sim.SocketError, Node: node(f[1]), Peer: node(f[2])}
		case len(f) == 2 && f[0] == "reset":
			ev = sim.Event{Kind: sim.Reset, Node: node(f[1])}
		default:
			t.Fatalf("%s: unknown command", where)
		}
		next, err := w.Apply(s, ev, tape)
		if err != nil {
			t.Fatalf("%s: %v\n%s", where, err, s.Dump())
		}
		s = next
		if err := safety(m, s); err != nil {
			t.Fatalf("%s: %v\n%s", where, err, s.Dump())
		}
	}
}

// The start of the double acceptance scenarios (peers=all, 4 nodes): 2 and
// then 1 found trees of their own while 0 is not started (1's join to 2 is
// left in flight), then 3 is accepted by both roots and keeps the first
// answer, from 2. 0 starts and asks 1, which offers it the root; 0 takes
// it and 1 joins under it, still listing 3 as a child: 3's Remove is in
// flight.
const doubleAcceptance = `
	start 2
	deliver 2->0
	join 2
	deliver 2->1
	join 2
	deliver 2->3
	join 2
	want 2: joined root=2 parent=2 peers=[0 1 3 2] next-join=3 next-probe=0 epoch=1 timers=recovery
	start 1
	deliver 1->0
	join 1
	join 1
	deliver 1->3
	join 1
	want 1: joined root=1 parent=1 peers=[0 2 3 1] next-join=3 next-probe=0 epoch=1 timers=recovery
	start 3
	deliver 3->0
	join 3
	deliver 3->1
	sent: JoinReply{Parent:1 Root:1 Epoch:1} 1->3
	join 3
	deliver 3->2
	sent: JoinReply{Parent:2 Root:2 Epoch:1} 2->3
	deliver 2->3
	want 3: joined root=2 parent=2 peers=[0 1 2 3] next-join=2 next-probe=0 epoch=1 timers=recovery
	deliver 1->3
	sent: Remove{} 3->1
	start 0
	deliver 0->1
	sent: JoinReply{Parent:0 Root:0 Epoch:1} 1->0
	deliver 1->0
	sent: ProbeJoin{Target:0} 0->1
	want 0: joined root=0 parent=0 peers=[1 2 3 0] next-join=0 next-probe=0 epoch=1 timers=recovery
	deliver 0->1
	sent: Join{Joiner:1 Epoch:2} 1->0
	want 1: joining root=-1 parent=-1 children=[3] peers=[0 2 3 1] next-join=3 next-probe=0 target=0 epoch=2 timers=join,recovery
`

// Once 1 is in 0's tree, 1's old join to 2 makes 2 offer 1 its root. 1 is
// no longer joining and ignores the stale offer; 2 stays the root of its
// tree until a probe merges that tree into 0's.
const mergeTwoTrees = `
	deliver 1->2
	sent: JoinReply{Parent:1 Root:1 Epoch:1} 2->1
	deliver 2->1
	sent:
	recovery 2
	sent: Probe{Root:2} 2->1
	deliver 2->1
	sent: ProbeJoin{Target:0} 1->2
	deliver 1->2
	sent: Join{Joiner:2 Epoch:2} 2->0
	deliver 2->0
	sent: JoinReply{Parent:0 Root:0 Epoch:2} 0->2
	deliver 0->2
	sent: NewRoot{Root:0} 2->3
	deliver 2->3
	want 3: joined root=0 parent=2 peers=[0 1 2 3] next-join=2 next-probe=0 epoch=1 timers=recovery
`

func TestScenarios(t *testing.T) {
	params := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		cfg    livecheck.Config
		script string
	}{
		{"three nodes join one tree", livecheck.Config{Nodes: 3}, `
			want 1: init timers=start
			start 0
			want 0: joined root=0 parent=0 peers=[0] next-join=0 next-probe=0 epoch=1 timers=recovery
			start 1
			sent: Join{Joiner:1 Epoch:1} 1->0
			want 1: joining root=-1 parent=-1 peers=[0 1] next-join=0 next-probe=0 epoch=1 timers=join,recovery
			deliver 1->0
			sent: JoinReply{Parent:0 Root:0 Epoch:1} 0->1
			deliver 0->1
			want 1: joined root=0 parent=0 peers=[0 1] next-join=0 next-probe=0 epoch=1 timers=recovery
			not live
			start 2
			deliver 2->0
			deliver 0->2
			want 0: joined root=0 parent=0 children=[1 2] peers=[0] next-join=0 next-probe=0 epoch=1 timers=recovery
			want 2: joined root=0 parent=0 peers=[0 2] next-join=0 next-probe=0 epoch=1 timers=recovery
			live
			recovery 2
			sent: Probe{Root:0} 2->0
			deliver 2->0
			sent:
			live`},
		{"a full root pushes the join down", livecheck.Config{Nodes: 4}, `
			start 0
			start 1
			deliver 1->0
			deliver 0->1
			start 2
			deliver 2->0
			deliver 0->2
			start 3
			deliver 3->0 choose 1
			sent: Push{Joiner:3 Epoch:1} 0->2
			deliver 0->2
			sent: JoinReply{Parent:2 Root:0 Epoch:1} 2->3
			deliver 2->3
			want 2: joined root=0 parent=0 children=[3] peers=[0 2] next-join=0 next-probe=0 epoch=1 timers=recovery
			want 3: joined root=0 parent=2 peers=[0 3] next-join=0 next-probe=0 epoch=1 timers=recovery
			live`},
		{"pushes go down a chain of degree 1", livecheck.Config{Nodes: 3, Params: params("degree", "1")}, `
			start 0
			start 1
			deliver 1->0
			deliver 0->1
			start 2
			deliver 2->0
			sent: Push{Joiner:2 Epoch:1} 0->1
			deliver 0->1
			deliver 1->2
			want 2: joined root=0 parent=1 peers=[0 2] next-join=0 next-probe=0 epoch=1 timers=recovery
			live`},
		{"a root offers its role to a lower id", livecheck.Config{Nodes: 3, Params: params("peers", "all")}, `
			start 1
			deliver 1->0
			join 1
			deliver 1->2
			join 1
			want 1: joined root=1 parent=1 peers=[0 2 1] next-join=2 next-probe=0 epoch=1 timers=recovery
			start 0
			sent: Join{Joiner:0 Epoch:1} 0->1
			deliver 0->1
			sent: JoinReply{Parent:0 Root:0 Epoch:1} 1->0
			want 1: joined root=1 parent=1 peers=[0 2 1] next-join=2 next-probe=0 epoch=1 timers=recovery
			deliver 1->0
			sent: ProbeJoin{Target:0} 0->1
			want 0: joined root=0 parent=0 peers=[1 2 0] next-join=0 next-probe=0 epoch=1 timers=recovery
			deliver 0->1
			sent: Join{Joiner:1 Epoch:2} 1->0
			want 1: joining root=-1 parent=-1 peers=[0 2 1] next-join=2 next-probe=0 target=0 epoch=2 timers=join,recovery
			join 1
			sent: Join{Joiner:1 Epoch:2} 1->0
			deliver 1->0
			deliver 1->0
			sent: JoinReply{Parent:0 Root:0 Epoch:2} 0->1
			deliver 0->1
			deliver 0->1
			sent:
			want 1: joined root=0 parent=0 peers=[0 2 1] next-join=2 next-probe=0 epoch=2 timers=recovery
			start 2
			deliver 2->0
			deliver 0->2
			live`},
		{"a root that hears of a smaller root joins it", livecheck.Config{Nodes: 2}, `
			start 1
			deliver 1->0
			join 1
			want 1: joined root=1 parent=1 peers=[0 1] next-join=1 next-probe=0 epoch=1 timers=recovery
			start 0
			recovery 1
			sent: Probe{Root:1} 1->0
			deliver 1->0
			sent: ProbeJoin{Target:0} 0->1
			deliver 0->1
			sent: Join{Joiner:1 Epoch:2} 1->0
			deliver 1->0
			deliver 0->1
			want 1: joined root=0 parent=0 peers=[0 1] next-join=1 next-probe=0 epoch=2 timers=recovery
			live`},
		{"a founder refuses an acceptance that was on its way; a probe merges the trees", livecheck.Config{Nodes: 2}, `
			start 0
			start 1
			join 1
			want 1: joined root=1 parent=1 peers=[0 1] next-join=1 next-probe=0 epoch=1 timers=recovery
			deliver 1->0
			deliver 0->1
			sent: Remove{} 1->0
			want 1: joined root=1 parent=1 peers=[0 1] next-join=1 next-probe=0 epoch=1 timers=recovery
			deliver 1->0
			sent: Removed{} 0->1
			want 0: joined root=0 parent=0 peers=[0] next-join=0 next-probe=0 epoch=1 timers=recovery
			deliver 0->1
			not live
			recovery 1
			sent: Probe{Root:1} 1->0
			deliver 1->0
			sent: ProbeJoin{Target:0} 0->1
			deliver 0->1
			sent: Join{Joiner:1 Epoch:2} 1->0
			deliver 1->0
			deliver 0->1
			want 1: joined root=0 parent=0 peers=[0 1] next-join=1 next-probe=0 epoch=2 timers=recovery
			live`},
		{"NewRoot from a node that is not the parent is ignored", livecheck.Config{Nodes: 4, Params: params("peers", "all")},
			doubleAcceptance + `
			deliver 1->0
			want 0: joined root=0 parent=0 children=[1] peers=[1 2 3 0] next-join=0 next-probe=0 epoch=1 timers=recovery
			deliver 0->1
			sent: NewRoot{Root:0} 1->3
			deliver 1->3
			want 3: joined root=2 parent=2 peers=[0 1 2 3] next-join=2 next-probe=0 epoch=1 timers=recovery
			deliver 3->1
			sent: Removed{} 1->3
			deliver 1->3
			want 1: joined root=0 parent=0 peers=[0 2 3 1] next-join=3 next-probe=0 epoch=2 timers=recovery
			want 3: joined root=2 parent=2 peers=[0 1 2 3] next-join=2 next-probe=0 epoch=1 timers=recovery
			` + mergeTwoTrees + `
			live`},
		{"a joining parent drops a child that leaves it", livecheck.Config{Nodes: 4, Params: params("peers", "all")},
			doubleAcceptance + `
			deliver 3->1
			sent: Removed{} 1->3
			want 1: joining root=-1 parent=-1 peers=[0 2 3 1] next-join=3 next-probe=0 target=0 epoch=2 timers=join,recovery
			deliver 1->0
			deliver 0->1
			sent:
			` + mergeTwoTrees + `
			live`},
		{"RT10: a joining parent keeps a child that left it", livecheck.Config{Nodes: 4, Bugs: []string{"RT10"}, Params: params("peers", "all")},
			doubleAcceptance + `
			deliver 3->1
			sent:
			want 1: joining root=-1 parent=-1 children=[3] peers=[0 2 3 1] next-join=3 next-probe=0 target=0 epoch=2 timers=join,recovery
			deliver 1->0
			deliver 0->1
			sent: NewRoot{Root:0} 1->3
			deliver 1->3
			` + mergeTwoTrees + `
			want 1: joined root=0 parent=0 children=[3] peers=[0 2 3 1] next-join=3 next-probe=0 epoch=2 timers=recovery
			not live`},
		{"a node whose parent's connection breaks joins again", livecheck.Config{Nodes: 3, Budget: sim.Budget{Errors: 1}}, `
			start 0
			start 1
			deliver 1->0
			deliver 0->1
			start 2
			deliver 2->0
			deliver 0->2
			live
			error 0 1
			sent: Join{Joiner:1 Epoch:2} 1->0
			want 0: joined root=0 parent=0 children=[2] peers=[0] next-join=0 next-probe=0 epoch=1 timers=recovery
			want 1: joining root=-1 parent=-1 peers=[0 1] next-join=0 next-probe=0 epoch=2 timers=join,recovery
			not live
			deliver 1->0
			deliver 0->1
			live`},
		{"a parent drops a child that is reset", livecheck.Config{Nodes: 3, Budget: sim.Budget{Resets: 1}}, `
			start 0
			start 1
			deliver 1->0
			deliver 0->1
			start 2
			deliver 2->0
			deliver 0->2
			reset 2
			want 0: joined root=0 parent=0 children=[1] peers=[0] next-join=0 next-probe=0 epoch=1 timers=recovery
			want 2: init timers=start
			start 2
			deliver 2->0
			deliver 0->2
			live`},
		{"the recovery timer keeps going on a joining node", livecheck.Config{Nodes: 2}, `
			start 1
			deliver 1->0
			recovery 1
			want 1: joining root=-1 parent=-1 peers=[0 1] next-join=0 next-probe=0 epoch=1 timers=join,recovery
			join 1
			start 0
			recovery 1
			sent: Probe{Root:1} 1->0
			deliver 1->0
			deliver 0->1
			deliver 1->0
			deliver 0->1
			live`},
		// Issue 10: 1 founds a tree of its own while 2's acceptance, sent
		// when 2 was in 0's tree, is on its way; 2 then leaves 0's tree
		// and founds its own, still listing 1. Had 1 taken the late
		// acceptance, or 2 obeyed 1's probe (sent when 1 was a root) and
		// joined under its own child, each would be waiting on the other
		// for ever. 1 refuses the answer, 2 ignores the stale probe, and
		// once 2 has dropped 1 the next probe merges the trees.
		{"a node that founded its own tree refuses a late acceptance", livecheck.Config{Nodes: 3, Params: params("peers", "all", "degree", "1"), Budget: sim.Budget{Errors: 1}}, `
			start 0
			deliver 0->1
			join 0
			deliver 0->2
			join 0
			want 0: joined root=0 parent=0 peers=[1 2 0] next-join=2 next-probe=0 epoch=1 timers=recovery
			start 2
			deliver 2->0
			deliver 0->2
			want 2: joined root=0 parent=0 peers=[0 1 2] next-join=0 next-probe=0 epoch=1 timers=recovery
			start 1
			deliver 1->0 choose 0
			sent: Push{Joiner:1 Epoch:1} 0->2
			deliver 0->2
			sent: JoinReply{Parent:2 Root:0 Epoch:1} 2->1
			join 1
			join 1
			want 1: joined root=1 parent=1 peers=[0 2 1] next-join=2 next-probe=0 epoch=1 timers=recovery
			error 0 2
			join 2
			want 2: joined root=2 parent=2 children=[1] peers=[0 1 2] next-join=2 next-probe=0 epoch=2 timers=recovery
			recovery 1
			sent: Probe{Root:1} 1->2
			deliver 1->2
			sent: JoinReply{Parent:2 Root:2 Epoch:1} 2->1
			deliver 1->2
			sent:
			want 2: joined root=2 parent=2 children=[1] peers=[0 1 2] next-join=2 next-probe=0 epoch=2 timers=recovery
			deliver 2->1
			sent: Remove{} 1->2
			want 1: joined root=1 parent=1 peers=[0 2 1] next-join=2 next-probe=1 epoch=1 timers=recovery
			deliver 2->1
			sent:
			deliver 2->1
			sent: Remove{} 1->2
			deliver 1->2
			sent: Removed{} 2->1
			want 2: joined root=2 parent=2 peers=[0 1 2] next-join=2 next-probe=0 epoch=2 timers=recovery
			deliver 1->2
			sent:
			deliver 2->1
			recovery 1
			sent: Probe{Root:1} 1->0
			recovery 1
			sent: Probe{Root:1} 1->2
			deliver 1->2
			sent: Join{Joiner:2 Epoch:3} 2->1
			deliver 2->1
			sent: JoinReply{Parent:1 Root:1 Epoch:3} 1->2
			deliver 1->2
			want 2: joined root=1 parent=1 peers=[0 1 2] next-join=2 next-probe=0 epoch=3 timers=recovery
			want 1: joined root=1 parent=1 children=[2] peers=[0 2 1] next-join=2 next-probe=1 epoch=1 timers=recovery`},
		// Issue 10, seed 1 once the above was fixed: 0 takes 2 while 2 is
		// founding a tree of its own and then pushes 1's join down to it.
		// A root has no parent to take pushes from: had 2 placed 1 in its
		// own tree, a stale probe from 1 could make 2 join under 1 while 1
		// was joining under 2. 2 puts 0 right instead.
		{"a root refuses a pushed join", livecheck.Config{Nodes: 3, Params: params("peers", "all", "degree", "1")}, `
			start 0
			join 0
			join 0
			want 0: joined root=0 parent=0 peers=[1 2 0] next-join=2 next-probe=0 epoch=1 timers=recovery
			deliver 0->2
			start 2
			join 2
			join 2
			want 2: joined root=2 parent=2 peers=[0 1 2] next-join=2 next-probe=0 epoch=1 timers=recovery
			deliver 2->0
			sent: JoinReply{Parent:0 Root:0 Epoch:1} 0->2
			start 1
			deliver 1->0 choose 0
			sent: Push{Joiner:1 Epoch:1} 0->2
			deliver 0->2
			sent: Remove{} 2->0
			deliver 0->2
			sent: Remove{} 2->0
			want 2: joined root=2 parent=2 peers=[0 1 2] next-join=2 next-probe=0 epoch=1 timers=recovery
			deliver 2->0
			sent: Removed{} 0->2
			want 0: joined root=0 parent=0 peers=[1 2 0] next-join=2 next-probe=0 epoch=1 timers=recovery
			join 1
			want 1: joining root=-1 parent=-1 peers=[0 2 1] next-join=1 next-probe=0 epoch=1 timers=join,recovery`},
		// Issue 10, peers=all with one reset, seed 14: 1 asked 2 to take it
		// (step 4), then joined 0's tree under 3. 0 was reset, 2 founded a
		// tree and 3 joined it with 1 below: 1 is in 2's tree when its
		// old join reaches 2. Had 2 handed its root over and joined under
		// 1, its joins would have gone up to the root, 2 itself, and
		// nobody would have answered again. 2 offers the role; 1, in a
		// tree by now, ignores the offer, and 2 stays the root.
		{"a stale join to a root from its own tree", livecheck.Config{Nodes: 4, Params: params("peers", "all"), Budget: sim.Budget{Resets: 1}}, `
			start 0
			join 0
			join 0
			join 0
			start 1
			start 2
			join 2
			start 3
			join 3
			deliver 3->1
			deliver 3->0
			deliver 2->0
			deliver 0->3
			deliver 2->1
			recovery 0
			deliver 0->1
			recovery 2
			recovery 1
			deliver 1->0 choose 1
			recovery 3
			join 2
			deliver 0->2
			join 3
			deliver 3->2
			deliver 0->2
			recovery 2
			deliver 0->3
			deliver 0->3
			recovery 2
			deliver 2->1
			join 1
			reset 0
			join 2
			recovery 3
			deliver 2->3
			join 2
			deliver 3->0
			deliver 2->0
			recovery 2
			deliver 2->3
			deliver 2->1
			deliver 2->3
			deliver 3->1
			recovery 3
			recovery 1
			join 3
			join 2
			deliver 3->2
			deliver 2->3
			deliver 3->1
			recovery 3
			deliver 1->2
			sent: JoinReply{Parent:1 Root:1 Epoch:1} 2->1
			want 1: joined root=2 parent=3 peers=[0 2 3 1] next-join=1 next-probe=1 epoch=1 timers=recovery
			want 2: joined root=2 parent=2 children=[3] peers=[0 1 3 2] next-join=3 next-probe=2 epoch=2 timers=recovery
			deliver 2->1
			sent:
			want 1: joined root=2 parent=3 peers=[0 2 3 1] next-join=1 next-probe=1 epoch=1 timers=recovery
			start 0
			sent: Join{Joiner:0 Epoch:1} 0->1
			deliver 1->2
			sent: Join{Joiner:2 Epoch:3} 2->0
			deliver 2->0
			sent:
			join 0
			sent: Join{Joiner:0 Epoch:1} 0->2
			join 0
			sent: Join{Joiner:0 Epoch:1} 0->3
			join 0
			want 0: joined root=0 parent=0 peers=[1 2 3 0] next-join=3 next-probe=0 epoch=1 timers=recovery
			join 2
			sent: Join{Joiner:2 Epoch:3} 2->0
			deliver 2->0
			sent: JoinReply{Parent:0 Root:0 Epoch:3} 0->2
			deliver 0->2
			deliver 0->2
			sent: NewRoot{Root:0} 2->3
			deliver 2->3
			sent: NewRoot{Root:0} 3->1
			deliver 3->1
			deliver 3->1
			want 1: joined root=0 parent=3 peers=[0 2 3 1] next-join=1 next-probe=1 epoch=1 timers=recovery
			live`},
		{"RT3: the recovery timer is lost on a joining node", livecheck.Config{Nodes: 2, Bugs: []string{"RT3"}}, `
			start 1
			deliver 1->0
			recovery 1
			want 1: joining root=-1 parent=-1 peers=[0 1] next-join=0 next-probe=0 epoch=1 timers=join
			join 1
			start 0
			want 1: joined root=1 parent=1 peers=[0 1] next-join=1 next-probe=0 epoch=1
			not live`},
	} {
		t.Run(tc.name, func(t *testing.T) { runScenario(t, tc.cfg, tc.script) })
	}
}

// A walker takes random steps through a world: each enabled event is
// drawn with a weight by its kind (deliveries 4, timers 1, failures as
// asked), and every Choose is answered from the same seeded generator, so
// a seed names a walk.
type walker struct {
	w       *sim.World
	m       *livecheck.Model
	src     *rand.PCG
	rng     *rand.Rand
	weights [sim.NumKinds]int
	buf     []sim.Event
}

func newWalker(t testing.TB, cfg livecheck.Config, seed uint64) *walker {
	w, m := model(t, cfg)
	src := rand.NewPCG(seed, 0x7261_6e64)
	wk := &walker{w: w, m: m, src: src, rng: rand.New(src)}
	wk.weights[sim.Deliver], wk.weights[sim.Timer], wk.weights[sim.App] = 4, 1, 8
	w.Chooser = func(n int) int { return wk.rng.IntN(n) }
	return wk
}

// failures sets the weight of resets and socket errors.
func (wk *walker) failures(weight int) {
	wk.weights[sim.Reset], wk.weights[sim.SocketError] = weight, weight
}

func (wk *walker) step(s *sim.State) (*sim.State, sim.Event, error) {
	wk.buf = wk.w.Enabled(s, wk.buf[:0])
	total := 0
	for _, e := range wk.buf {
		total += wk.weights[e.Kind]
	}
	if total == 0 {
		return nil, sim.Event{}, errors.New("no event can be drawn")
	}
	r := wk.rng.IntN(total)
	for _, e := range wk.buf {
		if r -= wk.weights[e.Kind]; r < 0 {
			next, err := wk.w.Apply(s, e, nil)
			return next, e, err
		}
	}
	panic("unreachable")
}

// A trail is a walk: its states, from the first, and the events between.
type trail struct {
	states []*sim.State
	events []sim.Event
}

// walk steps from s until done holds or n steps were taken, checking
// safety on every state; it says whether done holds at the end. With tr,
// it records the walk there.
func (wk *walker) walk(t testing.TB, s *sim.State, n int, done func(*sim.State) bool, tr *trail) (*sim.State, int, bool) {
	t.Helper()
	if tr != nil {
		tr.states = append(tr.states, s)
	}
	for i := 0; ; i++ {
		if done(s) {
			return s, i, true
		}
		if i == n {
			return s, i, false
		}
		next, ev, err := wk.step(s)
		if err != nil {
			t.Fatalf("step %d: %v\n%s", i+1, err, s.Dump())
		}
		if err := safety(wk.m, next); err != nil {
			t.Fatalf("step %d (%s): %v\n%s", i+1, wk.w.Describe(s, ev), err, next.Dump())
		}
		s = next
		if tr != nil {
			tr.states = append(tr.states, s)
			tr.events = append(tr.events, ev)
		}
	}
}

func (wk *walker) live(s *sim.State) bool { return isLive(wk.m, s) }

// The correct RandTree always forms one tree: every walk gets there, and
// no state on the way breaks a safety property.
func TestWalksReachSingleTree(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		nodes int
		peers string
	}{{3, "zero"}, {4, "zero"}, {5, "zero"}, {4, "all"}} {
		t.Run(fmt.Sprintf("%d nodes peers=%s", tc.nodes, tc.peers), func(t *testing.T) {
			cfg := livecheck.Config{Nodes: tc.nodes, Params: map[string]string{"peers": tc.peers}}
			total, most := 0, 0
			for seed := uint64(1); seed <= 50; seed++ {
				wk := newWalker(t, cfg, seed)
				s, err := wk.w.Initial()
				if err != nil {
					t.Fatal(err)
				}
				_, n, ok := wk.walk(t, s, 20000, wk.live, nil)
				if !ok {
					t.Fatalf("seed %d: no single tree after %d steps", seed, n)
				}
				total += n
				most = max(most, n)
			}
			t.Logf("steps to a single tree, seeds 1-50: mean %.1f, max %d", float64(total)/50, most)
		})
	}
}

// Failures hit a formed tree: a walk with failures disabled reaches a
// single tree, then goes on with failures until the budget is spent, and
// must form a single tree again.
func TestWalksRecoverFromFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		peers  string
		budget sim.Budget
	}{
		{"one reset", "zero", sim.Budget{Resets: 1}},
		{"one socket error", "zero", sim.Budget{Errors: 1}},
		{"two resets and two socket errors", "zero", sim.Budget{Resets: 2, Errors: 2}},
		{"peers=all, two resets and two socket errors", "all", sim.Budget{Resets: 2, Errors: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := livecheck.Config{Nodes: 4, Params: map[string]string{"peers": tc.peers}, Budget: tc.budget}
			most := 0
			for seed := uint64(1); seed <= 50; seed++ {
				wk := newWalker(t, cfg, seed)
				s, err := wk.w.Initial()
				if err != nil {
					t.Fatal(err)
				}
				s, _, ok := wk.walk(t, s, 20000, wk.live, nil)
				if !ok {
					t.Fatalf("seed %d: no single tree before the failures", seed)
				}
				wk.failures(1)
				spent := func(s *sim.State) bool { return s.Used() == tc.budget }
				s, _, ok = wk.walk(t, s, 20000, spent, nil)
				if !ok {
					t.Fatalf("seed %d: the failure budget was not spent", seed)
				}
				wk.failures(0)
				_, n, ok := wk.walk(t, s, 20000, wk.live, nil)
				if !ok {
					t.Fatalf("seed %d: no single tree %d steps after the last failure\n%s", seed, n, s.Dump())
				}
				most = max(most, n)
			}
			t.Logf("most steps from the last failure back to a single tree: %d", most)
		})
	}
}

// A prober tells dead states from ones that can still recover: a state is
// dead when none of its fresh walks reaches a single tree.
type prober struct {
	wk          *walker
	walks, dmax int
	seed        uint64
}

func (p *prober) dead(t testing.TB, s *sim.State) bool {
	for k := range p.walks {
		p.wk.src.Seed(p.seed, uint64(k))
		if _, _, ok := p.wk.walk(t, s, p.dmax, p.wk.live, nil); ok {
			return false
		}
	}
	return true
}

// critical returns the step of a dead walk after which it is dead: the
// state before it still recovers, the state after it does not. It assumes
// the walk starts in a state that recovers and ends in a dead one. Steps
// 1, 2, 4, 8... are probed first, then the last gap is halved: walks tend
// to die early, and probing a state that recovers is cheap.
func (p *prober) critical(t testing.TB, tr *trail) int {
	last := len(tr.states) - 1
	lo, hi := 0, 1
	for hi < last && !p.dead(t, tr.states[hi]) {
		lo, hi = hi, min(2*hi, last)
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if p.dead(t, tr.states[mid]) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// kind names an event by what it does to its node: "timer recovery on
// joining", "deliver Remove to joining".
func kind(w *sim.World, before *sim.State, ev sim.Event) string {
	st := properties.Node[*randtree.Node](before, ev.Node).Status
	switch ev.Kind {
	case sim.Timer:
		return fmt.Sprintf("timer %s on %s", ev.Timer, st)
	case sim.Deliver:
		msg := strings.TrimPrefix(w.Describe(before, ev), "deliver ")
		msg, _, _ = strings.Cut(msg, "{")
		return fmt.Sprintf("deliver %s to %s", msg, st)
	}
	return ev.Kind.String()
}

// deadWalk is a walk that never formed a tree, with its critical step.
type deadWalk struct {
	seed     uint64
	tr       trail
	critical int // tr.events[critical-1] made the walk dead
	kind     string
}

// deadWalks runs walks of up to 2,000 steps from the initial state for
// seeds from 1 to seeds, stopping after want of them never formed a tree,
// and returns those. Each one's last state is checked dead with 20 fresh
// walks of 2,000 steps (the correct RandTree forms a tree in at most about
// a hundred steps at 4 nodes); the first critical of them get their
// critical step, found with probes of 20 walks of 500 steps.
func deadWalks(t *testing.T, cfg livecheck.Config, seeds uint64, want, critical int) []deadWalk {
	confirm := &prober{wk: newWalker(t, cfg, 0), walks: 20, dmax: 2000}
	probe := &prober{wk: confirm.wk, walks: 20, dmax: 500}
	var dead []deadWalk
	for seed := uint64(1); seed <= seeds && len(dead) < want; seed++ {
		wk := newWalker(t, cfg, seed)
		s, err := wk.w.Initial()
		if err != nil {
			t.Fatal(err)
		}
		var tr trail
		if _, _, ok := wk.walk(t, s, 2000, wk.live, &tr); ok {
			continue
		}
		confirm.seed, probe.seed = seed<<32, seed<<32|1<<31
		if !confirm.dead(t, tr.states[len(tr.states)-1]) {
			t.Errorf("seed %d: the walk never formed a tree, but its last state can still recover", seed)
			continue
		}
		d := deadWalk{seed: seed, tr: tr}
		if len(dead) < critical {
			if probe.dead(t, tr.states[0]) {
				t.Fatalf("seed %d: the initial state looks dead", seed)
			}
			d.critical = probe.critical(t, &tr)
			d.kind = kind(wk.w, tr.states[d.critical-1], tr.events[d.critical-1])
		}
		dead = append(dead, d)
	}
	return dead
}

// RT3 ends walks in dead states: a node that founded its own tree has lost
// its recovery timer, so nothing ever merges its tree into node 0's. What
// makes a walk dead is the recovery timer firing on a node that is joining
// and whose join node 0, not started yet, has dropped; or, when the timer
// fired first, node 0 dropping that join; or the join timer making a node
// that has lost its recovery timer found its own tree while its join is
// still on its way (a founder refuses a late acceptance).
func TestRT3DeadStates(t *testing.T) {
	t.Parallel()
	cfg := livecheck.Config{Nodes: 4, Bugs: []string{"RT3"}}
	dead := deadWalks(t, cfg, 50, 50, 12)
	if len(dead) < 5 {
		t.Fatalf("only %d of the walks for seeds 1-50 ended dead; RT3 should kill many", len(dead))
	}
	w, _ := model(t, cfg)
	byKind := map[string]int{}
	for _, d := range dead[:min(len(dead), 12)] {
		before, ev := d.tr.states[d.critical-1], d.tr.events[d.critical-1]
		byKind[d.kind]++
		switch {
		case d.kind == "timer recovery on joining":
		case d.kind == "deliver Join to init" && !before.HasTimer(ev.Peer, randtree.RecoveryTimer):
		case d.kind == "timer join on joining" && !before.HasTimer(ev.Node, randtree.RecoveryTimer):
		default:
			t.Errorf("seed %d: made dead at step %d by %s\n%s", d.seed, d.critical, w.Describe(before, ev), before.Dump())
		}
	}
	t.Logf("walks for seeds 1-50 that end dead: %d; the first 12 made dead by %v", len(dead), byKind)
	if n := byKind["timer recovery on joining"] + byKind["timer join on joining"]; 2*n < min(len(dead), 12) {
		t.Errorf("a timer firing on a joining node made only %d walks dead: %v", n, byKind)
	}
}

// RT10 ends walks in dead states: a parent that was joining when its
// child's Remove came keeps the child for ever. The Remove delivered to the
// joining parent is what makes the walk dead.
func TestRT10DeadStates(t *testing.T) {
	t.Parallel()
	cfg := livecheck.Config{Nodes: 4, Bugs: []string{"RT10"}, Params: map[string]string{"peers": "all"}}
	dead := deadWalks(t, cfg, 1000, 3, 3)
	if len(dead) < 3 {
		t.Fatalf("only %d walks for seeds 1-1000 ended dead", len(dead))
	}
	for _, d := range dead {
		s := d.tr.states[len(d.tr.states)-1]
		t.Logf("seed %d: dead after step %d: %s", d.seed, d.critical, d.kind)
		if d.kind != "deliver Remove to joining" {
			t.Errorf("seed %d: made dead by %s, not by a Remove delivered to a joining parent", d.seed, d.kind)
		}
		// The parent still lists the child that left it.
		parent := d.tr.events[d.critical-1].Node
		child := d.tr.events[d.critical-1].Peer
		if n := properties.Node[*randtree.Node](s, parent); !slices.Contains(n.Children, child) ||
			properties.Node[*randtree.Node](s, child).Parent == parent {
			t.Errorf("seed %d: at the end, node %d has children %v and node %d has parent %d",
				d.seed, parent, n.Children, child, properties.Node[*randtree.Node](s, child).Parent)
		}
	}
}

// The whole pipeline reports RT3 as a liveness violation whose critical
// transition is a timer on a joining node: the recovery timer firing (and
// lost), or the join timer making a node that lost it found its own tree.
func TestCheckFindsRT3(t *testing.T) {
	t.Parallel()
	res, err := livecheck.Check(&randtree.System, livecheck.Options{
		Time:   livecheck.NoTimeLimit,
		Config: livecheck.Config{Nodes: 4, Bugs: []string{"RT3"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != livecheck.LivenessViolation || res.Property != randtree.SingleTree.Name || res.Critical == nil {
		t.Fatalf("got %s of %q (%s), want a liveness violation of single-tree with its critical transition", res.Verdict, res.Property, res.Message)
	}
	c := res.Critical
	lost := c.Event.Timer == randtree.JoinTimer && strings.HasSuffix(c.Before[c.Event.Node], " timers=join")
	if c.Event.Kind != sim.Timer || c.Event.Timer != randtree.RecoveryTimer && !lost || !strings.HasPrefix(c.Before[c.Event.Node], "joining ") {
		t.Errorf("critical transition at step %d: %s on node %d, which was %q; want the recovery timer firing on a joining node, or its join timer once it lost the recovery timer",
			c.Step, c.EventText, c.Event.Node, c.Before[c.Event.Node])
	}
}

// RT14 is a safety violation of recovery-timer, found by Check with one
// reset (its walks check safety on every step, past the search's depth),
// and its trace replays; the correct RandTree passes the same check. It
// takes peers=all: there, trees rooted at other nodes than 0 have members,
// whose probes can name a root that was reset meanwhile. With the default
// peers every tree with members is node 0's until a failure makes another
// one, so it takes a socket error as well, and Check finds it only for
// some seeds.
func TestCheckFindsRT14(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		peers  string
		budget sim.Budget
		depth  int
	}{
		{"peers=all, one reset", "all", sim.Budget{Resets: 1}, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := livecheck.Config{Nodes: 4, Params: map[string]string{"peers": tc.peers}, Budget: tc.budget}
			bad := cfg
			bad.Bugs = []string{"RT14"}
			res, err := livecheck.Check(&randtree.System, livecheck.Options{Time: livecheck.NoTimeLimit, Config: bad, Depth: tc.depth})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != livecheck.SafetyViolation || res.Property != randtree.RecoveryTimerScheduled.Name {
				t.Fatalf("got %s of %q (%s), want a safety violation of recovery-timer", res.Verdict, res.Property, res.Message)
			}
			rep, err := livecheck.Replay(&randtree.System, res.Config, res.Path, 0)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != livecheck.SafetyViolation || rep.Property != res.Property || rep.Message != res.Message || len(rep.Steps) != len(res.Path) {
				t.Fatalf("the trace replays to %s of %q (%s) after %d of %d steps", rep.Verdict, rep.Property, rep.Message, len(rep.Steps), len(res.Path))
			}
			resets := 0
			for _, st := range res.Path {
				if st.Event.Kind == sim.Reset {
					resets++
				}
			}
			if resets != 1 {
				t.Errorf("the path has %d resets; RT14 needs exactly one", resets)
			}

			// Walks of 1000 steps (300 under -short): the correct
			// version's walks all recover and then go on to their depth,
			// the bulk of the cost.
			wd := 1000
			if testing.Short() {
				wd = 300
			}
			ok, err := livecheck.Check(&randtree.System, livecheck.Options{Time: livecheck.NoTimeLimit, Config: cfg, Depth: tc.depth, WalkDepth: wd})
			if err != nil {
				t.Fatal(err)
			}
			if ok.Verdict != livecheck.OK || !ok.Complete {
				t.Fatalf("correct RandTree: %s of %q (%s), complete %v", ok.Verdict, ok.Property, ok.Message, ok.Complete)
			}
		})
	}
}

// The exhaustive search alone finds nothing wrong with the correct
// RandTree: no safety violation and no state where nothing can happen
// while the tree is not formed (the recovery timers never stop).
func TestCorrectSearch(t *testing.T) {
	t.Parallel()
	for _, budget := range []sim.Budget{{}, {Resets: 1}, {Errors: 1}} {
		t.Run(fmt.Sprintf("%+v", budget), func(t *testing.T) {
			res, err := livecheck.Check(&randtree.System, livecheck.Options{
				Time:    livecheck.NoTimeLimit,
				Config:  livecheck.Config{Nodes: 4, Budget: budget},
				Depth:   10,
				NoWalks: true,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != livecheck.OK || !res.Complete {
				t.Fatalf("%s of %q (%s), complete %v", res.Verdict, res.Property, res.Message, res.Complete)
			}
		})
	}
}

// The correct RandTree's state space at 3 nodes to depth 8, pinned: a
// change in these numbers changes what the search explores and must be
// explained. The transitions are those sleep sets take (1,369 with
// --reduce none). (445 states, 1351 transitions, 179 periphery, 5 live until a
// root stopped taking pushed joins, issue 10: the Remove and Removed
// that put the pusher right add states, and the trees that formed within
// 8 steps by a root placing a joiner that asked another tree do not.)
func TestStateCounts(t *testing.T) {
	t.Parallel()
	for run := 0; run < 2; run++ { // stable across runs
		res, err := livecheck.Check(&randtree.System, livecheck.Options{
			Time:    livecheck.NoTimeLimit,
			Config:  livecheck.Config{Nodes: 3},
			Depth:   8,
			NoWalks: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		st := res.Stats
		if res.Verdict != livecheck.OK || st.States != 467 || st.Transitions != 648 || st.MaxDepth != 8 || st.Periphery != 186 || st.Live != 3 {
			t.Fatalf("%s: states %d transitions %d max depth %d periphery %d live %d",
				res.Verdict, st.States, st.Transitions, st.MaxDepth, st.Periphery, st.Live)
		}
	}
}

func TestParams(t *testing.T) {
	for _, tc := range []struct {
		params map[string]string
		err    string // "" for a valid configuration
	}{
		{nil, ""},
		{map[string]string{"degree": "1", "peers": "all"}, ""},
		{map[string]string{"degree": "0"}, "--degree"},
		{map[string]string{"degree": "two"}, "--degree"},
		{map[string]string{"peers": "some"}, "--peers"},
		{map[string]string{"fanout": "2"}, "no parameter"},
	} {
		_, _, err := randtree.System.Model(livecheck.Config{Nodes: 4, Params: tc.params})
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("params %v: error %v, want one mentioning %q", tc.params, err, tc.err)
		}
	}
	for _, tc := range []struct {
		kind string
		want string
	}{
		{"zero", "[[0] [0 1] [0 2] [0 3]]"},
		{"all", "[[1 2 3 0] [0 2 3 1] [0 1 3 2] [0 1 2 3]]"},
	} {
		lists, err := randtree.Peers(tc.kind, 4)
		if err != nil || fmt.Sprint(lists) != tc.want {
			t.Errorf("peers %s: %v, %v; want %s", tc.kind, lists, err, tc.want)
		}
	}
}

// Issue 10: the dead paths that `check randtree --peers all --resets 1
// --seed 1` reported on the correct RandTree, cut after their critical
// step (testdata). issue10-founder.json is the first report: node 1,
// which had founded its own tree, took an acceptance from before node 0's
// reset. issue10-push.json is the report once a founder refused it: root
// 2 took a join pushed by node 0, which still listed it, then joined
// under that joiner. On the fixed protocol each path replays to the step
// given (then an event it recorded is no longer enabled), and from there
// every walk forms a single tree.
func TestIssue10SeedOnePaths(t *testing.T) {
	for _, tc := range []struct {
		file    string
		replays int // steps of the path that replay on the fixed protocol
	}{
		{"issue10-founder.json", 74},
		{"issue10-push.json", 90},
	} {
		t.Run(tc.file, func(t *testing.T) {
			tr, err := reports.ReadTraceFile("testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			p, err := reports.Path(tr.Steps)
			if err != nil {
				t.Fatal(err)
			}
			cfg := livecheck.Config{Nodes: tr.Nodes, Params: tr.Params, Budget: sim.Budget(tr.Budget)}
			w, m := model(t, cfg)
			s, err := w.Initial()
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, st := range p {
				next, err := w.Apply(s, st.Event, st.Choices)
				if errors.Is(err, sim.ErrNotEnabled) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := safety(m, next); err != nil {
					t.Fatalf("step %d: %v", n+1, err)
				}
				s, n = next, n+1
			}
			if n != tc.replays {
				t.Fatalf("%d of %d steps replay, want %d", n, len(p), tc.replays)
			}
			for seed := uint64(1); seed <= 20; seed++ {
				wk := newWalker(t, cfg, seed)
				if _, steps, ok := wk.walk(t, s, 2000, wk.live, nil); !ok {
					t.Errorf("seed %d: no single tree after %d steps", seed, steps)
				}
			}
		})
	}
}

// Issue 26: the slip of RT3 is the recovery timer firing on a joining
// node and not set again (the bug's early return), at or before the
// critical step, for seeds 1-20 (1 and 10, the quickest, with -short):
// with that timer put back, the state after the critical step recovers;
// and the recovery odds (20 walks from each state) fall across it.
func TestRT3Slip(t *testing.T) {
	t.Parallel()
	var seeds []int
	for s := 1; s <= 20; s++ {
		if !testing.Short() || s == 1 || s == 10 {
			seeds = append(seeds, s)
		}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Parallel()
			res, err := livecheck.Check(&randtree.System, livecheck.Options{Seed: int64(seed), Time: livecheck.NoTimeLimit,
				Config: livecheck.Config{Nodes: 4, Bugs: []string{"RT3"}}})
			if err != nil {
				t.Fatal(err)
			}
			cx := res.Critical
			if res.Verdict != livecheck.LivenessViolation || cx == nil || cx.Slip == nil {
				t.Fatalf("got %s (%s): want a liveness violation with a critical step and a slip search", res.Verdict, res.Message)
			}
			sl := cx.Slip
			if !sl.Found || sl.Event.Kind != sim.Timer || sl.Event.Timer != randtree.RecoveryTimer || sl.Timer != randtree.RecoveryTimer ||
				sl.Node != sl.Event.Node || sl.How != "fired" || !strings.HasPrefix(sl.State, "joining ") || sl.Step > cx.Step || sl.Recovery == nil || !sl.Recovery.Live {
				t.Fatalf("slip %+v (critical step %d, %s): want the recovery timer firing on a joining node", sl, cx.Step, cx.EventText)
			}
			// The recovery odds fall across the slip, and the critical
			// step's are none.
			od := cx.Odds
			if od == nil || od.From != max(0, cx.Step-30) || len(od.Recovered) != cx.Step-od.From+1 || od.Recovered[len(od.Recovered)-1] != 0 {
				t.Fatalf("odds %+v, want the steps from %d to the critical step %d, none recovering after it", od, max(0, cx.Step-30), cx.Step)
			}
			if k := sl.Step - od.From; k >= 1 && od.Recovered[k] >= od.Recovered[k-1] {
				t.Errorf("the odds do not fall across the slip, step %d: %d then %d of %d", sl.Step, od.Recovered[k-1], od.Recovered[k], od.Walks)
			}
			t.Logf("seed %d: simulator steps: critical search %d, slip search %d, odds %d", seed, cx.ProbeSteps, sl.Steps, od.Steps)
			// What the step changed at the node: its timers, recovery gone.
			if len(sl.Changes) != 1 || sl.Changes[0].Field != "timers" || !slices.Contains(strings.Split(sl.Changes[0].From, ","), randtree.RecoveryTimer) ||
				sl.Changes[0].To != cmpOr(strings.Join(slices.DeleteFunc(strings.Split(sl.Changes[0].From, ","), func(s string) bool { return s == randtree.RecoveryTimer }), ","), "(none)") {
				t.Errorf("the slip changes %+v at node %d, want the recovery timer gone from its timers", sl.Changes, sl.Node)
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Issue 26: RT10's bug runs in its critical step, a Remove delivered to
// a joining node that does nothing with it: the slip is that step, for
// seeds 1-8 (1 and 2 with -short). Where the state before it recovers
// only rarely (seed 2: by a search of 1,281 states), the state with the
// Remove put back is that very state, which the critical search saw
// recover.
func TestRT10Slip(t *testing.T) {
	t.Parallel()
	seeds := []int{1, 2}
	if !testing.Short() {
		seeds = []int{1, 2, 3, 4, 5, 6, 7, 8}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Parallel()
			res, err := livecheck.Check(&randtree.System, livecheck.Options{Seed: int64(seed), Time: livecheck.NoTimeLimit,
				Config: livecheck.Config{Nodes: 4, Bugs: []string{"RT10"}, Params: map[string]string{"peers": "all"}}})
			if err != nil {
				t.Fatal(err)
			}
			cx := res.Critical
			if res.Verdict != livecheck.LivenessViolation || cx == nil || cx.Slip == nil {
				t.Fatalf("got %s (%s): want a liveness violation with a critical step and a slip search", res.Verdict, res.Message)
			}
			sl := cx.Slip
			if !sl.Found || !sl.Critical || sl.Step != cx.Step || sl.Event.Kind != sim.Deliver || !strings.HasPrefix(sl.EventText, "deliver Remove{} ") ||
				sl.How != "ignored" || !strings.HasPrefix(sl.State, "joining ") || sl.Recovery == nil || !sl.Recovery.Live {
				t.Fatalf("slip %+v (critical step %d, %s): want the Remove the joining node ignored, at the critical step", sl, cx.Step, cx.EventText)
			}
		})
	}
}
