package host

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// Options says which node to run and how.
type Options struct {
	System *protocol.System
	Config protocol.Config
	// ID is the node to run, 0 to the configuration's nodes less one.
	ID sim.NodeID
	// Peers are the nodes' addresses ("127.0.0.1:7001"), by node id, one
	// for each node of the configuration: UDP addresses for a datagram
	// system, TCP for a stream system. The node listens on Peers[ID] and
	// accepts messages only from the others' addresses.
	Peers []string
	// Data is the directory of the node's state file (its durable
	// fields). Empty: they are kept in memory only, and a restart loses
	// them.
	Data string
	// Seed seeds the node's Choose, with its id.
	Seed uint64
	// Log receives the node's log: its Logf lines, each Choose drawn,
	// what it dropped and why, a handler that panicked. Nil: none.
	Log io.Writer
	// MaxMessage is the largest frame sent or accepted, in bytes
	// (0: DefaultMaxMessage).
	MaxMessage int
	// Key, if set, is the cluster's key: every frame the node sends
	// carries an HMAC-SHA256 under the key of the frame and of its
	// channel (sender, receiver, the channel's nonces, its sequence
	// number: see channel.go), and every frame it takes must, or it is
	// dropped and counted (Stats.Unauthenticated, Replayed,
	// Misdirected). Every node of a cluster must have the same key, of
	// at least MinKey bytes. Without a key the node runs only if every
	// peer is on loopback, and says so in its log.
	Key []byte
	// RunLog, if set, is the file the node appends a line to for each
	// handler it runs (see runlog.go): what `livecheck trace` merges.
	// With Data, the log and the state file confirm each other
	// (chain.go): a state file missing, rolled back or of another run
	// makes the node refuse to start.
	RunLog string
	// Fresh starts the node afresh: its state file, if any, is not
	// loaded (the durable fields start as New makes them) and is
	// written again at Init, and its run log records the Init as a
	// fresh boot (`run --fresh`).
	Fresh bool
	// HoldCalls: the node makes the driver's calls to it (Spec.Calls)
	// only when asked (Node.NextCall, `livecheck call`), one at a time,
	// rather than all after its first Init.
	HoldCalls bool
	// OnStep, if set, is called after each handler with a copy of the
	// node's state, from the node's goroutine: it must not block long.
	OnStep func(Step)

	// Bound sockets, for a cluster that picks free ports first.
	packet  packetConn
	stream  streamListener
	restart bool
	// hold, a test hook, holds back a message the node sends until
	// Node.release: a message in flight for as long as a test wants.
	hold func(to sim.NodeID, msg sim.Message) bool
	// tap, a test hook, sees every datagram the node sends, and every
	// write on the connections it dials, as they go on the wire: what
	// an attacker on the network records. True swallows a datagram.
	tap func(to sim.NodeID, raw []byte) bool
	// drop and dup are the nemesis's faults set up before the node
	// starts (ClusterOptions.Faults).
	drop, dup map[sim.NodeID]int
	// blocked are the peers across the partition in force when the
	// node starts (a restart during one: see partition.go).
	blocked map[sim.NodeID]bool
	// resetClock, for a node the nemesis restarts on streams
	// (Cluster.Restart), is the Lamport clock of its Init: that of its
	// peers' Error steps, which the merged log joins into one Reset.
	resetClock uint64
	// crash, a test hook, is asked at each crash point (chain.go) of
	// the node's handlers: true kills the node there, as a kill -9
	// would, with nothing more written or sent.
	crash func(point string) bool
	// exe, a test hook, stands for the executable's identity in the
	// run log's header.
	exe string
	// restarted says the node starts again after its process died
	// (Cluster.Revive), with or without a run log or state file to say
	// so.
	restarted bool
	// SuspectFor is how long a node of a stream system waits for a peer
	// whose connection broke without the nemesis (its process died,
	// most often) to start again before it is told the connection broke
	// (Error); meanwhile what it sends the peer is lost. A peer back in
	// time is the simulator's reset: see back.go. 0: DefaultSuspectFor.
	SuspectFor time.Duration
}

// A Step is one handler a node ran: for Options.OnStep.
type Step struct {
	Node  sim.NodeID
	Event string   // "Receive lock.grant{Lease:1} from 0"
	State sim.Node // a copy of the node's state after it
}

