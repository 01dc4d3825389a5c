package etcdraft

import (
	"time"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

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
	// raft's parameters (rawnode.go), with the driver's proposals among
	// them where they always stood.
	Params: []protocol.Param{Params[0], Params[1],
		{Name: "proposals", Doc: "how many proposals the driver makes (proposal k to node (k-1) mod N)", Default: "1", Int: true, Min: 0, Max: 4},
		Params[2], Params[3]},
	Build: func(cfg protocol.Config) (*protocol.Model, error) {
		settings, transport, err := ReadParams(cfg, cfg.Nodes)
		if err != nil {
			return nil, err
		}
		c := &config{
			Settings:          settings,
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
