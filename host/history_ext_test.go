package host_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/kvstore"
)

// A real run of the key-value store records its clients' history in the
// client node, and trace's replay checks it at every step. The calls are
// held and made one by one once node 1 is the primary of epoch 2, so
// that the run is the same whatever the machine's speed:
//
//   - the correct store: the four operations return, and the history is
//     linearizable;
//   - stale-lease, with the nemesis dropping node 1's first two
//     datagrams to node 0 (its Elect and its Store: node 0 never learns
//     of epoch 2) and node 1's read confirmations held in flight (the
//     test hook: node 1 never answers the read): put(x,1) is
//     acknowledged by node 1, then get(x) is answered 0 by node 0 from
//     its lease. The replay finds the history not linearizable at the
//     step of that response, naming both operations.
func TestRunHistory(t *testing.T) {
	for _, c := range []struct {
		name      string
		bugs      []string
		calls     int
		violation []string
	}{
		{"correct", nil, 4, nil},
		{"stale-lease", []string{"stale-lease"}, 2,
			[]string{"node 3: not linearizable", "get(x) -> 0", "put(x,1) -> 0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			co := host.ClusterOptions{Data: dir, LogDir: dir, Seed: 1, HoldCalls: true, Log: newLog(t)}
			if c.bugs != nil {
				co.Faults = []host.Fault{{Kind: "drop", Node: 1, Peer: 0, Count: 2}}
				host.Hold(&co, func(from, to sim.NodeID, msg sim.Message) bool {
					_, ok := msg.(kvstore.Confirm)
					return ok && from == 1
				})
			}
			cl, err := host.StartCluster(&kvstore.System, protocol.Config{Bugs: c.bugs}, co)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Stop()
			replica := func(i int) *kvstore.Replica { return cl.Nodes[i].State().(*kvstore.Replica) }
			clients := func() *kvstore.Clients { return cl.Nodes[kvstore.Replicas].State().(*kvstore.Clients) }
			waitFor(t, "node 1 primary of epoch 2", func() bool {
				r1, r2 := replica(1), replica(2)
				return r1.Epoch == 2 && r1.Active && r2.Epoch == 2
			})
			for i := range c.calls {
				if err := cl.Nodes[kvstore.Replicas].NextCall(); err != nil {
					t.Fatal(err)
				}
				waitFor(t, fmt.Sprintf("call %d returns", i+1), func() bool { return clients().H.Events() == 2*(i+1) })
			}
			if c.bugs != nil && replica(0).Epoch != 1 {
				t.Fatalf("node 0 learnt of epoch 2: %s", sim.Dump(replica(0)))
			}
			cl.Stop()
			rr, err := replayDir(t, dir, &kvstore.System)
			if err != nil || rr.Divergence != nil {
				t.Fatalf("replay: %v, divergence %v", err, rr.Divergence)
			}
			want := fmt.Sprintf("node 3's history of kv: %d operations (0 pending), linearizable", c.calls)
			if c.violation != nil {
				want = fmt.Sprintf("node 3's history of kv: %d operations (0 pending), not linearizable", c.calls)
			}
			if len(rr.Histories) != 1 || rr.Histories[0].String() != want {
				t.Errorf("histories %v; want [%s]", rr.Histories, want)
			}
			drops := 0
			for _, st := range rr.Path {
				if st.Event.Kind == sim.Drop {
					drops++
				}
			}
			if c.violation == nil {
				if rr.Violation != "" || drops != 0 {
					t.Errorf("the correct store's run: violation %s at step %d (%s), %d drops", rr.Violation, rr.ViolationStep, rr.Message, drops)
				}
				return
			}
			// The violation is at the last step: the client's Receive of
			// node 0's stale answer.
			last := rr.Path[rr.ViolationStep-1].Event
			if rr.Violation != "linearizable" || drops != 2 || last.Kind != sim.Deliver || last.Node != 3 || last.Peer != 0 {
				t.Errorf("violation %q at step %d (%v), %d drops; want linearizable at the client's delivery from node 0, 2 drops", rr.Violation, rr.ViolationStep, last, drops)
			}
			for _, w := range c.violation {
				if !strings.Contains(rr.Message, w) {
					t.Errorf("message %q; want it to say %q", rr.Message, w)
				}
			}
			if rr.Trace.Result != "safety-violation" || rr.Trace.Property != "linearizable" {
				t.Errorf("the run's trace: result %s of %s", rr.Trace.Result, rr.Trace.Property)
			}
			// The run's trace replays in the checker to the same
			// violation, with the history a report lays out as its
			// timeline: the put on the client's delivery from node 1,
			// the get's stale answer from node 0 the illegal one.
			path, err := reports.Path(rr.Trace.Steps)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := check.ReplayFrom(&kvstore.System, check.ConfigOf(rr.Trace), rr.Trace.Init, path, 0)
			if err != nil {
				t.Fatal(err)
			}
			h := rep.History
			if rep.Property != "linearizable" || h == nil || len(h.Operations) != 2 || h.Illegal != 1 {
				t.Fatalf("the run's trace replays to %q, history %+v; want linearizable, 2 operations, the second illegal", rep.Property, h)
			}
			put, get := h.Operations[0], h.Operations[1]
			if put.Input != "put(x,1)" || put.Output != "0" || get.Input != "get(x)" || get.Output != "0" ||
				get.ReturnStep != rr.ViolationStep || put.ReturnStep >= get.InvokeStep || get.Role != "illegal" || put.Role != "before" {
				t.Errorf("the history's operations %+v; want put(x,1) -> 0 returned before get(x) -> 0 was invoked, which returned at step %d", h.Operations, rr.ViolationStep)
			}
		})
	}
}
