package host

import (
	"bufio"
	"net"
	"time"

	"github.com/livecheck/livecheck/sim"
)

// The restart's barrier on streams. The simulator's reset is one step:
// the node crashes and starts again, and each peer with a connection to
// it runs Error for it, before the node's Init. A node of a stream
// system whose process was killed and started again (by `livecheck
// cluster`, by hand, by any supervisor) does the same before its Init:
// it dials each peer and asks it to stop between two handlers (a frame
// holding Control{Op: "back"}); each peer answers with its clock and
// waits; the node takes C, one past every clock it heard (and its own),
// and tells each peer C. A peer that had a connection with the node, or
// suspects it (see suspect in tcp.go), cuts what is left of the pair's
// connections and runs Error for the node at clock C, logged as
// reset-error; the others go on with their clocks raised to C. The node
// runs Init at C. The merged log joins the Error steps and the Init into
// one Reset of the node, as for the nemesis's restart (restartStream). A
// peer that does not answer within backTimeout (its own process down,
// or started again itself) is left out: it is told later, when it
// suspects the node for Options.SuspectFor, which the merge cannot join.

const (
	backDial    = time.Second
	backTimeout = 5 * time.Second
)

// DefaultSuspectFor is how long a node of a stream system waits, by
// default, for a peer whose connection broke to come back before it is
// told (Options.SuspectFor).
const DefaultSuspectFor = 3 * time.Second

func (n *Node) suspectFor() time.Duration {
	if n.opts.SuspectFor > 0 {
		return n.opts.SuspectFor
	}
	return DefaultSuspectFor
}

// back holds the node's peers for its restart, and returns the clock of
// its Init, C, and the last snapshot any of them (or the node) recorded,
// which the node records before its Init and each held peer before its
// Error, if it has not. Every event from before C (a frame a peer sent
// the node's earlier process, or this one before C) is stale from then
// on.
func (t *tcp) back() (uint64, uint64) {
	n := t.n
	type held struct {
		id sim.NodeID
		c  *net.TCPConn
		w  *bufio.Writer
		l  *link
	}
	var hs []held
	clock, epoch := n.clock, n.epoch
	for id, addr := range t.peers {
		if sim.NodeID(id) == n.id {
			continue
		}
		c, err := net.DialTimeout("tcp", addr.String(), backDial)
		if err != nil {
			n.logf("restarted: node %d is not up (%v)", id, err)
			continue
		}
		conn := c.(*net.TCPConn)
		conn.SetDeadline(time.Now().Add(backTimeout))
		w := bufio.NewWriter(conn)
		r := bufio.NewReader(conn)
		l, err := dialLink(r, w, n.opts.Key, n.id, sim.NodeID(id), n.clock)
		if err == nil {
			err = writeLinkFrame(w, l, n.clock, Control{Op: "back"})
		}
		var k, snap uint64
		if err == nil {
			k, snap, err = readHeld(r, l)
		}
		if err != nil {
			n.logf("restarted: node %d did not stop for its restart (%v)", id, err)
			conn.Close()
			continue
		}
		clock = max(clock, k)
		epoch = max(epoch, snap)
		hs = append(hs, held{sim.NodeID(id), conn, w, l})
	}
	at := clock + 1
	t.mu.Lock()
	for id := range t.peers {
		// What came on the connections accepted so far was sent to the
		// node's earlier process, or to this one before its Init.
		t.seq++
		t.cut[id] = t.seq
	}
	for _, h := range hs {
		// A held peer's frames from before C were sent before the reset.
		peer := h.id
		t.cutAt[peer] = at
	}
	t.mu.Unlock()
	for _, h := range hs {
		if err := writeLinkFrame(h.w, h.l, n.clock, Control{Op: "reset", Epoch: at, Snap: epoch}); err != nil {
			n.logf("restarted: a peer did not hear its clock: %v", err)
		}
		h.c.Close()
	}
	n.logf("restarted: %d peers held, Init at clock %d", len(hs), at)
	return at, epoch
}

// readHeld reads a held peer's answer: its clock and the last snapshot
// it recorded.
func readHeld(r *bufio.Reader, l *link) (clock, snap uint64, err error) {
	fr, c, err := readLinkFrame(r, l)
	if err != nil {
		return 0, 0, err
	}
	if c.Op != "held" {
		return 0, 0, errNotCtl
	}
	return fr.clock, c.Snap, nil
}

type ctlError string

func (e ctlError) Error() string { return string(e) }

const errNotCtl = ctlError("not the frame the restart's barrier expects")

// backPeer is a peer's side of node from's restart (back), on the
// connection it came on: the node stops between two handlers, says its
// clock, and waits for the restarted node's C; then, if it had a
// connection with it or suspects it, it runs Error for it at C.
func (t *tcp) backPeer(from sim.NodeID, c *net.TCPConn, r *bufio.Reader, l *link) {
	n := t.n
	brk, clock, ok := t.holdSelf(from, from)
	if !ok {
		return
	}
	c.SetDeadline(time.Now().Add(backTimeout))
	w := bufio.NewWriter(c)
	err := writeLinkFrame(w, l, clock, Control{Op: "held", Snap: n.epochA.Load()})
	var at uint64
	var ctl Control
	if err == nil {
		_, ctl, err = readLinkFrame(r, l)
		if err == nil && ctl.Op != "reset" {
			err = errNotCtl
		}
		at = ctl.Epoch
	}
	if err != nil || at <= clock {
		n.logf("node %d's restart was called off (%v)", from, err)
		close(brk.release)
		return
	}
	t.mu.Lock()
	tell := t.hasConn(from)
	t.mu.Unlock()
	t.cutPeer(from, at)
	brk.clock, brk.epoch = at, ctl.Snap
	if tell {
		brk.errs[n.id] = true
		brk.ran.Add(1)
	}
	close(brk.release)
}

// holdSelf holds the node between two handlers, at a barrier of its own
// for a failure with peer (down: the node restarted, for a reset; -1
// for another), and returns it with the node's clock; false, and nothing
// held, if the node does not come within backTimeout.
func (t *tcp) holdSelf(peer, down sim.NodeID) (*barrier, uint64, bool) {
	brk := &barrier{arrived: make(chan uint64, 1), release: make(chan struct{}), errs: map[sim.NodeID]bool{}, down: down}
	if !t.n.post(event{kind: evBreak, peer: peer, brk: brk}) {
		return nil, 0, false
	}
	select {
	case clock := <-brk.arrived:
		return brk, clock, true
	case <-time.After(backTimeout):
		close(brk.release) // called off: brk.clock is 0
		return nil, 0, false
	}
}
