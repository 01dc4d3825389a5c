package etcdraft

import (
	"fmt"
	"math"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// This file is the adapter's raft node without its application: how a
// node's disk is bootstrapped, how its RawNode is built, how a Ready is
// written and sent, and the parameters that set raft up. Node is one
// application over it (a log of proposals); systems/etcdkv is another
// (a key-value store), which runs its own Ready loop with these.

// Settings are raft's settings that a system's parameters choose.
type Settings struct {
	Nodes                int
	ElectionTicks        int
	PreVote, CheckQuorum bool
}

// Params are the parameters that choose the Settings and the transport,
// for a system's Params (ReadParams reads them).
var Params = []protocol.Param{
	{Name: "prevote", Doc: "on or off: raft's Config.PreVote (a candidate first asks whether it could win, so a node cut off does not raise the term); on by default, as etcd runs it", Default: "on"},
	{Name: "checkquorum", Doc: "on or off: raft's Config.CheckQuorum (a leader that has not heard from a quorum for an election timeout steps down, and followers that hear from their leader refuse votes); on by default, as etcd runs it", Default: "on"},
	{Name: "transport", Doc: "datagram or stream: how raft's messages travel, checked and for real (UDP or TCP under `livecheck cluster`). datagram by default: raft tolerates loss, duplication and reordering, and the checker explores them; stream is how etcd runs raft (TCP connections, in order, a broken one reported to raft with RawNode.ReportUnreachable)", Default: "datagram"},
	{Name: "election-ticks", Doc: "raft's ElectionTick: the ticks a follower waits for its leader before it campaigns (the timeout is drawn from [E, 2E), every draw explored); the heartbeat is every tick. 2 by default: the checker fires ticks in any order, so what matters is that a timeout can be short or long, not how many ticks it is", Default: "2", Int: true, Min: 2},
}

// ReadParams reads Params from cfg, with raft's voters the nodes nodes.
func ReadParams(cfg protocol.Config, nodes int) (Settings, sim.Transport, error) {
	s := Settings{Nodes: nodes, ElectionTicks: cfg.IntParam("election-ticks")}
	var err error
	if s.PreVote, err = onOff(cfg, "prevote"); err != nil {
		return s, 0, err
	}
	if s.CheckQuorum, err = onOff(cfg, "checkquorum"); err != nil {
		return s, 0, err
	}
	transport := sim.Datagram
	switch v := cfg.Param("transport"); v {
	case "datagram":
	case "stream":
		transport = sim.Stream
	default:
		return s, 0, fmt.Errorf("--transport must be datagram or stream, not %q", v)
	}
	return s, transport, nil
}

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

// Bootstrap is a node's disk at its first start: an empty log, and the
// membership (nodes voters, raft ids 1 to nodes) as its initial
// ConfState. raft recommends this rather than RawNode.Bootstrap: the
// membership is then part of the disk, the same at every restart, and
// the log starts empty at index 1.
func Bootstrap(nodes int) *raft.MemoryStorage {
	st := raft.NewMemoryStorage()
	cs := &pb.ConfState{}
	for i := range nodes {
		cs.Voters = append(cs.Voters, RaftID(sim.NodeID(i)))
	}
	if err := st.ApplySnapshot(&pb.Snapshot{Metadata: &pb.SnapshotMetadata{ConfState: cs}}); err != nil {
		panic(err)
	}
	return st
}

// NewRawNode builds node self's raft from its disk, at every start.
func NewRawNode(self sim.NodeID, st *raft.MemoryStorage, s Settings) *raft.RawNode {
	rn, err := raft.NewRawNode(&raft.Config{
		ID:            RaftID(self),
		ElectionTick:  s.ElectionTicks,
		HeartbeatTick: 1,
		Storage:       st,
		// One message carries every entry the follower lacks, and the
		// leader does not wait for acknowledgements: fewer messages,
		// fewer states, the same protocol.
		MaxSizePerMsg:   math.MaxUint64,
		MaxInflightMsgs: 256,
		PreVote:         s.PreVote,
		CheckQuorum:     s.CheckQuorum,
		Logger:          nopLogger{},
	})
	if err != nil {
		panic(err)
	}
	return rn
}

// Persist writes a Ready's snapshot, HardState and entries to the disk.
func Persist(st *raft.MemoryStorage, rd raft.Ready) {
	if !raft.IsEmptySnap(rd.Snapshot) {
		if err := st.ApplySnapshot(rd.Snapshot); err != nil {
			panic(err)
		}
	}
	if !raft.IsEmptyHardState(rd.HardState) {
		if err := st.SetHardState(rd.HardState); err != nil {
			panic(err)
		}
	}
	if err := st.Append(rd.Entries); err != nil {
		panic(err)
	}
}

// Send sends a Ready's messages, each to the node its raft id names.
func Send(ctx sim.Context, rd raft.Ready) {
	for _, m := range rd.Messages {
		ctx.Send(NodeID(m.GetTo()), WireOf(m))
	}
}

// nopLogger is raft's Logger that says nothing: raft's default logger
// formats every line, a tenth of a step. Panic and Fatal still stop the
// handler, as raft relies on them to: an invariant raft finds broken is a
// panic the checker reports.
type nopLogger struct{}

func (nopLogger) Debug(...any)            {}
func (nopLogger) Debugf(string, ...any)   {}
func (nopLogger) Info(...any)             {}
func (nopLogger) Infof(string, ...any)    {}
func (nopLogger) Warning(...any)          {}
func (nopLogger) Warningf(string, ...any) {}
func (nopLogger) Error(...any)            {}
func (nopLogger) Errorf(string, ...any)   {}
func (nopLogger) Fatal(v ...any)          { panic(fmt.Sprint(v...)) }
func (nopLogger) Fatalf(f string, v ...any) {
	panic(fmt.Sprintf(f, v...))
}
func (nopLogger) Panic(v ...any) { panic(fmt.Sprint(v...)) }
func (nopLogger) Panicf(f string, v ...any) {
	panic(fmt.Sprintf(f, v...))
}

// RaftID is the raft id of livecheck node id: raft's ids are 1 to n, 0
// meaning none.
func RaftID(id sim.NodeID) uint64 { return uint64(id) + 1 }

// NodeID is the livecheck node of raft id r.
func NodeID(r uint64) sim.NodeID { return sim.NodeID(r - 1) }