// Stats are a node's counts, for tests and logs.
type Stats struct {
	Handled    int64 // handlers run
	Received   int64 // messages handed to Receive
	Sent       int64 // messages handed to the network
	Malformed  int64 // frames dropped: not a frame, another version, a message that does not decode
	Oversized  int64 // frames dropped, sent or received, longer than MaxMessage
	Strangers  int64 // frames dropped: from an address that is no peer's, or naming another sender
	Unsendable int64 // messages the wire cannot carry (a func or chan in them: see codec.go)
	Lost       int64 // messages lost with a connection that broke or could not be made (streams)
	Broken     int64 // broken connections told to the node (Error)
	Writes     int64 // state file writes
	// Unauthenticated counts frames dropped for a missing or wrong MAC
	// (with Options.Key).
	Unauthenticated int64
	// Replayed counts frames dropped, with a good MAC, because they are
	// not fresh on their channel (channel.go): taken already, older than
	// the replay window, of a session or connection that is no longer
	// (or never was) the channel's, a challenge not asked for, a
	// control frame's nonce used already; and connections dropped in
	// their handshake (a recorded hello or stream played again).
	Replayed int64
	// Misdirected counts frames dropped, with a good MAC, because they
	// are for another node.
	Misdirected int64
	// Channels counts the channels opened to the node: datagram
	// sessions confirmed, connections through their handshake.
	Channels int64
	// Stuck counts handlers that ran past the model's HandlerTimeout
	// (the checker's divergence): each is logged once.
	Stuck int64
}

// A Node is one running node.
type Node struct {
	opts  Options
	sys   *protocol.System
	model *protocol.Model
	id    sim.NodeID
	max   int

	mu    sync.Mutex // held while a handler runs; State reads under it
	node  sim.Node
	calls int // driver calls made (Spec.Calls to this node)

	inbox   chan event
	stop    chan struct{}
	done    chan struct{}
	stopped sync.Once
	err     error // why the node stopped, when it stopped on its own

	// The node goroutine's own, while a handler runs.
	ctx     hostCtx
	cur     *event
	timers  map[string]*timer
	gen     uint64
	choose  *rand.Rand
	jitter  *rand.Rand
	out     []outgoing
	durable []byte // the durable fields and calls last written (durableFields)
	stGen   uint64 // the state file's generation on disk (chain.go)
	runID   string // the run log's run
	cfg     protocol.Config
	stepSeq int // the run log index of the handler's entry (frames carry it)
	buf     bytes.Buffer
	clock   uint64 // Lamport clock: see runlog.go
	epoch   uint64 // the last snapshot recorded: see snapshot.go
	lastFP  string // the fingerprint its run log last logged, before this start
	epochA  atomic.Uint64
	// clockA is clock, for the transport's goroutines: the clock of the
	// node's last handler, or the nemesis's raise (tcp.send).
	clockA  atomic.Uint64
	heldMu  sync.Mutex
	held    []outgoing // frames the test hook holds back (Options.hold)
	faults  faults     // the nemesis's: see nemesis.go
	step    jointStep  // the handlers of one step: see partition.go
	applied []LogEntry // the faults applied to the handler's sends, to log
	boot    int        // starts before this one, as the run log counts them
	// backReset: the node started again on its own and held its peers
	// first (back.go): its Init is a reset's.
	backReset bool
	choices   []int // the handler's Choose values
	rlog      *runLog
	// running is the handler under way, for the watchdog; nil between
	// handlers.
	running atomic.Pointer[running]

	tr    transport
	stats counters
	logMu sync.Mutex
}

type counters struct {
	handled, received, sent, malformed, oversized, strangers, unsendable, lost, broken, writes, unauth, stuck atomic.Int64
	replayed, misdirected, channels                                                                           atomic.Int64
}

// A transport carries frames between the nodes: UDP or TCP.
type transport interface {
	// send hands frame to the network for node to, without waiting for
	// the network.
	send(to sim.NodeID, frame []byte)
	close()
}

type outgoing struct {
	to    sim.NodeID
	frame []byte
	held  bool // by the test hook Options.hold
}

type evKind uint8

const (
	evInit evKind = iota
	evMsg
	evTimer
	evApp
	evError
	evNextCall // make the next driver call (Node.NextCall)
	evSnap     // record snapshot epoch (Node.Snapshot)
	evBreak    // the nemesis breaks the connection to peer (nemesis.go)
)

type event struct {
	kind  evKind
	clock uint64 // a message's sender's clock
	epoch uint64 // a message's sender's snapshot epoch; evSnap's epoch
	sent  int    // a message's sender's log entry (frame.seq)
	conn  uint64 // a message's or an Error's connection (tcp.seq); 0: none
	brk   *barrier
	peer  sim.NodeID
	msg   sim.Message
	timer string
	gen   uint64
	call  sim.AppCall
	// callIdx is a driver call's index in Spec.Calls; -1 for one made
	// from Go.
	callIdx int
	// refused marks an Error for a send across a partition on streams
	// (partition.go), told after the handler whose index in the step is
	// parent.
	refused bool
	parent  int
}

