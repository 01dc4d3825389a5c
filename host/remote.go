package host

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"reflect"
	"time"

	"github.com/livecheck/livecheck/sim"
)

// The nemesis's break of a stream system whose nodes run as processes
// (`cluster --nemesis break:A:B`): the command line holds both ends
// between two handlers, over a control connection to each (under the
// cluster key), as Cluster.Break holds them in one process. Each end
// answers with its clock and whether it has a connection with the other
// (it dialed it, was sent a message on the other's, or suspects it); the
// command line takes C, one past both clocks, and tells each end C and
// whether to break: if either had a connection, both cut what is left of
// the pair's connections and run Error for the other at C, logged as
// socket-error, which the merge joins into the simulator's one
// SocketError step; if neither had, both go on, their clocks raised to C.

// BreakRemote breaks the connection between nodes a and b of a stream
// system running at addrs (by node id), under the cluster key: false,
// and nothing broken, when neither had a connection with the other.
func BreakRemote(addrs []string, key []byte, a, b sim.NodeID) (bool, error) {
	if len(key) < MinKey {
		return false, fmt.Errorf("a control frame needs the cluster key (at least %d bytes)", MinKey)
	}
	if _, err := registerType(reflect.TypeFor[Control]()); err != nil {
		return false, err
	}
	type end struct {
		c     net.Conn
		r     *bufio.Reader
		w     *bufio.Writer
		clock uint64
		has   bool
	}
	var ends []*end
	defer func() {
		for _, e := range ends {
			e.c.Close()
		}
	}()
	for _, id := range []sim.NodeID{a, b} {
		other := a + b - id
		c, err := net.DialTimeout("tcp", addrs[id], dialTimeout)
		if err != nil {
			return false, fmt.Errorf("node %d: %v", id, err)
		}
		e := &end{c: c, r: bufio.NewReader(c), w: bufio.NewWriter(c)}
		ends = append(ends, e)
		c.SetDeadline(time.Now().Add(backTimeout))
		if err := writeCtlFrame(e.w, key, controlID, 0, nil); err != nil {
			return false, fmt.Errorf("node %d: %v", id, err)
		}
		if err := writeCtlFrame(e.w, key, controlID, 0, &Control{Op: "hold", Peer: int(other)}); err != nil {
			return false, fmt.Errorf("node %d: %v", id, err)
		}
		fr, ctl, err := readCtlFrame(e.r, key)
		if err != nil || ctl.Op != "held" || fr.from != id {
			return false, fmt.Errorf("node %d did not stop between two handlers: %v", id, err)
		}
		e.clock, e.has = fr.clock, ctl.Count > 0
	}
	at := max(ends[0].clock, ends[1].clock) + 1
	brk := ends[0].has || ends[1].has
	n := 0
	if brk {
		n = 1
	}
	for i, e := range ends {
		if err := writeCtlFrame(e.w, key, controlID, 0, &Control{Op: "cut", Epoch: at, Count: n}); err != nil {
			return false, fmt.Errorf("node %d: %v", []sim.NodeID{a, b}[i], err)
		}
	}
	return brk, nil
}

// writeCtlFrame writes a frame from from at clock, holding ctl (nil: a
// hello), sealed under key, and flushes it.
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

// readCtlFrame reads a frame holding a Control, sealed under key.
func readCtlFrame(r *bufio.Reader, key []byte) (frame, Control, error) {
	var l [4]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return frame{}, Control{}, err
	}
	size := binary.BigEndian.Uint32(l[:])
	if size > DefaultMaxMessage {
		return frame{}, Control{}, fmt.Errorf("a frame of %d bytes", size)
	}
	f := make([]byte, size)
	if _, err := io.ReadFull(r, f); err != nil {
		return frame{}, Control{}, err
	}
	if len(f) < macSize {
		return frame{}, Control{}, errNotCtl
	}
	body, mac := f[:len(f)-macSize], f[len(f)-macSize:]
	m := hmac.New(sha256.New, key)
	m.Write(body)
	if !hmac.Equal(m.Sum(nil)[:macSize], mac) {
		return frame{}, Control{}, errNotCtl
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

// holdRemote is a node's side of BreakRemote, on the control connection
// it came on: the node stops between two handlers, says its clock and
// whether it has a connection with peer, and does what it is told.
func (t *tcp) holdRemote(peer sim.NodeID, c *net.TCPConn, r *bufio.Reader, src netip.AddrPort) {
	n := t.n
	if peer < 0 || int(peer) >= len(t.peers) || peer == n.id {
		n.logf("dropped a request to hold for a break with node %d, no peer of its", peer)
		n.stats.malformed.Add(1)
		return
	}
	brk := &barrier{arrived: make(chan uint64, 1), release: make(chan struct{}), errs: map[sim.NodeID]bool{}, down: -1}
	if !n.post(event{kind: evBreak, peer: peer, brk: brk}) {
		return
	}
	var clock uint64
	select {
	case clock = <-brk.arrived:
	case <-time.After(backTimeout):
		close(brk.release)
		return
	}
	c.SetDeadline(time.Now().Add(backTimeout))
	w := bufio.NewWriter(c)
	t.mu.Lock()
	has := t.owed[peer] || t.out[peer] != nil || t.inFrom[peer]
	t.mu.Unlock()
	held := Control{Op: "held"}
	if has {
		held.Count = 1
	}
	err := writeCtlFrame(w, n.opts.Key, n.id, clock, &held)
	var cut Control
	if err == nil {
		_, cut, err = readCtlFrame(r, n.opts.Key)
	}
	if err != nil || cut.Op != "cut" || cut.Epoch <= clock {
		n.logf("the nemesis's break with node %d was called off (%v)", peer, err)
		close(brk.release)
		return
	}
	if cut.Count > 0 {
		n.logf("the nemesis breaks its connection with node %d", peer)
		t.cutPeer(peer, cut.Epoch)
		brk.errs[n.id] = true
		brk.ran.Add(1)
	}
	brk.clock = cut.Epoch
	close(brk.release)
}
