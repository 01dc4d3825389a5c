package host

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"slices"
	"time"

	"github.com/livecheck/livecheck/sim"
)

// The nemesis's failures of a stream system whose nodes run as processes
// (`cluster --nemesis break:A:B,partition:A+B,heal`): the command line
// holds the nodes between two handlers over a control connection to
// each, under the cluster key, as Cluster.hold holds them in one
// process. Each node answers with its clock and the peers it has a
// connection with (it dialed them, was sent a message on theirs, or
// suspects them); the command line takes C, one past every clock, and
// tells each node C and what to do at it: the connections to cut, the
// peers to run Error for in one step, its side of a partition, an entry
// to log. A break's two ends run Error at C, logged as socket-error (one
// SocketError step in the merged log); a partition's ends as
// partition-error, with the partition entry of the lowest node of the
// side without the highest (one Partition step), and a send across is
// then refused as in one process (partition.go); a heal is logged by
// node 0 at C (Heal). The others go on, their clocks raised to C.

// A remoteEnd is a node held over its control connection.
type remoteEnd struct {
	id    sim.NodeID
	c     net.Conn
	r     *bufio.Reader
	w     *bufio.Writer
	l     *link
	clock uint64
	has   []int  // the peers it has a connection with
	snap  uint64 // the last snapshot it recorded
}

// holdRemote holds nodes ids at addrs; peer gives each one's peer (a
// break's other end; itself otherwise). On an error none stays held.
func holdRemote(addrs []string, key []byte, ids []sim.NodeID, peer func(sim.NodeID) sim.NodeID) ([]*remoteEnd, error) {
	if len(key) < MinKey {
		return nil, fmt.Errorf("a control frame needs the cluster key (at least %d bytes)", MinKey)
	}
	if _, err := registerType(reflect.TypeFor[Control]()); err != nil {
		return nil, err
	}
	var ends []*remoteEnd
	fail := func(err error) ([]*remoteEnd, error) {
		for _, e := range ends {
			e.c.Close() // a node whose connection closes goes on
		}
		return nil, err
	}
	for _, id := range ids {
		c, err := net.DialTimeout("tcp", addrs[id], dialTimeout)
		if err != nil {
			return fail(fmt.Errorf("node %d: %v", id, err))
		}
		e := &remoteEnd{id: id, c: c, r: bufio.NewReader(c), w: bufio.NewWriter(c)}
		ends = append(ends, e)
		c.SetDeadline(time.Now().Add(backTimeout))
		e.l, err = dialLink(e.r, e.w, key, controlID, id, 0)
		if err == nil {
			err = writeLinkFrame(e.w, e.l, 0, Control{Op: "hold", Peer: int(peer(id))})
		}
		var fr frame
		var ctl Control
		if err == nil {
			fr, ctl, err = readLinkFrame(e.r, e.l)
		}
		if err == nil && (ctl.Op != "held" || fr.from != id) {
			err = errNotCtl
		}
		if err != nil {
			return fail(fmt.Errorf("node %d did not stop between two handlers: %v", id, err))
		}
		e.clock, e.has, e.snap = fr.clock, ctl.Block, ctl.Snap
	}
	return ends, nil
}

// release tells each held node what to do at clock at (cut: by node;
// none: just go on at at) and closes the connections.
func releaseRemote(ends []*remoteEnd, key []byte, at uint64, cut func(id sim.NodeID) Control) error {
	var errs []error
	var snap uint64
	for _, e := range ends {
		snap = max(snap, e.snap)
	}
	for _, e := range ends {
		ctl := cut(e.id)
		ctl.Op, ctl.Epoch, ctl.Snap = "cut", at, snap
		if err := writeLinkFrame(e.w, e.l, 0, ctl); err != nil {
			errs = append(errs, fmt.Errorf("node %d: %v", e.id, err))
		}
		e.c.Close()
	}
	return errors.Join(errs...)
}

func clockPast(ends []*remoteEnd) uint64 {
	var k uint64
	for _, e := range ends {
		k = max(k, e.clock)
	}
	return k + 1
}