type timer struct {
	t        *time.Timer
	gen      uint64
	periodic bool
}

// Start starts node opts.ID: it builds the node, loads its state file if
// there is one, listens on its address, runs Init and makes the driver's
// calls to the node (Spec.Calls; unless Options.HoldCalls), and returns. A damaged state
// file, a bad configuration or an address that cannot be bound is an
// error, and no node runs.
func Start(opts Options) (*Node, error) {
	if opts.System == nil {
		return nil, errors.New("no system to run")
	}
	cfg, m, err := opts.System.Model(opts.Config)
	if err != nil {
		return nil, err
	}
	nodes := m.Spec.Nodes
	switch {
	case opts.ID < 0 || int(opts.ID) >= nodes:
		return nil, fmt.Errorf("node %d is not a node of %s with %d nodes: 0 to %d", opts.ID, opts.System.Name, nodes, nodes-1)
	case len(opts.Peers) != nodes:
		return nil, fmt.Errorf("%s with %d nodes needs %d addresses, one per node, not %d", opts.System.Name, nodes, nodes, len(opts.Peers))
	}
	for _, t := range []reflect.Type{reflect.TypeFor[Control](), reflect.TypeFor[Marker]()} {
		if _, err := registerType(t); err != nil {
			return nil, err
		}
	}
	if err := discover(fmt.Sprintf("%p %v", opts.System, cfg), m); err != nil {
		return nil, fmt.Errorf("%s cannot run for real: %v", opts.System.Name, err)
	}
	n := &Node{opts: opts, sys: opts.System, model: m, id: opts.ID, max: opts.MaxMessage,
		inbox: make(chan event, 256), stop: make(chan struct{}), done: make(chan struct{}),
		timers: map[string]*timer{},
		choose: rand.New(rand.NewPCG(opts.Seed, uint64(opts.ID))),
		jitter: rand.New(rand.NewPCG(opts.Seed^0x6a09e667, uint64(opts.ID))),
	}
	if n.max <= 0 {
		n.max = DefaultMaxMessage
	}
	if opts.Key != nil && len(opts.Key) < MinKey {
		return nil, fmt.Errorf("the cluster key has %d bytes: it needs at least %d", len(opts.Key), MinKey)
	}
	if opts.Key == nil {
		if err := keyless(opts.Peers); err != nil {
			return nil, err
		}
		n.logf("no cluster key: its frames are not authenticated, and any process on this host can pass for a node (give every node the same key: Options.Key, --key)")
	}
	n.ctx.n = n
	n.faults.drop, n.faults.dup = maps.Clone(opts.drop), maps.Clone(opts.dup)
	n.faults.blocked = maps.Clone(opts.blocked)
	n.node = m.Spec.New(n.id)
	for _, d := range sim.DurableFields(n.node) {
		if err := codecOf(d.Value.Type()).err; err != nil {
			return nil, fmt.Errorf("durable field %s: %v", d.Name, err)
		}
	}
	hadState, err := n.openDisk(cfg)
	if err != nil {
		return nil, err
	}
	if opts.resetClock > 0 {
		n.clock = max(n.clock, opts.resetClock-1) // handle counts Init
	}
	n.clockA.Store(n.clock)
	if m.Spec.Transport == sim.Stream {
		n.tr, err = startTCP(n)
	} else {
		n.tr, err = startUDP(n)
	}
	if err != nil {
		if n.rlog != nil {
			n.rlog.close()
		}
		return nil, err
	}
	if tc, ok := n.tr.(*tcp); ok && opts.resetClock == 0 && (n.boot > 0 || hadState || opts.restarted) {
		// Started again on its own: a reset, as its peers see it.
		at, snap := tc.back()
		n.clock = at - 1 // handle counts Init
		n.clockA.Store(n.clock)
		if snap > n.epoch {
			if err := n.recordStopped(snap); err != nil {
				n.tr.close()
				n.rlog.close()
				return nil, err
			}
		}
		n.backReset = true
	}
	ready := make(chan struct{})
	go n.loop(ready)
	go n.watchdog()
	select {
	case <-ready:
		return n, nil
	case <-n.done:
		return nil, n.err
	}
}

// ID is the node's id.
func (n *Node) ID() sim.NodeID { return n.id }

// Model is the model the node runs.
func (n *Node) Model() *protocol.Model { return n.model }

// Stop stops the node and waits until it has: its handler done, its
// sockets closed, its timers stopped. What it wrote to its state file
// stays, as a killed process leaves it.
func (n *Node) Stop() {
	n.stopped.Do(func() { close(n.stop) })
	<-n.done
}

