package host

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/livecheck/livecheck/sim"
)

// The datagram transport: each frame is one UDP datagram, sent from the
// node's own address, so that a receiver knows its sender by the address
// as well as by the id the frame names, and drops a frame on which the
// two disagree, or from an address that is no peer's. Each datagram
// belongs to a session of its pair, opened by a handshake, and is taken
// once (channel.go).

type packetConn = *net.UDPConn

const (
	// helloFirst and helloMost bound the wait before a hello not
	// answered is sent again (it doubles): a peer not up yet, a
	// datagram lost.
	helloFirst = 20 * time.Millisecond
	helloMost  = time.Second
	// rechallenge is how often a receiver challenges again a sender that
	// goes on in a session it does not know, with the same nonce (its
	// challenge was lost).
	rechallenge = 100 * time.Millisecond
	// ctlNonces is how many control nonces a node keeps: the command
	// line's challenges not yet used.
	ctlNonces = 64
)

type udp struct {
	n     *Node
	conn  *net.UDPConn
	peers []netip.AddrPort
	ids   map[netip.AddrPort]sim.NodeID
	done  chan struct{}

	mu     sync.Mutex // the sending side of every pair
	closed bool
	out    []udpOut // by peer
	smac   *macer
	sbuf   []byte

	// The reader goroutine's own.
	in   []udpIn // by peer
	rmac *macer
	rbuf []byte
	ctl  []uint64 // the control nonces handed out and not used, oldest first
}

// udpOut is the node's sending side of a pair, under udp.mu.
type udpOut struct {
	sess, seq uint64
	// rep is the nonce the node takes the peer's next challenge for:
	// sent in its hellos and datagrams, drawn again once one is taken.
	rep      uint64
	queue    [][]byte // frames waiting for a session
	helloing bool     // a hello waits for its challenge
}

// udpIn is the node's receiving side of a pair.
type udpIn struct {
	cur  uint64 // the session the peer sends in; 0: none yet
	win  replayWin
	pend uint64 // the session of the last challenge, not confirmed yet
	echo uint64 // the sender's nonce that challenge holds
	at   time.Time
}

// resolve parses the peers' addresses.
func resolve(network string, addrs []string) ([]netip.AddrPort, error) {
	out := make([]netip.AddrPort, len(addrs))
	for i, a := range addrs {
		ap, err := netip.ParseAddrPort(a)
		if err != nil {
			ua, rerr := net.ResolveUDPAddr(network, a)
			if rerr != nil {
				return nil, fmt.Errorf("node %d's address %q: %v", i, a, rerr)
			}
			ap = ua.AddrPort()
		}
		out[i] = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return out, nil
}

func startUDP(n *Node) (transport, error) {
	peers, err := resolve("udp", n.opts.Peers)
	if err != nil {
		return nil, err
	}
	u := &udp{n: n, peers: peers, ids: map[netip.AddrPort]sim.NodeID{}, done: make(chan struct{}), conn: n.opts.packet,
		out: make([]udpOut, len(peers)), in: make([]udpIn, len(peers)), smac: newMacer(n.opts.Key), rmac: newMacer(n.opts.Key)}
	for i, p := range peers {
		u.ids[p] = sim.NodeID(i)
	}
	if u.conn == nil {
		if u.conn, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(peers[n.id])); err != nil {
			return nil, fmt.Errorf("node %d cannot listen on %s: %v", n.id, peers[n.id], err)
		}
	}
	go u.read()
	// A session with every peer at once: each drops what it kept of
	// this node's earlier process, whose datagrams it then refuses.
	u.mu.Lock()
	for i := range peers {
		if sim.NodeID(i) != n.id {
			u.hello(sim.NodeID(i))
		}
	}
	u.mu.Unlock()
	return u, nil
}

// write sends datagram d to peer to (the tap may swallow it).
func (u *udp) write(to sim.NodeID, d []byte) {
	if tap := u.n.opts.tap; tap != nil && tap(to, d) {
		return
	}
	if _, err := u.conn.WriteToUDPAddrPort(d, u.peers[to]); err != nil {
		u.n.stats.lost.Add(1)
	}
}

func (u *udp) send(to sim.NodeID, frame []byte) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return
	}
	o := &u.out[to]
	if o.sess == 0 {
		if len(o.queue) >= queueFrames {
			u.n.stats.lost.Add(1)
			return
		}
		o.queue = append(o.queue, frame)
		u.hello(to)
		return
	}
	u.sendIn(to, dgData, frame)
}

