package host

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"reflect"
	"time"

	"github.com/livecheck/livecheck/sim"
)

// The control protocol: what the command line (`livecheck call`,
// `snapshot`, `cluster`'s nemesis) asks of a running node, and how the
// node takes it.

// Control frames. A frame whose sender is controlID comes from the
// command line (`livecheck call`), not from a node, and holds a Control.
// A node takes one only with a cluster key, whose MAC is then its only
// credential: it may come from any address, but it is bound to its
// node and taken once (a nonce the node hands out for it over UDP, a
// connection's handshake over TCP: channel.go).
const controlID = 1 << 20

// A Control is what the command line asks of a running node.
type Control struct {
	// Op is "next-call": make the next driver call (Node.NextCall);
	// "snapshot": record snapshot Epoch (Node.Snapshot); "fault": apply
	// the nemesis's Fault (drop, duplicate; partition with Block the
	// peers to drop every datagram to, none to heal: see nemesis.go).
	Op    string
	Epoch uint64
	Fault string
	Peer  int
	Count int
	Block []int
	// The nemesis's barrier across processes (remote.go): "hold" (Peer:
	// the peer of a break), answered by "held" (Block: the peers the
	// node has a connection with); then "cut" at clock Epoch: Cut the
	// peers to cut the connections with, Errs those to run Error for in
	// one step (Part: a partition's), Blocked the partition's other side
	// when Partitioned is set, and Mark an entry to log (a partition's,
	// with Side; a heal's).
	Cut, Errs, Blocked, Side []int
	Part, Partitioned        bool
	Mark                     string
	// The handshake of a connection (tcp.go): "hello" (Peer: the node
	// dialed, -1 for whichever listens; Nonce: the dialer's), answered
	// by "challenge" (Nonce: the listener's; Echo: the dialer's).
	Nonce, Echo uint64
	// Snap, in "held", is the last snapshot the node recorded; in "cut"
	// and in a restart's "reset" (back.go), the snapshot each held node
	// records before its part of the failure, if it has not (the
	// highest any of them had: see barrier.epoch).
	Snap uint64
}

// control does what a control frame asks.
func (n *Node) control(msg sim.Message, src string) {
	c, ok := msg.(Control)
	switch {
	case n.opts.Key == nil:
		n.logf("dropped a control frame from %s: the node has no cluster key to check it by", src)
		n.stats.strangers.Add(1)
	case ok && c.Op == "fault":
		n.logf("%s asks for the nemesis's %s", src, short(c))
		n.fault(c)
	case ok && c.Op == "snapshot" && c.Epoch > 0:
		n.logf("%s asks for snapshot %d", src, c.Epoch)
		n.Snapshot(c.Epoch)
	case !ok || c.Op != "next-call":
		n.logf("dropped a control frame from %s: it asks for %s", src, short(msg))
		n.stats.malformed.Add(1)
	default:
		n.logf("%s asks for the next driver call", src)
		n.NextCall()
	}
}

// SendControl asks the node at addr, of a stream system or not, to do
// op (see Control), under the cluster's key. Nothing answers: the
// node's log says what it did.
func SendControl(addr string, stream bool, key []byte, op string) error {
	return sendControl(addr, stream, key, Control{Op: op})
}

func sendControl(addr string, stream bool, key []byte, ctl Control) error {
	if len(key) < MinKey {
		return fmt.Errorf("a control frame needs the cluster key (at least %d bytes)", MinKey)
	}
	if _, err := registerType(reflect.TypeFor[Control]()); err != nil {
		return err
	}
	if !stream {
		return sendControlDatagram(addr, key, ctl)
	}
	c, err := net.DialTimeout("tcp", addr, dialTimeout)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(backTimeout))
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	l, err := dialLink(r, w, key, controlID, -1, 0)
	if err != nil {
		return fmt.Errorf("the node at %s did not answer the handshake: %v", addr, err)
	}
	return writeLinkFrame(w, l, 0, ctl)
}

// sendControlDatagram sends ctl to the node at addr in a datagram,
// under the nonce the node hands out for one (channel.go): it asks for
// one, a few times if no answer comes.
func sendControlDatagram(addr string, key []byte, ctl Control) error {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	m := newMacer(key)
	rep := nonce()
	hello := sealDatagram(nil, m, nil, trailer{kind: dgCtlHello, from: controlID, to: anyNode, rep: rep})
	buf := make([]byte, 1<<16)
	for wait := 250 * time.Millisecond; wait <= 2*time.Second; wait *= 2 {
		if _, err := c.Write(hello); err != nil {
			return err
		}
		c.SetReadDeadline(time.Now().Add(wait))
		for {
			k, err := c.Read(buf)
			if err != nil {
				break // no answer yet: ask again, and wait longer
			}
			_, t, ok, short := openDatagram(m, buf[:k])
			if !ok || short || t.kind != dgCtlChal || t.rep != rep || t.to != controlID {
				continue
			}
			var b bytes.Buffer
			if err := encodeFrame(&b, frame{from: controlID, msg: ctl}); err != nil {
				return err
			}
			_, err = c.Write(sealDatagram(nil, m, b.Bytes(), trailer{kind: dgData, from: controlID, to: t.from, sess: t.sess, rep: rep, seq: 1}))
			return err
		}
	}
	return fmt.Errorf("the node at %s did not answer: is it up, and is the key its own?", addr)
}

// RequestSnapshot asks every node of a cluster, by the addresses in its
// run logs and under its key, to record snapshot epoch (see
// Control): what `livecheck snapshot` sends. Nodes that cannot be asked
// are left out; the error says so only when none could be.
func RequestSnapshot(logs []*RunLogFile, key []byte, epoch uint64) error {
	var errs []error
	for _, l := range logs {
		if l.Header.Addr == "" {
			errs = append(errs, fmt.Errorf("%s names no address (a log of an older livecheck)", l.Name))
			continue
		}
		if err := sendControl(l.Header.Addr, l.Header.Stream, key, Control{Op: "snapshot", Epoch: epoch}); err != nil {
			errs = append(errs, fmt.Errorf("node %d at %s: %v", l.Header.Node, l.Header.Addr, err))
		}
	}
	if len(errs) == len(logs) {
		return errors.Join(errs...)
	}
	return nil
}