// Done is closed once the node has stopped, by Stop or on its own (a
// handler panicked, its state file could not be written).
func (n *Node) Done() <-chan struct{} { return n.done }

// Err says why the node stopped on its own; nil while it runs or after
// Stop.
func (n *Node) Err() error {
	select {
	case <-n.done:
		return n.err
	default:
		return nil
	}
}

// State returns a copy of the node's state between two handlers.
func (n *Node) State() sim.Node {
	n.mu.Lock()
	defer n.mu.Unlock()
	return sim.Copy(n.node)
}

// Call hands call to the node's App handler, after what is queued for
// it; an error if the node has stopped. A call equal to the node's next
// driver call not yet made (the next of Spec.Calls to it, by
// fingerprint) is that driver call: it is counted made, as NextCall
// counts it (a restart does not make it again), and logged with its
// index, so that `trace` merges it as the simulator's App event. Any
// other call is logged as made from Go (call -1), which no path of the
// simulator can name.
func (n *Node) Call(call sim.AppCall) error {
	if !n.post(event{kind: evApp, call: call, callIdx: -1}) {
		return fmt.Errorf("node %d has stopped", n.id)
	}
	return nil
}

// Stats returns the node's counts so far.
func (n *Node) Stats() Stats {
	c := &n.stats
	return Stats{Handled: c.handled.Load(), Received: c.received.Load(), Sent: c.sent.Load(),
		Malformed: c.malformed.Load(), Oversized: c.oversized.Load(), Strangers: c.strangers.Load(),
		Unsendable: c.unsendable.Load(), Lost: c.lost.Load(), Broken: c.broken.Load(), Writes: c.writes.Load(),
		Unauthenticated: c.unauth.Load(), Stuck: c.stuck.Load(),
		Replayed: c.replayed.Load(), Misdirected: c.misdirected.Load(), Channels: c.channels.Load()}
}

// post queues ev for the node; false once the node has stopped.
func (n *Node) post(ev event) bool {
	select {
	case n.inbox <- ev:
		return true
	case <-n.stop:
		return false
	case <-n.done:
		return false
	}
}

func (n *Node) logf(format string, args ...any) {
	if n.opts.Log == nil {
		return
	}
	line := fmt.Sprintf(format, args...)
	n.logMu.Lock()
	fmt.Fprintf(n.opts.Log, "%s node %d: %s\n", time.Now().UTC().Format("15:04:05.000000"), n.id, line)
	n.logMu.Unlock()
}

// loop runs the node's handlers one at a time, as the simulator does:
// Init, the driver's calls to it (then it closes ready), then each event
// as it comes.
func (n *Node) loop(ready chan struct{}) {
	defer func() {
		n.stopped.Do(func() { close(n.stop) })
		for _, t := range n.timers {
			t.t.Stop()
		}
		n.tr.close()
		if n.rlog != nil {
			n.rlog.close()
		}
		close(n.done)
	}()
	if !n.handle(event{kind: evInit}) {
		return
	}
	for !n.opts.HoldCalls {
		ev, ok := n.nextCall()
		if !ok {
			break
		}
		if !n.handle(ev) {
			return
		}
	}
	close(ready)
	for {
		select {
		case <-n.stop:
			return
		case ev := <-n.inbox:
			select {
			case <-n.stop:
				// Stopped: a select picks at random among the cases
				// ready, and a stopped node does nothing more, not even
				// record a snapshot. Recorded after a restart's barrier,
				// the mark would put the restart's Init past the cut
				// and its peers' Error for it before theirs.
				return
			default:
			}
			if ev.kind == evSnap || ev.kind == evMsg && ev.epoch > n.epoch {
				// A frame sent after its sender recorded a snapshot
				// this node has not: record it first (snapshot.go).
				if !n.record(ev.epoch) {
					return
				}
			}
			if ev.kind == evSnap || ev.kind == evMsg && isMarker(ev.msg) {
				continue
			}
			if ev.conn != 0 && (ev.kind == evMsg || ev.kind == evError) && n.tr.(*tcp).stale(ev.peer, ev.conn, ev.clock) {
				continue // from a connection the nemesis broke
			}
			select {
			case <-n.stop:
				return // stopped: no handler after Stop
			default:
			}
			if ev.kind == evBreak {
				if ev = n.atBarrier(ev); ev.kind != evError {
					continue
				}
			}
			if ev.kind == evApp && ev.callIdx < 0 {
				ev.callIdx = n.driverCall(ev.call)
			}
			if ev.kind == evNextCall {
				var ok bool
				if ev, ok = n.nextCall(); !ok {
					n.logf("asked for its next driver call, but it has made them all")
					continue
				}
			}
			ok := n.handle(ev)
			if ev.brk != nil {
				ev.brk.ran.Done()
			}
			if !ok {
				return
			}
		}
	}
}