// sendIn sends a datagram of kind in the session with to, under u.mu.
func (u *udp) sendIn(to sim.NodeID, kind byte, frame []byte) {
	o := &u.out[to]
	o.seq++
	u.sbuf = sealDatagram(u.sbuf, u.smac, frame, trailer{kind: kind, from: uint32(u.n.id), to: uint32(to), sess: o.sess, rep: o.rep, seq: o.seq})
	u.write(to, u.sbuf)
}

// hello asks to for a session, under u.mu, unless a hello waits
// already; it is sent again until a challenge comes.
func (u *udp) hello(to sim.NodeID) {
	o := &u.out[to]
	if o.helloing {
		return
	}
	o.helloing = true
	if o.rep == 0 {
		o.rep = nonce()
	}
	wait := helloFirst // under u.mu
	var again func()
	again = func() {
		u.sbuf = sealDatagram(u.sbuf, u.smac, nil, trailer{kind: dgHello, from: uint32(u.n.id), to: uint32(to), rep: o.rep})
		u.write(to, u.sbuf)
		time.AfterFunc(wait, func() {
			u.mu.Lock()
			defer u.mu.Unlock()
			if !u.closed && o.helloing {
				again()
			}
		})
		wait = min(2*wait, helloMost)
	}
	again()
}

// renew opens a new session with to, if the node has one.
func (u *udp) renew(to sim.NodeID) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if o := &u.out[to]; !u.closed && o.sess != 0 {
		o.sess, o.seq = 0, 0
		u.hello(to)
	}
}

// challenged takes a peer's challenge: session sess, for the node's
// nonce rep. False: not asked for (a challenge recorded and sent
// again, the answer to a hello recorded and sent again).
func (u *udp) challenged(from sim.NodeID, sess, rep uint64) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	o := &u.out[from]
	if u.closed || rep != o.rep || o.rep == 0 {
		return false
	}
	o.sess, o.seq, o.rep, o.helloing = sess, 0, nonce(), false
	u.sendIn(from, dgConfirm, nil)
	for _, f := range o.queue {
		u.sendIn(from, dgData, f)
	}
	o.queue = nil
	return true
}

