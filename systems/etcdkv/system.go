package etcdkv

import (
	"fmt"
	"slices"
	"time"

	"go.etcd.io/raft/v3"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/etcdraft"
)

// Replicas is the number of replicas; the client node is the next.
const Replicas = 3

// LeaderKnown is etcdraft's liveness of elections, over the replicas:
// eventually every replica knows one leader in one term, and that
// replica leads it.
var LeaderKnown = properties.Eventually("leader-known", "every replica knows one leader in one term, and that replica leads it",
	leaderKnown)

func leaderKnown(s *sim.State) bool {
	var term, lead uint64
	for _, n := range properties.All[*Replica](s) {
		if lead == 0 {
			term, lead = n.Term, n.Lead
		}
		if n.Lead == 0 || n.Lead != lead || n.Term != term {
			return false
		}
	}
	l := properties.Node[*Replica](s, etcdraft.NodeID(lead))
	return l.State == raft.StateLeader && l.Term == term
}

// AckedApplied is the liveness of the store: every put acknowledged to
// its client is eventually applied by every replica. A request raft
// dropped or lost was never acknowledged, and is owed to no one.
var AckedApplied = properties.Eventually("acked-applied", "every acknowledged put is applied by every replica",
	ackedApplied)

func ackedApplied(s *sim.State) bool {
	for _, n := range properties.All[*Replica](s) {
		for _, id := range n.Acked {
			for _, m := range properties.All[*Replica](s) {
				if !slices.ContainsFunc(m.Applied, func(e etcdraft.Entry) bool { return e.ID == id }) {
					return false
				}
			}
		}
	}
	return true
}

// served is the canary of --history off: some operation returned.
var served = properties.SometimesNode("served", "some operation returned",
	func(c *Clients) bool {
		return slices.ContainsFunc(c.Sessions, func(s Session) bool { return s.Seq > 0 && !s.Waiting })
	})

// System is the key-value store over etcd raft as livecheck checks it.
var System = protocol.System{
	Name:         "etcdkv",
	Doc:          "a key-value store over go.etcd.io/raft/v3 (the etcdraft adapter), puts as proposals and gets through ReadIndex, checked for linearizability",
	DefaultNodes: Replicas + 1,
	MinNodes:     Replicas + 1,
	MaxNodes:     Replicas + 1,
	// As etcdraft's: a raft step copies and hashes three RawNodes.
	DefaultDepth: 8,
	Bugs: []protocol.Bug{
		// PreVote off and a partition do not make the slip, they make
		// its stale read shallow enough for the walks to find in
		// seconds: without PreVote an election takes two steps fewer.
		{Name: "lease-read", Doc: "a leader answers a get from its own store without ReadIndex, trusting that it is still leader and up to date, with CheckQuorum off: a get misses a put acknowledged before it",
			Needs: protocol.Needs{Params: map[string]string{"checkquorum": "off", "prevote": "off"}, Budget: sim.Budget{Partitions: 1}}},
	},
	Params: append(slices.Clone(etcdraft.Params),
		protocol.Param{Name: "clients", Doc: "client sessions, each running its operations one at a time (session c talks to replica c mod 3)", Default: "2", Int: true, Min: 1, Max: 3},
		protocol.Param{Name: "ops", Doc: "operations per session (put then get, or get then put)", Default: "2", Int: true, Min: 1, Max: 2},
		protocol.Param{Name: "keys", Doc: "1: every session on key x; 2: even sessions on x, odd ones on y", Default: "1", Int: true, Min: 1, Max: 2},
		protocol.Param{Name: "history", Doc: "on: the client node records the history and the check has the property linearizable; off: neither, to measure what the check costs", Default: "on"},
	),
	Build: func(cfg protocol.Config) (*protocol.Model, error) {
		settings, transport, err := etcdraft.ReadParams(cfg, Replicas)
		if err != nil {
			return nil, err
		}
		record := true
		switch h := cfg.Param("history"); h {
		case "", "on":
		case "off":
			record = false
		default:
			return nil, fmt.Errorf("--history must be on or off, not %q", h)
		}
		clients := cfg.IntParam("clients")
		calls, ops := Workload(clients, cfg.IntParam("ops"), cfg.IntParam("keys"), Replicas)
		c := &config{Settings: settings, ops: ops, leaseRead: cfg.HasBug("lease-read")}
		props := []properties.Property{properties.Linearizable(Spec), LeaderKnown, AckedApplied}
		if !record {
			// A canary keeps the check honest that it ran the clients.
			props = []properties.Property{LeaderKnown, AckedApplied, served}
		}
		return &protocol.Model{
			Spec: sim.Spec{
				New: func(id sim.NodeID) sim.Node {
					if id == Replicas {
						cl := &Clients{Sessions: make([]Session, clients), replicas: Replicas, off: !record}
						if record {
							cl.H = properties.NewHistory(Spec)
						}
						return cl
					}
					return &Replica{cfg: c}
				},
				Transport: transport,
				Calls:     calls,
			},
			Properties: props,
			// As etcdraft's: a tick every 100 ms when run for real.
			Timers: map[string]protocol.Timing{tick: {After: 100 * time.Millisecond}},
		}, nil
	},
}