// nextCall returns the event of the node's next driver call (Spec.Calls
// to it, in order, each once, across restarts), and counts it made.
func (n *Node) nextCall() (event, bool) {
	for i := n.calls; i < len(n.model.Spec.Calls); i++ {
		if c := n.model.Spec.Calls[i]; c.To == n.id {
			n.calls = i + 1
			return event{kind: evApp, call: c.Call, callIdx: i}, true
		}
	}
	n.calls = len(n.model.Spec.Calls)
	return event{}, false
}

// driverCall returns the index in Spec.Calls of call if it is the node's
// next driver call not yet made, and counts it made; else -1.
func (n *Node) driverCall(call sim.AppCall) int {
	for i := n.calls; i < len(n.model.Spec.Calls); i++ {
		if c := n.model.Spec.Calls[i]; c.To == n.id {
			if sim.Fingerprint(c.Call) != sim.Fingerprint(call) {
				return -1
			}
			n.calls = i + 1
			return i
		}
	}
	return -1
}

// NextCall has the node make its next driver call (of Spec.Calls), as
// the checker's driver does, after what is queued for it: for a node
// started with Options.HoldCalls. A node that has made them all says so
// in its log.
func (n *Node) NextCall() error {
	if !n.post(event{kind: evNextCall}) {
		return fmt.Errorf("node %d has stopped", n.id)
	}
	return nil
}

// handle runs the handler of ev, writes the durable fields if they
// changed, then lets what it sent leave. False: the node must stop.
func (n *Node) handle(ev event) bool {
	n.mu.Lock()
	if ev.kind == evTimer {
		t, ok := n.timers[ev.timer]
		if !ok || t.gen != ev.gen {
			n.mu.Unlock()
			return true // cancelled, or set again, after it fired
		}
		if t.periodic {
			n.gen++
			t.gen = n.gen
			n.arm(ev.timer, t)
		} else {
			delete(n.timers, ev.timer)
		}
	}
	if ev.kind == evMsg {
		n.clock = max(n.clock, ev.clock)
	}
	n.clock++
	n.clockA.Store(n.clock)
	n.stepBegin()
	var msgFP uint64
	n.stepSeq = 0
	if n.rlog != nil {
		n.stepSeq = n.rlog.nextSeq()
		if ev.kind == evMsg {
			msgFP = sim.Fingerprint(ev.msg) // before the handler can change it
		}
	}
	n.running.Store(&running{kind: ev.kind, peer: ev.peer, timer: ev.timer, since: time.Now()})
	err := n.run(&ev)
	n.running.Store(nil)
	// The handler's writes, in the order that leaves the state file and
	// the run log reconcilable after a kill at any instant (chain.go):
	// its lines in the log (with the state file's next generation, if
	// its durable fields changed), then the state file, then its
	// messages.
	var fields []stateField
	var body []byte
	if err == nil && n.opts.Data != "" {
		if fields, body, err = durableFields(n.node, n.calls); err == nil && bytes.Equal(body, n.durable) {
			body = nil // unchanged: no write
		}
	}
	err = n.crashAt(err, crashLog)
	var record [][]byte
	if err == nil && n.rlog != nil {
		record, err = n.logStep(&ev, msgFP, body != nil)
	}
	err = n.crashAt(err, crashLogged)
	if err == nil && body != nil {
		err = n.writeState(fields, body, record)
	}
	n.applied = n.applied[:0]
	out := n.out
	n.out = n.out[:0]
	var state sim.Node
	if err == nil && n.opts.OnStep != nil {
		state = sim.Copy(n.node)
	}
	n.mu.Unlock()
	if err != nil {
		n.err = fmt.Errorf("node %d stopped: %w", n.id, err)
		n.logf("stopped: %v", err)
		return false
	}
	tc, _ := n.tr.(*tcp)
	for i, o := range out {
		if i == 1 && n.crashAt(nil, crashSentHalf) != nil {
			n.err = fmt.Errorf("node %d stopped: %w", n.id, errCrash)
			return false
		}
		n.stats.sent.Add(1)
		if tc != nil {
			tc.noteSent(o.to)
		}
		if o.held {
			n.heldMu.Lock()
			n.held = append(n.held, outgoing{to: o.to, frame: o.frame})
			n.heldMu.Unlock()
			continue
		}
		n.tr.send(o.to, o.frame)
	}
	if n.crashAt(nil, crashSent) != nil {
		n.err = fmt.Errorf("node %d stopped: %w", n.id, errCrash)
		return false
	}
	if n.opts.OnStep != nil {
		n.opts.OnStep(Step{Node: n.id, Event: n.describe(&ev), State: state})
	}
	return n.stepDone(&ev)
}