func (u *udp) read() {
	defer close(u.done)
	n := u.n
	buf := make([]byte, min(n.max+1, 1<<16))
	for {
		k, src, err := u.conn.ReadFromUDPAddrPort(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		src = netip.AddrPortFrom(src.Addr().Unmap(), src.Port())
		if k > n.max {
			n.logf("dropped a datagram from %s: longer than the limit of %d bytes", src, n.max)
			n.stats.oversized.Add(1)
			continue
		}
		b, t, ok, short := openDatagram(u.rmac, buf[:k])
		switch {
		case !ok:
			n.logf("dropped a frame from %s: its MAC is not the cluster key's", src)
			n.stats.unauth.Add(1)
			continue
		case short:
			n.logf("dropped a datagram from %s: %v: no channel trailer", src, errMalformed)
			n.stats.malformed.Add(1)
			continue
		}
		if t.from == controlID {
			u.control(b, t, src)
			continue
		}
		from, ok := u.ids[src]
		if !ok || t.from != uint32(from) {
			n.logf("dropped a datagram from %s that says it is from node %d, whose address is not that", src, t.from)
			n.stats.strangers.Add(1)
			continue
		}
		if t.to != uint32(n.id) {
			n.logf("dropped a datagram from node %d for node %d: misdirected", from, t.to)
			n.stats.misdirected.Add(1)
			continue
		}
		if !u.take(from, b, t) {
			return
		}
	}
}

// take handles a datagram of peer from's, for this node; false once the
// node has stopped.
func (u *udp) take(from sim.NodeID, b []byte, t trailer) bool {
	n := u.n
	in := &u.in[from]
	switch t.kind {
	case dgHello:
		if t.rep != in.echo {
			// A new hello, most often from a peer started again, which
			// knows none of this node's sessions: what the node sends
			// it waits for a session of its own, rather than be lost
			// (a hello played again costs a handshake, no more).
			u.renew(from)
		}
		if t.rep != in.echo || in.pend == 0 {
			in.pend, in.echo = nonce(), t.rep
		}
		u.challenge(from, in)
		return true
	case dgChallenge:
		if !u.challenged(from, t.sess, t.rep) {
			n.logf("dropped a challenge from node %d it did not ask for: replayed", from)
			n.stats.replayed.Add(1)
		}
		return true
	case dgData, dgConfirm:
	default:
		n.logf("dropped a datagram from node %d: %v: kind %q", from, errMalformed, t.kind)
		n.stats.malformed.Add(1)
		return true
	}
	switch {
	case t.sess == in.cur && in.cur != 0:
	case t.sess == in.pend && in.pend != 0:
		in.cur, in.pend, in.win = in.pend, 0, replayWin{}
		n.stats.channels.Add(1)
	default:
		n.logf("dropped a datagram from node %d of a session that is not theirs now (an earlier one, or this node's or its earlier process's): replayed, or sent before a restart", from)
		n.stats.replayed.Add(1)
		// A live sender whose session this node lost (it started
		// again) goes on in a new one.
		if t.rep != in.echo || in.pend == 0 || time.Since(in.at) >= rechallenge {
			if t.rep != in.echo || in.pend == 0 {
				in.pend, in.echo = nonce(), t.rep
			}
			u.challenge(from, in)
		}
		return true
	}
	if !in.win.take(t.seq) {
		n.logf("dropped a datagram from node %d taken already, or older than the replay window (sequence number %d, the highest %d): replayed", from, t.seq, in.win.top)
		n.stats.replayed.Add(1)
		return true
	}
	if t.kind == dgConfirm {
		return true
	}
	f, err := decodeFrame(b)
	if err != nil {
		n.logf("dropped a datagram from node %d: %v", from, err)
		n.stats.malformed.Add(1)
		return true
	}
	if f.from != from {
		n.logf("dropped a datagram from node %d that says it is from node %d", from, f.from)
		n.stats.strangers.Add(1)
		return true
	}
	return n.post(event{kind: evMsg, peer: f.from, msg: f.msg, clock: f.clock, epoch: f.epoch, sent: int(f.seq)})
}

// challenge sends peer the challenge of in's pending session.
func (u *udp) challenge(peer sim.NodeID, in *udpIn) {
	in.at = time.Now()
	u.rbuf = sealDatagram(u.rbuf, u.rmac, nil, trailer{kind: dgChallenge, from: uint32(u.n.id), to: uint32(peer), sess: in.pend, rep: in.echo})
	u.write(peer, u.rbuf)
}

// control handles a datagram of the command line's: a hello, answered
// with a nonce, or a control frame under a nonce the node handed out
// and has not taken yet.
func (u *udp) control(b []byte, t trailer, src netip.AddrPort) {
	n := u.n
	if n.opts.Key == nil {
		n.logf("dropped a control frame from %s: the node has no cluster key to check it by", src)
		n.stats.strangers.Add(1)
		return
	}
	switch t.kind {
	case dgCtlHello:
		s := nonce()
		if len(u.ctl) == ctlNonces {
			u.ctl = u.ctl[1:]
		}
		u.ctl = append(u.ctl, s)
		u.rbuf = sealDatagram(u.rbuf, u.rmac, nil, trailer{kind: dgCtlChal, from: uint32(n.id), to: controlID, sess: s, rep: t.rep})
		if _, err := u.conn.WriteToUDPAddrPort(u.rbuf, src); err != nil {
			n.stats.lost.Add(1)
		}
		return
	case dgData:
	default:
		n.logf("dropped a control datagram from %s: %v: kind %q", src, errMalformed, t.kind)
		n.stats.malformed.Add(1)
		return
	}
	if t.to != uint32(n.id) {
		n.logf("dropped a control frame from %s for node %d: misdirected", src, t.to)
		n.stats.misdirected.Add(1)
		return
	}
	i := 0
	for i < len(u.ctl) && u.ctl[i] != t.sess {
		i++
	}
	if i == len(u.ctl) {
		n.logf("dropped a control frame from %s under a nonce the node did not hand out or took already: replayed", src)
		n.stats.replayed.Add(1)
		return
	}
	u.ctl = append(u.ctl[:i], u.ctl[i+1:]...)
	f, err := decodeFrame(b)
	if err != nil || f.from != controlID {
		n.logf("dropped a control datagram from %s: %v", src, err)
		n.stats.malformed.Add(1)
		return
	}
	n.control(f.msg, src.String())
}

func (u *udp) close() {
	u.mu.Lock()
	u.closed = true
	u.mu.Unlock()
	u.conn.Close()
	<-u.done
}