// BreakRemote breaks the connection between nodes a and b of a stream
// system running at addrs (by node id), under the cluster key: false,
// and nothing broken, when neither had a connection with the other.
func BreakRemote(addrs []string, key []byte, a, b sim.NodeID) (bool, error) {
	ends, err := holdRemote(addrs, key, []sim.NodeID{a, b}, func(id sim.NodeID) sim.NodeID { return a + b - id })
	if err != nil {
		return false, err
	}
	brk := slices.Contains(ends[0].has, int(b)) || slices.Contains(ends[1].has, int(a))
	return brk, releaseRemote(ends, key, clockPast(ends), func(id sim.NodeID) Control {
		if !brk {
			return Control{}
		}
		other := []int{int(a + b - id)}
		return Control{Cut: other, Errs: other}
	})
}

// holdAllRemote holds every node at addrs, each asked about itself: the
// nodes' ids, in order, and their ends.
func holdAllRemote(addrs []string, key []byte) ([]sim.NodeID, []*remoteEnd, error) {
	ids := make([]sim.NodeID, len(addrs))
	for i := range ids {
		ids[i] = sim.NodeID(i)
	}
	ends, err := holdRemote(addrs, key, ids, func(id sim.NodeID) sim.NodeID { return id })
	return ids, ends, err
}

// PartitionRemote partitions a stream system running at addrs: the nodes
// of group from the others, as the simulator's Partition step.
func PartitionRemote(addrs []string, key []byte, group []sim.NodeID) error {
	side, err := sideOf(group, len(addrs))
	if err != nil {
		return err
	}
	ids, ends, err := holdAllRemote(addrs, key)
	if err != nil {
		return err
	}
	in := func(id sim.NodeID) bool { return side&(1<<uint(id)) != 0 }
	var members []int
	for _, id := range ids {
		if in(id) {
			members = append(members, int(id))
		}
	}
	first := sim.PartitionEvent(side).Node
	return releaseRemote(ends, key, clockPast(ends), func(id sim.NodeID) Control {
		ctl := Control{Partitioned: true, Part: true}
		for _, j := range ids {
			if in(j) == in(id) {
				continue
			}
			ctl.Cut = append(ctl.Cut, int(j))
			ctl.Blocked = append(ctl.Blocked, int(j))
			// In the simulator's order: for each connection a<b, a's
			// Error then b's; at one node, its peers in id order.
			if slices.Contains(ends[id].has, int(j)) || slices.Contains(ends[j].has, int(id)) {
				ctl.Errs = append(ctl.Errs, int(j))
			}
		}
		if id == first {
			ctl.Mark, ctl.Side = "partition", members
		}
		return ctl
	})
}

// HealRemote heals the partition in force on a stream system running at
// addrs, as the simulator's Heal: node 0 logs it.
func HealRemote(addrs []string, key []byte) error {
	_, ends, err := holdAllRemote(addrs, key)
	if err != nil {
		return err
	}
	return releaseRemote(ends, key, clockPast(ends), func(id sim.NodeID) Control {
		ctl := Control{Partitioned: true}
		if id == 0 {
			ctl.Mark = "heal"
		}
		return ctl
	})
}

// writeCtlFrame writes a frame from from at clock, holding ctl, sealed
// under key (the MAC of the frame alone: a handshake's), and flushes it.
func writeCtlFrame(w *bufio.Writer, key []byte, from sim.NodeID, clock uint64, ctl *Control) error {
	var b bytes.Buffer
	f := frame{from: from, clock: clock}
	if ctl != nil {
		f.msg = *ctl
	}
	if err := encodeFrame(&b, f); err != nil {
		return err
	}
	seal(key, &b)
	if err := writeFrame(w, b.Bytes()); err != nil {
		return err
	}
	return w.Flush()
}