// run runs ev's handler; a panic is an error naming the event.
func (n *Node) run(ev *event) (err error) {
	n.cur = ev
	n.choices = n.choices[:0]
	defer func() {
		n.cur = nil
		if r := recover(); r != nil {
			err = fmt.Errorf("handler %s panicked: %v", n.describe(ev), r)
			n.logf("%v\n%s", err, debug.Stack())
		}
	}()
	n.stats.handled.Add(1)
	c := &n.ctx
	// What the handler draws from crypto/rand is its choices, logged
	// as Choose's are, so that the run replays.
	sim.Drawing(c, func() {
		switch ev.kind {
		case evInit:
			n.node.Init(c)
		case evMsg:
			n.stats.received.Add(1)
			n.node.Receive(c, ev.peer, ev.msg)
		case evTimer:
			n.node.Timer(c, ev.timer)
		case evApp:
			n.node.App(c, ev.call)
		case evError:
			n.stats.broken.Add(1)
			n.node.Error(c, ev.peer)
		}
	})
	return nil
}

// logStep appends the handler just run to the run log, with the
// faults the nemesis applied to its sends, and returns the lines as
// written. wrote: the handler writes the state file, of the next
// generation.
func (n *Node) logStep(ev *event, msgFP uint64, wrote bool) ([][]byte, error) {
	e := LogEntry{Node: int(n.id), Boot: n.boot, Clock: n.clock, Choices: n.choices,
		FP: fmt.Sprintf("%016x", sim.Fingerprint(n.node))}
	if wrote {
		e.Gen = n.stGen + 1
	}
	switch ev.kind {
	case evInit:
		e.Kind, e.Reset = "init", n.opts.resetClock > 0 || n.backReset
		e.Fresh = n.opts.Fresh && n.boot > 0
	case evMsg:
		e.Kind, e.Peer, e.Msg, e.Epoch, e.Sent = "deliver", int(ev.peer), fmt.Sprintf("%016x", msgFP), ev.epoch, ev.sent
	case evTimer:
		e.Kind, e.Timer = "timer", ev.timer
	case evApp:
		e.Kind, e.Call = "app", ev.callIdx
	case evError:
		e.Kind, e.Peer = "error", int(ev.peer)
		switch {
		case ev.refused:
			e.Kind, e.Parent = "refuse-error", ev.parent
		case ev.brk != nil && ev.brk.part:
			e.Kind = "partition-error"
		case ev.brk != nil && ev.brk.down >= 0:
			e.Kind = "reset-error"
		case ev.brk != nil:
			e.Kind = "socket-error"
		}
	}
	lines := []LogLine{{LogEntry: e}}
	for _, a := range n.applied {
		a.Clock, a.Boot = n.clock, n.boot
		lines = append(lines, LogLine{LogEntry: a})
	}
	raws, err := n.rlog.writeLines(lines)
	if err != nil && !errors.Is(err, errCrash) {
		err = fmt.Errorf("its run log cannot be written: %v", err)
	}
	return raws, err
}

// writeState writes the state file of the next generation: fields and
// the driver's calls made, with the step's lines in the run log that
// record it (chain.go).
func (n *Node) writeState(fields []stateField, body []byte, record [][]byte) error {
	f := &stateFile{System: n.sys.Name, Node: int(n.id), Nodes: n.cfg.Nodes, Bugs: n.cfg.Bugs, Params: n.cfg.Params,
		Run: n.runID, Gen: n.stGen + 1, Calls: n.calls, Fields: fields, Record: record}
	if len(record) > 0 {
		last := record[len(record)-1]
		f.HeadSum, _, _ = openLine(last[:len(last)-1])
		f.Head = n.rlog.nextSeq() - 1
	}
	b, err := encodeState(f)
	if err != nil {
		return err
	}
	err = writeAtomic(stateFileName(n.opts.Data, n.id), b, func() error { return n.crashAt(nil, crashStateTmp) })
	if errors.Is(err, errCrash) {
		return err
	}
	if err != nil {
		return fmt.Errorf("its state file cannot be written: %v", err)
	}
	n.stats.writes.Add(1)
	n.durable, n.stGen = body, n.stGen+1
	if err := n.crashAt(nil, crashState); err != nil || n.rlog == nil {
		return err
	}
	if _, err := n.rlog.write(LogLine{Wrote: n.stGen, LogEntry: LogEntry{Node: int(n.id), Boot: n.boot}}); err != nil {
		if errors.Is(err, errCrash) {
			return err
		}
		return fmt.Errorf("its run log cannot be written: %v", err)
	}
	return n.crashAt(nil, crashWrote)
}

