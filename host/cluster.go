package host

import (
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"time"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// A Cluster is every node of a system running in one process, each on
// its own loopback address: for tests, benchmarks and trying a system
// out. Its nodes talk over real sockets exactly as separate processes
// do (`livecheck cluster` runs one process per node).
type Cluster struct {
	System *protocol.System
	Config protocol.Config // normalized
	Model  *protocol.Model
	Nodes  []*Node
	opts   []Options
	logDir string
	cut    sim.NodeSet // the partition in force on streams (partition.go); 0: none
}

// ClusterOptions are a cluster's settings; each zero value has a
// default.
type ClusterOptions struct {
	// Data is the directory of the nodes' state files. Empty: durable
	// fields are kept in memory only.
	Data string
	Seed uint64
	// Log receives every node's log (nil: none).
	Log io.Writer
	// MaxMessage is each node's Options.MaxMessage.
	MaxMessage int
	OnStep     func(Step)
	// Key is every node's Options.Key.
	Key []byte
	// HoldCalls is every node's Options.HoldCalls.
	HoldCalls bool
	// LogDir, if set, is where each node writes its run log,
	// node-I.log (see runlog.go).
	LogDir string
	// Faults are drop and duplicate faults set up before the nodes
	// start (the nemesis's: see nemesis.go), for a fault to the first
	// datagrams a node sends.
	Faults []Fault
	// SuspectFor is every node's Options.SuspectFor.
	SuspectFor time.Duration
	// hold is every node's Options.hold (a test hook).
	hold func(from, to sim.NodeID, msg sim.Message) bool
	// tap is every node's Options.tap (a test hook), with the node.
	tap func(from, to sim.NodeID, raw []byte) bool
	// crash is every node's Options.crash (a test hook), with the node.
	crash func(id sim.NodeID, point string) bool
}

// StartCluster starts every node of sys for cfg on loopback, on ports
// the system picks.
func StartCluster(sys *protocol.System, cfg protocol.Config, co ClusterOptions) (*Cluster, error) {
	cfg, m, err := sys.Model(cfg)
	if err != nil {
		return nil, err
	}
	c := &Cluster{System: sys, Config: cfg, Model: m, logDir: co.LogDir}
	for _, f := range co.Faults {
		switch {
		case m.Spec.Transport == sim.Stream:
			return nil, errors.New("ClusterOptions.Faults are drops and duplicates of datagrams: a stream system has none (break, partition and restart it with Cluster.Apply once it runs)")
		case f.Kind != "drop" && f.Kind != "duplicate":
			return nil, fmt.Errorf("%v: only drop and duplicate faults are set up before the nodes start", f)
		case f.Node < 0 || int(f.Node) >= m.Spec.Nodes || f.Peer < 0 || int(f.Peer) >= m.Spec.Nodes || f.Node == f.Peer:
			return nil, fmt.Errorf("%v: nodes are 0 to %d, and two of them", f, m.Spec.Nodes-1)
		}
	}
	peers, bound, err := bindLoopback(m.Spec.Nodes, m.Spec.Transport)
	if err != nil {
		return nil, err
	}
	for i := range peers {
		o := Options{System: sys, Config: cfg, ID: sim.NodeID(i), Peers: peers, Data: co.Data, Seed: co.Seed,
			Log: co.Log, MaxMessage: co.MaxMessage, OnStep: co.OnStep, Key: co.Key, HoldCalls: co.HoldCalls,
			SuspectFor: co.SuspectFor}
		if co.LogDir != "" {
			o.RunLog = RunLogName(co.LogDir, sim.NodeID(i))
		}
		for _, f := range co.Faults {
			if int(f.Node) != i {
				continue
			}
			if f.Kind == "drop" {
				o.drop = addFault(o.drop, f)
			} else {
				o.dup = addFault(o.dup, f)
			}
		}
		if co.hold != nil {
			from := sim.NodeID(i)
			o.hold = func(to sim.NodeID, msg sim.Message) bool { return co.hold(from, to, msg) }
		}
		if co.tap != nil {
			from := sim.NodeID(i)
			o.tap = func(to sim.NodeID, raw []byte) bool { return co.tap(from, to, raw) }
		}
		if co.crash != nil {
			id := sim.NodeID(i)
			o.crash = func(point string) bool { return co.crash(id, point) }
		}
		c.opts = append(c.opts, o)
		o.packet, o.stream = bound[i].packet, bound[i].stream
		n, err := Start(o)
		if err != nil {
			c.Stop()
			for _, b := range bound[i:] {
				b.close()
			}
			return nil, err
		}
		c.Nodes = append(c.Nodes, n)
	}
	return c, nil
}

func addFault(m map[sim.NodeID]int, f Fault) map[sim.NodeID]int {
	if m == nil {
		m = map[sim.NodeID]int{}
	}
	m[f.Peer] += max(f.Count, 1)
	return m
}

type boundSocket struct {
	packet packetConn
	stream streamListener
}

func (b boundSocket) close() {
	if b.packet != nil {
		b.packet.Close()
	}
	if b.stream != nil {
		b.stream.Close()
	}
}

// bindLoopback binds a socket on a free loopback port for each of n
// nodes.
func bindLoopback(n int, t sim.Transport) ([]string, []boundSocket, error) {
	peers := make([]string, n)
	bound := make([]boundSocket, n)
	for i := range bound {
		var err error
		if t == sim.Stream {
			bound[i].stream, err = net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err == nil {
				peers[i] = bound[i].stream.Addr().String()
			}
		} else {
			bound[i].packet, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err == nil {
				peers[i] = bound[i].packet.LocalAddr().String()
			}
		}
		if err != nil {
			for _, b := range bound[:i] {
				b.close()
			}
			return nil, nil, err
		}
	}
	return peers, bound, nil
}

// Peers are the nodes' addresses, by id.
func (c *Cluster) Peers() []string { return c.opts[0].Peers }

// Stop stops every node. On streams it first holds every node between
// two handlers, so that none runs Error for a peer that stops before it:
// the run ends, as a path of the simulator ends, with no broken
// connection in its logs.
func (c *Cluster) Stop() {
	if c.Model.Spec.Transport == sim.Stream {
		ids := make([]sim.NodeID, len(c.Nodes))
		for i := range ids {
			ids[i] = sim.NodeID(i)
		}
		// Held, a node returns from the barrier when it is stopped; if
		// one cannot be held (it stopped, a handler stuck), the others
		// are let go and stopped as they are.
		c.hold(ids, func(id sim.NodeID) sim.NodeID { return id })
	}
	for _, n := range c.Nodes {
		n.Stop()
	}
}

// Restart stops node id and starts it again on its address: a crash and
// restart, the simulator's reset. With a Data directory it comes back
// with its durable fields. On streams its peers are told as the
// simulator tells them, in the same step (restartStream).
func (c *Cluster) Restart(id sim.NodeID) error {
	if c.Model.Spec.Transport == sim.Stream {
		return c.restartStream(id)
	}
	c.Nodes[id].Stop()
	n, err := Start(c.opts[id])
	if err != nil {
		return err
	}
	c.Nodes[id] = n
	return nil
}

// Kill stops node id at once, as a killed process stops: between two
// handlers, with nothing more written, its peers left to notice its
// connections broke (on streams they suspect it: see back.go). Revive
// starts it again.
func (c *Cluster) Kill(id sim.NodeID) {
	c.Nodes[id].Stop()
}

// Revive starts node id again after Kill, on its address, from its
// state file (with a Data directory): the simulator's reset. On streams
// it holds its peers before its Init, as a process started again does
// (back.go), and the peers that had a connection with it, or suspect
// it, run Error for it then: the merged log has one Reset. A peer that
// suspected it for longer than its Options.SuspectFor was told already,
// which the merge leaves out.
func (c *Cluster) Revive(id sim.NodeID) error {
	o := c.opts[id]
	o.restarted = true
	n, err := Start(o)
	if err != nil {
		return err
	}
	c.Nodes[id] = n
	return nil
}

// State is the nodes' states, each between two of its handlers, as a
// state of the simulator without messages or timers: what properties
// read.
func (c *Cluster) State() *sim.State {
	nodes := make([]sim.Node, len(c.Nodes))
	for i, n := range c.Nodes {
		nodes[i] = n.State()
	}
	return sim.NewState(nodes)
}

// Holds says whether every liveness property of the model holds in s.
func (c *Cluster) Holds(s *sim.State) bool {
	for _, st := range Status(c.Model.Properties, s) {
		if st.Kind == properties.Liveness && !st.Holds {
			return false
		}
	}
	return true
}

// A PropertyStatus says whether a property holds in one state.
type PropertyStatus struct {
	Name  string
	Kind  properties.Kind
	Holds bool
	Why   string // a safety property's violation, or a property's panic
}

// Status evaluates the safety, liveness and reachability properties on
// s. A leads-to property reads a bit of the simulator's path that a
// real run does not keep: it is left out.
func Status(props []properties.Property, s *sim.State) []PropertyStatus {
	var out []PropertyStatus
	for i := range props {
		p := &props[i]
		if p.IsLeadsTo() {
			continue
		}
		st := PropertyStatus{Name: p.Name, Kind: p.Kind}
		func() {
			defer func() {
				if r := recover(); r != nil {
					st.Holds, st.Why = false, fmt.Sprint(r)
				}
			}()
			switch p.Kind {
			case properties.Safety:
				err := p.CheckSafety(s)
				st.Holds = err == nil
				if err != nil {
					st.Why = err.Error()
				}
			case properties.Liveness:
				st.Holds = p.IsLive(s)
			case properties.Reachability:
				st.Holds = p.IsReached(s)
			}
		}()
		out = append(out, st)
	}
	return out
}

// RunLogName is node id's run log in dir.
func RunLogName(dir string, id sim.NodeID) string {
	return filepath.Join(dir, fmt.Sprintf("node-%d.log", id))
}
