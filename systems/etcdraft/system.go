package etcdraft

import (
	"fmt"
	"time"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// onOff reads a parameter that is on or off.
func onOff(cfg protocol.Config, name string) (bool, error) {
	switch v := cfg.Param(name); v {
	case "on":
		return true, nil
	case "off":
		return false, nil
	default:
		return false, fmt.Errorf("--%s must be on or off, not %q", name, v)
	}
}

// A reset is what the two persistence bugs need: without one, what a
// node failed to persist is never missed.
var oneReset = sim.Budget{Resets: 1}

// System is etcd's raft as livecheck checks it.
var System = protocol.System{
	Name:         "etcdraft",
	Doc:          "go.etcd.io/raft/v3 as it is, each node a RawNode over a MemoryStorage with the Ready loop of an application around it",
	DefaultNodes: 3,
	// Depth 8 is the deepest whose whole check (the search, then a walk
	// from every state at the bound) fits the default minute on two
	// cores at the speed of a step today, with a reset, a drop or a
	// partition too: a raft step copies and hashes a RawNode.
	DefaultDepth: 8,
	MinNodes:     3,
	MaxNodes:     5,
	Bugs: []protocol.Bug{
		{Name: "send-before-persist", Doc: "the Ready loop sends the messages before the write of the entries and HardState lands: entries acknowledged, then lost in a reset, are later said to be committed and raft stops the node (its check of a lost log); a vote lost the same way makes two leaders of one term",
			Needs: protocol.Needs{Nodes: 3, Budget: oneReset}},
		{Name: "forget-hardstate", Doc: "the Ready loop never writes the HardState: a restarted node forgets its term and vote; raft stops it when it must answer at term 0 a term it once knew, and it votes again in a term it voted in, so two leaders",
			Needs: protocol.Needs{Nodes: 3, Budget: oneReset}},
		{Name: "apply-uncommitted", Doc: "the Ready loop applies the entries it appends instead of the committed ones: an entry a new leader replaces was applied, so two nodes apply different entries at one index",
			Needs: protocol.Needs{Nodes: 3}},
		{Name: "ack-before-apply", Doc: "the Ready loop acknowledges a proposal once its entry is appended to the node's log, not once applied: a new leader replaces it, and an acknowledged proposal is never applied",
			Needs: protocol.Needs{Nodes: 3, Params: map[string]string{"proposals": "1"}}},
	},
	Params: []protocol.Param{
		{Name: "prevote", Doc: "on or off: raft's Config.PreVote (a candidate first asks whether it could win, so a node cut off does not raise the term); on by default, as etcd runs it", Default: "on"},
		{Name: "checkquorum", Doc: "on or off: raft's Config.CheckQuorum (a leader that has not heard from a quorum for an election timeout steps down, and followers that hear from their leader refuse votes); on by default, as etcd runs it", Default: "on"},
		{Name: "proposals", Doc: "how many proposals the driver makes (proposal k to node (k-1) mod N)", Default: "1", Int: true, Min: 0, Max: 4},
		{Name: "transport", Doc: "datagram or stream: how raft's messages travel, checked and for real (UDP or TCP under `livecheck cluster`). datagram by default: raft tolerates loss, duplication and reordering, and the checker explores them; stream is how etcd runs raft (TCP connections, in order, a broken one reported to raft with RawNode.ReportUnreachable)", Default: "datagram"},
		{Name: "election-ticks", Doc: "raft's ElectionTick: the ticks a follower waits for its leader before it campaigns (the timeout is drawn from [E, 2E), every draw explored); the heartbeat is every tick. 2 by default: the checker fires ticks in any order, so what matters is that a timeout can be short or long, not how many ticks it is", Default: "2", Int: true, Min: 2},
	},
	Build: func(cfg protocol.Config) (*protocol.Model, error) {
		preVote, err := onOff(cfg, "prevote")
		if err != nil {
			return nil, err
		}
		checkQuorum, err := onOff(cfg, "checkquorum")
		if err != nil {
			return nil, err
		}
		transport := sim.Datagram
		switch v := cfg.Param("transport"); v {
		case "datagram":
		case "stream":
			transport = sim.Stream
		default:
			return nil, fmt.Errorf("--transport must be datagram or stream, not %q", v)
		}
		c := &config{
			nodes:             cfg.Nodes,
			electionTicks:     cfg.IntParam("election-ticks"),
			preVote:           preVote,
			checkQuorum:       checkQuorum,
			sendBeforePersist: cfg.HasBug("send-before-persist"),
			forgetHardState:   cfg.HasBug("forget-hardstate"),
			applyUncommitted:  cfg.HasBug("apply-uncommitted"),
			ackBeforeApply:    cfg.HasBug("ack-before-apply"),
		}
		var calls []sim.Call
		for k := 1; k <= cfg.IntParam("proposals"); k++ {
			calls = append(calls, sim.Call{To: sim.NodeID((k - 1) % cfg.Nodes), Call: Propose{ID: k}})
		}
		return &protocol.Model{
			Spec: sim.Spec{
				New:       func(sim.NodeID) sim.Node { return &Node{cfg: c} },
				Transport: transport,
				Calls:     calls,
			},
			Properties: Properties,
			// A tick every 100 ms when the nodes run for real: an
			// election timeout of 200 to 300 ms with the default 2
			// ticks (run them with --election-ticks 10 for raft's
			// advice, 1 to 2 s).
			Timers: map[string]protocol.Timing{tick: {After: 100 * time.Millisecond}},
		}, nil
	},
}