// crashAt passes err on; nil, it is errCrash if the test's crash hook
// (Options.crash) kills the node at point.
func (n *Node) crashAt(err error, point string) error {
	if err == nil && n.opts.crash != nil && n.opts.crash(point) {
		return errCrash
	}
	return err
}

// describe says what ev is, for logs: "Receive lock.grant{Lease:1} from 0".
func (n *Node) describe(ev *event) string {
	switch ev.kind {
	case evInit:
		return "Init"
	case evMsg:
		return fmt.Sprintf("Receive %s from %d", short(ev.msg), ev.peer)
	case evTimer:
		return "Timer " + ev.timer
	case evApp:
		return "App " + short(ev.call)
	case evError:
		return fmt.Sprintf("Error %d", ev.peer)
	}
	return "?"
}

// arm starts t's clock: its timing, give or take its jitter.
func (n *Node) arm(name string, t *timer) {
	tm := n.model.TimingOf(name)
	d := tm.After
	if tm.Jitter > 0 {
		d += time.Duration(n.jitter.Int64N(2*int64(tm.Jitter)+1)) - tm.Jitter
	}
	gen := t.gen
	t.t = time.AfterFunc(max(d, 0), func() { n.post(event{kind: evTimer, timer: name, gen: gen}) })
}

// hostCtx is the Context of a node's handlers: what the simulator's
// does, for real. A stacked node (sim.Stack) builds its layers'
// contexts over it, as it does over the simulator's.
type hostCtx struct{ n *Node }

var _ sim.Context = (*hostCtx)(nil)

func (c *hostCtx) Self() sim.NodeID { return c.n.id }
func (c *hostCtx) Nodes() int       { return len(c.n.opts.Peers) }

// Send encodes msg now, as the simulator copies it now; it leaves once
// the handler has returned and the durable fields are on disk.
func (c *hostCtx) Send(to sim.NodeID, msg sim.Message) {
	n := c.n
	if to < 0 || int(to) >= len(n.opts.Peers) {
		panic(fmt.Sprintf("Send to node %d: nodes are 0 to %d", to, len(n.opts.Peers)-1))
	}
	if n.refuse(to, msg) {
		return // lost at the partition: see partition.go
	}
	n.buf.Reset()
	if err := encodeFrame(&n.buf, frame{from: n.id, clock: n.clock, epoch: n.epoch, seq: uint64(n.stepSeq), msg: msg}); err != nil {
		n.logf("message %s to %d not sent: %v", short(msg), to, err)
		n.stats.unsendable.Add(1)
		return
	}
	if k := n.buf.Len() + n.overhead(); k > n.max {
		n.logf("message %s to %d not sent: %d bytes, more than the limit of %d", short(msg), to, k, n.max)
		n.stats.oversized.Add(1)
		return
	}
	held := n.opts.hold != nil && n.opts.hold(to, msg)
	f := bytes.Clone(n.buf.Bytes())
	switch n.faults.take(to) {
	case faultDrop:
		n.applied = append(n.applied, LogEntry{Node: int(n.id), Kind: "drop", Peer: int(to), Msg: fmt.Sprintf("%016x", sim.Fingerprint(msg))})
		n.logf("nemesis: drops %s to %d", short(msg), to)
		return
	case faultDup:
		n.applied = append(n.applied, LogEntry{Node: int(n.id), Kind: "duplicate", Peer: int(to), Msg: fmt.Sprintf("%016x", sim.Fingerprint(msg))})
		n.logf("nemesis: duplicates %s to %d", short(msg), to)
		n.out = append(n.out, outgoing{to, f, held})
	}
	n.out = append(n.out, outgoing{to, f, held})
}

// Deliver has no layer above to go to, as in the simulator.
func (c *hostCtx) Deliver(from sim.NodeID, msg sim.Message) {
	panic(fmt.Sprintf("Deliver from %d: there is no layer above to deliver %s to", from, sim.Dump(msg)))
}

func (c *hostCtx) SetTimer(name string)    { c.n.setTimer(name, false) }
func (c *hostCtx) SetPeriodic(name string) { c.n.setTimer(name, true) }

func (c *hostCtx) CancelTimer(name string) {
	if t, ok := c.n.timers[name]; ok {
		t.t.Stop()
		delete(c.n.timers, name)
	}
}

func (n *Node) setTimer(name string, periodic bool) {
	if t, ok := n.timers[name]; ok {
		t.periodic = t.periodic || periodic
		return
	}
	n.gen++
	t := &timer{gen: n.gen, periodic: periodic}
	n.timers[name] = t
	n.arm(name, t)
}