// readRawFrame reads a frame after its length, of at most
// DefaultMaxMessage bytes.
func readRawFrame(r *bufio.Reader) ([]byte, error) {
	var l [4]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(l[:])
	if size > DefaultMaxMessage {
		return nil, fmt.Errorf("a frame of %d bytes", size)
	}
	f := make([]byte, size)
	if _, err := io.ReadFull(r, f); err != nil {
		return nil, err
	}
	return f, nil
}

// readCtlFrame reads a frame holding a Control, sealed under key (nil:
// none) with the MAC of the frame alone: a handshake's.
func readCtlFrame(r *bufio.Reader, key []byte) (frame, Control, error) {
	f, err := readRawFrame(r)
	if err != nil {
		return frame{}, Control{}, err
	}
	body := f
	if key != nil { // the frame's MAC, as Node.unseal checks it
		if len(f) < macSize {
			return frame{}, Control{}, errNotCtl
		}
		var mac []byte
		body, mac = f[:len(f)-macSize], f[len(f)-macSize:]
		m := hmac.New(sha256.New, key)
		m.Write(body)
		if !hmac.Equal(m.Sum(nil)[:macSize], mac) {
			return frame{}, Control{}, errNotCtl
		}
	}
	fr, err := decodeFrame(body)
	if err != nil {
		return frame{}, Control{}, err
	}
	c, ok := fr.msg.(Control)
	if !ok {
		return frame{}, Control{}, errNotCtl
	}
	return fr, c, nil
}

// holdForRemote is a node's side of holdRemote, on the control
// connection it came on: the node stops between two handlers, says its
// clock and the peers it has a connection with, and does what it is
// told at the clock it is given.
func (t *tcp) holdForRemote(peer sim.NodeID, c *net.TCPConn, r *bufio.Reader, l *link) {
	n := t.n
	if peer < 0 || int(peer) >= len(t.peers) {
		n.logf("dropped a request to hold for the nemesis with node %d, no node", peer)
		n.stats.malformed.Add(1)
		return
	}
	brk, clock, ok := t.holdSelf(peer, -1)
	if !ok {
		return
	}
	c.SetDeadline(time.Now().Add(backTimeout))
	w := bufio.NewWriter(c)
	held := Control{Op: "held", Snap: n.epochA.Load()}
	t.mu.Lock()
	for id := range t.peers {
		if t.hasConn(sim.NodeID(id)) {
			held.Block = append(held.Block, id)
		}
	}
	t.mu.Unlock()
	err := writeLinkFrame(w, l, clock, held)
	var cut Control
	if err == nil {
		_, cut, err = readLinkFrame(r, l)
	}
	if err == nil && (cut.Op != "cut" || cut.Epoch <= clock) {
		err = errNotCtl
	}
	if err != nil {
		n.logf("the nemesis's hold was called off (%v)", err)
		close(brk.release)
		return
	}
	at := cut.Epoch
	for _, p := range cut.Cut {
		if p >= 0 && p < len(t.peers) && sim.NodeID(p) != n.id {
			t.cutPeer(sim.NodeID(p), at)
		}
	}
	if cut.Partitioned {
		var blocked map[sim.NodeID]bool
		if len(cut.Blocked) > 0 {
			blocked = map[sim.NodeID]bool{}
			for _, p := range cut.Blocked {
				blocked[sim.NodeID(p)] = true
			}
		}
		n.faults.restore(blocked)
	}
	if len(cut.Errs) > 0 {
		n.logf("the nemesis cuts its connections with nodes %v", cut.Errs)
		brk.errs[n.id] = true
		brk.ran.Add(1)
		if cut.Part {
			brk.part = true
			brk.peers = map[sim.NodeID][]sim.NodeID{}
			for _, p := range cut.Errs {
				brk.peers[n.id] = append(brk.peers[n.id], sim.NodeID(p))
			}
		}
	}
	if cut.Mark != "" {
		brk.marks = map[sim.NodeID]LogEntry{n.id: {Node: int(n.id), Kind: cut.Mark, Clock: at, Side: cut.Side}}
	}
	brk.clock, brk.epoch = at, cut.Snap
	close(brk.release)
}