// Choose draws from the node's seeded source, and logs the draw.
func (c *hostCtx) Choose(k int) int {
	if k <= 0 {
		panic(fmt.Sprintf("Choose(%d): n must be at least 1", k))
	}
	n := c.n
	v := n.choose.IntN(k)
	n.choices = append(n.choices, v)
	if n.opts.Log != nil {
		what := "?"
		if n.cur != nil {
			what = n.describe(n.cur)
		}
		n.logf("choose(%d) = %d in %s", k, v, what)
	}
	return v
}

func (c *hostCtx) Logf(format string, args ...any) {
	c.n.logf("%s", strings.TrimRight(fmt.Sprintf(format, args...), "\n"))
}

// short is v's dump, cut to a length a log line can hold.
func short(v any) string {
	d := sim.Dump(v)
	if len(d) > 200 {
		d = d[:200] + "..."
	}
	return d
}

// The cluster key. A frame's MAC is the first macSize bytes of an
// HMAC-SHA256 under the key, after it. A handshake's frames carry the
// MAC of the frame alone (seal, unseal); every other frame the MAC of
// the frame and its channel (channel.go).
const (
	macSize = 16
	// MinKey is the shortest cluster key: 16 bytes.
	MinKey = 16
)

// overhead is what the channel adds to a frame on the wire: the
// datagram trailer, the MAC.
func (n *Node) overhead() int {
	k := 0
	if n.opts.Key != nil {
		k = macSize
	}
	if n.model.Spec.Transport != sim.Stream {
		k += trailerSize
	}
	return k
}

// keyless says why a node cannot run without a cluster key with peers:
// one of them is off loopback, where anyone who reaches the node's
// address could pass for a node.
func keyless(peers []string) error {
	aps, err := resolve("udp", peers)
	if err != nil {
		return err
	}
	for i, ap := range aps {
		if !ap.Addr().IsLoopback() {
			return fmt.Errorf("node %d's address %s is off loopback: a cluster off loopback needs a cluster key, or anyone who reaches it can pass for a node; make one (head -c 32 /dev/urandom > cluster.key, or let 'livecheck cluster' write DIR/cluster.key) and give it to every node (--key cluster.key)", i, peers[i])
		}
	}
	return nil
}

// seal appends b's MAC under key to b; nothing without a key.
func seal(key []byte, b *bytes.Buffer) {
	if key == nil {
		return
	}
	m := hmac.New(sha256.New, key)
	m.Write(b.Bytes())
	b.Write(m.Sum(nil)[:macSize])
}

// unseal checks b's MAC, when the node has a key, and returns the frame
// without it; false (and counted, with the log line) if it is wrong.
func (n *Node) unseal(b []byte, from string) ([]byte, bool) {
	if n.opts.Key == nil {
		return b, true
	}
	if len(b) >= macSize {
		f, mac := b[:len(b)-macSize], b[len(b)-macSize:]
		m := hmac.New(sha256.New, n.opts.Key)
		m.Write(f)
		if hmac.Equal(m.Sum(nil)[:macSize], mac) {
			return f, true
		}
	}
	n.logf("dropped a frame from %s: its MAC is not the cluster key's", from)
	n.stats.unauth.Add(1)
	return nil, false
}

// A running handler, as the watchdog sees it: what the other goroutines
// may read of its event (not the message, which the handler may change).
type running struct {
	kind  evKind
	peer  sim.NodeID
	timer string
	since time.Time
}

// watchdog logs, once each, the handlers that run longer than the
// model's HandlerTimeout (2 s when it gives none): a node stuck in one
// is the checker's divergence, and nothing else of it runs.
func (n *Node) watchdog() {
	limit := n.model.Spec.HandlerTimeout
	if limit <= 0 {
		limit = 2 * time.Second
	}
	tick := time.NewTicker(limit / 4)
	defer tick.Stop()
	var warned *running
	for {
		select {
		case <-n.done:
			return
		case now := <-tick.C:
			r := n.running.Load()
			if r == nil || r == warned || now.Sub(r.since) < limit {
				continue
			}
			warned = r
			what := [...]string{"Init", "Receive", "Timer", "App", "Error", "App"}[r.kind]
			switch r.kind {
			case evMsg, evError:
				what += fmt.Sprintf(" (from %d)", r.peer)
			case evTimer:
				what += " " + r.timer
			}
			n.logf("handler %s has not returned after %v: the node is stuck in it (the checker's divergence)", what, now.Sub(r.since).Round(time.Millisecond))
			n.stats.stuck.Add(1)
		}
	}
}
