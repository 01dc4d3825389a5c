package host

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/livecheck/livecheck/sim"
)

// The stream transport: one TCP connection per ordered pair of nodes, as
// the simulator's streams deliver in order per pair. A node dials a peer
// the first time it sends to it; the handshake (channel.go: a hello
// saying who dials whom, a challenge, then a frame with no message under
// the connection's MAC) binds the connection, and the peer accepts it
// only from that node's host. Each frame follows its length, 4 bytes
// big-endian.
//
// A peer the node has never had a connection with, that refuses one,
// has not started yet: the node dials it again until it listens, what it
// sends waiting (see dial). A connection that breaks without the nemesis (the peer's process
// died, a write failed, the peer closed it, or more frames are queued on
// it than it carries) makes the node suspect the peer: what was queued
// is lost, and so is what the node sends the peer from then on, but the
// node is not told yet. Most often the peer's process died, and the
// simulator's reset of a node (a crash and restart in one step) tells
// the node when the peer is back: so does the host. A peer started again
// holds every other node between two handlers before its Init (back,
// the restart's barrier); each node that had a connection with it, or
// suspects it, runs Error for it then, at the clock of the peer's Init,
// and the merged log has the Error steps and the Init as one Reset.
// A peer not back within Options.SuspectFor is told as a broken
// connection, once for the pair (the simulator has one connection a
// pair), which the merge cannot join to a step of the simulator.

type streamListener = *net.TCPListener

const (
	// queueFrames is the most frames waiting on one connection: a peer
	// that reads slower than the node sends, for that long, breaks it.
	queueFrames = 4096
	dialTimeout = 5 * time.Second
	// helloTimeout is how long an accepted connection may take to say
	// who it is.
	helloTimeout = 10 * time.Second
	// skipFactor: a frame longer than MaxMessage is skipped and counted,
	// unless it is longer than this many times the limit: the connection
	// is broken then, as reading it through would take too long.
	skipFactor = 16
)

type tcp struct {
	n     *Node
	ln    *net.TCPListener
	peers []netip.AddrPort

	mu     sync.Mutex
	closed bool
	out    []*outConn // by peer, the connection this node dialed; nil: none
	in     map[*net.TCPConn]bool
	wg     sync.WaitGroup
	// seq numbers connections and the nemesis's cuts (nemesis.go), in
	// one count: an event from a connection made before the last cut of
	// its peer's pair (cut[peer]) is from a connection the cut broke,
	// and the node drops it.
	seq uint64
	cut []uint64
	// cutAt is, by peer, the Lamport clock of the nemesis's last cut of
	// the pair: the clock of the Error steps it tells, one past every
	// clock of the nodes it held. Whatever either end sent before it,
	// and every connection either end dialed before it, carries a lower
	// clock, so an event with a lower clock is from before the cut,
	// whichever connection it came on (one accepted after the cut, from
	// the listen queue, included).
	cutAt []uint64
	// owed, by peer: a connection of the pair broke without the
	// nemesis and the node is not told yet (suspect); owedGen counts
	// the suspicions, for their timers.
	owed    []bool
	owedGen []uint64
	// inFrom, by peer: the peer has sent the node a message since their
	// pair was last cut; sent: the node has sent the peer one. Either
	// way the simulator has a connection for the pair (a snapshot's
	// marker, which is no message, makes none).
	inFrom, sent []bool
	// reached, by peer: this node has had a connection with it, dialed
	// or accepted (see dial).
	reached []bool
}

// An outConn is a connection this node dialed, with its queue.
type outConn struct {
	to  sim.NodeID
	seq uint64 // see tcp.seq
	// clock is the node's clock when it made the connection (that of
	// the handler whose send did): the hello carries it.
	clock uint64
	q     chan []byte
	conn  *net.TCPConn // set once dialed
	once  sync.Once
}

func startTCP(n *Node) (transport, error) {
	peers, err := resolve("tcp", n.opts.Peers)
	if err != nil {
		return nil, err
	}
	t := &tcp{n: n, peers: peers, out: make([]*outConn, len(peers)), in: map[*net.TCPConn]bool{}, ln: n.opts.stream,
		cut: make([]uint64, len(peers)), cutAt: make([]uint64, len(peers)),
		owed: make([]bool, len(peers)), owedGen: make([]uint64, len(peers)), inFrom: make([]bool, len(peers)), sent: make([]bool, len(peers)), reached: make([]bool, len(peers))}
	if t.ln == nil {
		if t.ln, err = net.ListenTCP("tcp", net.TCPAddrFromAddrPort(peers[n.id])); err != nil {
			return nil, fmt.Errorf("node %d cannot listen on %s: %v", n.id, peers[n.id], err)
		}
	}
	t.wg.Add(1)
	go t.accept()
	return t, nil
}

func (t *tcp) send(to sim.NodeID, frame []byte) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	if t.owed[to] {
		t.mu.Unlock()
		t.n.stats.lost.Add(1) // the peer is suspect: see suspect
		return
	}
	oc := t.out[to]
	if oc == nil {
		t.seq++
		oc = &outConn{to: to, q: make(chan []byte, queueFrames), seq: t.seq, clock: t.n.clockA.Load()}
		t.out[to] = oc
		t.wg.Add(1)
		go t.write(oc)
	}
	select {
	case oc.q <- frame:
		t.mu.Unlock()
	default:
		t.mu.Unlock()
		t.n.logf("more than %d frames wait on the connection to node %d: it breaks", queueFrames, to)
		t.n.stats.lost.Add(1)
		t.breakOut(oc)
	}
}

// write dials oc's peer and writes what is queued for it, until the
// connection breaks or the node stops.
func (t *tcp) write(oc *outConn) {
	defer t.wg.Done()
	n := t.n
	c, err := t.dial(oc)
	if err != nil {
		n.logf("cannot connect to node %d: %v", oc.to, err)
		t.broken(oc)
		return
	}
	conn := c.(*net.TCPConn)
	t.mu.Lock()
	oc.conn = conn
	closed := t.closed || t.out[oc.to] != oc
	t.mu.Unlock()
	if closed {
		conn.Close()
		t.broken(oc)
		return
	}
	var wr io.Writer = conn
	if tap := n.opts.tap; tap != nil {
		wr = tapWriter{conn, func(b []byte) { tap(oc.to, b) }}
	}
	w := bufio.NewWriterSize(wr, 64<<10)
	r := bufio.NewReader(conn)
	conn.SetDeadline(time.Now().Add(helloTimeout))
	l, err := dialLink(r, w, n.opts.Key, n.id, oc.to, oc.clock)
	if err != nil {
		n.logf("cannot connect to node %d: the handshake failed: %v", oc.to, err)
		conn.Close()
		t.broken(oc)
		return
	}
	conn.SetDeadline(time.Time{})
	// The peer writes nothing more on this connection: a read that
	// returns says it closed or broke it.
	go func() {
		io.Copy(io.Discard, r)
		t.breakOut(oc)
	}()
	var sealed []byte
	for err == nil {
		f, ok := <-oc.q
		if !ok {
			break // broken by breakOut, or the node stops
		}
		sealed = l.seal(sealed, f)
		err = writeFrame(w, sealed)
		if err == nil && len(oc.q) == 0 {
			err = w.Flush() // nothing more queued: send what is buffered
		}
	}
	conn.Close()
	t.broken(oc)
}

// dial dials oc's peer. A peer this node has never had a connection
// with, that refuses it, has not started yet: a cluster starts its nodes
// one after another, where the simulator starts them at once and holds
// what is sent to a node in flight until it runs. So the node dials it
// again, what it sends waiting in the queue, until it listens, the node
// stops, or the connection is broken from outside (the peer's restart,
// back.go, which tells the node as the simulator's reset does). A peer
// reached before, that refuses, died: the node suspects it (broken).
func (t *tcp) dial(oc *outConn) (net.Conn, error) {
	d := net.Dialer{Timeout: dialTimeout}
	wait := 20 * time.Millisecond
	for {
		c, err := d.Dial("tcp", t.peers[oc.to].String())
		t.mu.Lock()
		if err == nil {
			t.reached[oc.to] = true
			t.mu.Unlock()
			return c, nil
		}
		again := !t.reached[oc.to] && !t.closed && t.out[oc.to] == oc && errors.Is(err, syscall.ECONNREFUSED)
		t.mu.Unlock()
		if !again {
			return nil, err
		}
		time.Sleep(wait)
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// writeFrame writes f after its length.
func writeFrame(w *bufio.Writer, f []byte) error {
	var l [4]byte
	binary.BigEndian.PutUint32(l[:], uint32(len(f)))
	if _, err := w.Write(l[:]); err != nil {
		return err
	}
	_, err := w.Write(f)
	return err
}

// breakOut breaks oc from outside its writer.
func (t *tcp) breakOut(oc *outConn) {
	t.mu.Lock()
	if t.out[oc.to] == oc {
		t.out[oc.to] = nil
	}
	conn := oc.conn
	t.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
	oc.once.Do(func() { close(oc.q) })
}

// broken ends oc: the next send dials again; what was queued is lost;
// the node is told, unless it is stopping.
func (t *tcp) broken(oc *outConn) {
	t.mu.Lock()
	if t.out[oc.to] == oc {
		t.out[oc.to] = nil
	}
	closed := t.closed
	t.mu.Unlock()
	oc.once.Do(func() { close(oc.q) })
	for range oc.q {
		t.n.stats.lost.Add(1)
	}
	if !closed {
		t.suspect(oc.to, oc.seq, oc.clock)
	}
}

// suspect notes that connection seq with peer broke without the nemesis
// (clock: its dialer's clock when it dialed): unless the break is stale
// or the peer is suspect already, the node sends the peer nothing more
// and waits for it to come back (back) for Options.SuspectFor, then is
// told (Error) if it has not.
func (t *tcp) suspect(peer sim.NodeID, seq, clock uint64) {
	if t.stale(peer, seq, clock) {
		return
	}
	t.mu.Lock()
	if t.closed || t.owed[peer] {
		t.mu.Unlock()
		return
	}
	t.owed[peer] = true
	t.owedGen[peer]++
	gen := t.owedGen[peer]
	t.mu.Unlock()
	t.n.logf("its connection with node %d broke: node %d is suspect for %v", peer, peer, t.n.suspectFor())
	time.AfterFunc(t.n.suspectFor(), func() {
		t.mu.Lock()
		tell := !t.closed && t.owed[peer] && t.owedGen[peer] == gen
		if tell {
			t.owed[peer], t.inFrom[peer], t.sent[peer] = false, false, false
		}
		t.mu.Unlock()
		if tell {
			t.n.logf("node %d is not back after %v: its node is told its connection broke", peer, t.n.suspectFor())
			t.n.post(event{kind: evError, peer: peer, clock: clock})
		}
	})
}

func (t *tcp) accept() {
	defer t.wg.Done()
	for {
		c, err := t.ln.AcceptTCP()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			c.Close()
			return
		}
		t.in[c] = true
		t.seq++
		seq := t.seq
		t.wg.Add(1)
		t.mu.Unlock()
		go t.read(c, seq)
	}
}

// read reads what a peer sends on a connection it dialed.
func (t *tcp) read(c *net.TCPConn, seq uint64) {
	defer t.wg.Done()
	n := t.n
	defer func() {
		c.Close()
		t.mu.Lock()
		delete(t.in, c)
		t.mu.Unlock()
	}()
	r := bufio.NewReaderSize(c, 64<<10)
	src := c.RemoteAddr().(*net.TCPAddr).AddrPort()
	c.SetDeadline(time.Now().Add(helloTimeout))
	l, h, ok := t.acceptLink(c, r, src)
	if !ok {
		return
	}
	from, dialed := h.from, h.clock
	control := from == controlID // the command line: the MAC is its credential
	if !control && int(from) < len(t.reached) {
		t.mu.Lock()
		t.reached[from] = true
		t.mu.Unlock()
	}
	c.SetDeadline(time.Time{})
	for {
		f, err := t.readFrame(r, src)
		if errors.Is(err, errSkipped) {
			l.skip()
			continue
		}
		if err != nil {
			break
		}
		f, ok := l.open(f)
		if !ok {
			// Only what is written into the connection itself can be
			// out of its sequence: it no longer says what the peer sent.
			n.logf("dropped a frame on node %d's connection: its MAC is not the connection's: the connection breaks", from)
			n.stats.unauth.Add(1)
			break
		}
		fr, err := decodeFrame(f)
		if err != nil {
			n.logf("dropped a frame from node %d: %v", from, err)
			n.stats.malformed.Add(1)
			continue
		}
		if control && fr.from == controlID {
			if ctl, ok := fr.msg.(Control); ok && ctl.Op == "hold" && n.opts.Key != nil {
				t.holdForRemote(sim.NodeID(ctl.Peer), c, r, l)
				return
			}
			n.control(fr.msg, src.String())
			continue
		}
		if fr.from != from {
			n.logf("dropped a frame on node %d's connection that says it is from node %d", from, fr.from)
			n.stats.strangers.Add(1)
			continue
		}
		if ctl, ok := fr.msg.(Control); ok && !control {
			if ctl.Op == "back" {
				t.backPeer(from, c, r, l)
			} else {
				n.logf("dropped a connection from node %d that asks for %s", from, short(ctl))
				n.stats.malformed.Add(1)
			}
			return
		}
		if !control && !isMarker(fr.msg) {
			t.mu.Lock()
			t.inFrom[from] = true
			t.mu.Unlock()
		}
		if !n.post(event{kind: evMsg, peer: from, msg: fr.msg, clock: fr.clock, epoch: fr.epoch, sent: int(fr.seq), conn: seq}) {
			return
		}
	}
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if !closed && !control {
		t.suspect(from, seq, dialed)
	}
}

var errSkipped = errors.New("frame skipped")

// acceptLink makes the handshake of a connection accepted from src: its
// hello (under the cluster key's MAC) says who dials and whom, the node
// answers with a challenge, and the dialer's first frame under the
// connection's MAC, with no message, gives its clock. What fails is
// logged and counted; a hello or a stream recorded and played again
// fails at that first frame (Replayed).
func (t *tcp) acceptLink(c *net.TCPConn, r *bufio.Reader, src netip.AddrPort) (*link, frame, bool) {
	n := t.n
	f, err := t.readFrame(r, src)
	if err != nil {
		return nil, frame{}, false
	}
	f, ok := n.unseal(f, src.String())
	if !ok {
		return nil, frame{}, false
	}
	h, err := decodeFrame(f)
	hello, isHello := h.msg.(Control)
	if err != nil || !isHello || hello.Op != "hello" {
		n.logf("dropped a connection from %s: its first frame does not say who it is", src)
		n.stats.malformed.Add(1)
		return nil, frame{}, false
	}
	control := h.from == controlID
	if !control && (int(h.from) >= len(t.peers) || t.peers[h.from].Addr() != src.Addr().Unmap()) {
		n.logf("dropped a connection from %s that says it is node %d, whose host is not that", src, h.from)
		n.stats.strangers.Add(1)
		return nil, frame{}, false
	}
	if (!control || hello.Peer >= 0) && sim.NodeID(hello.Peer) != n.id {
		n.logf("dropped a connection from %s for node %d: misdirected", src, hello.Peer)
		n.stats.misdirected.Add(1)
		return nil, frame{}, false
	}
	nL := nonce()
	w := bufio.NewWriter(c)
	if err := writeCtlFrame(w, n.opts.Key, n.id, 0, &Control{Op: "challenge", Nonce: nL, Echo: hello.Nonce}); err != nil {
		return nil, frame{}, false
	}
	l := newLink(n.opts.Key, h.from, n.id, hello.Nonce, nL, false)
	f, err = t.readFrame(r, src)
	var first frame
	if err == nil {
		if f, ok = l.open(f); ok {
			first, err = decodeFrame(f)
		}
	}
	switch {
	case err == nil && !ok:
		n.logf("dropped a connection from %s: its first frame is not of the connection (a recorded stream played again?): replayed", src)
		n.stats.replayed.Add(1)
		return nil, frame{}, false
	case err != nil && !errors.Is(err, errMalformed):
		n.logf("dropped a connection from %s: it did not answer the handshake (%v): a hello played again?", src, err)
		n.stats.replayed.Add(1)
		return nil, frame{}, false
	case err != nil || first.from != h.from || first.msg != nil:
		n.logf("dropped a connection from %s: its first frame does not say who it is", src)
		n.stats.malformed.Add(1)
		return nil, frame{}, false
	}
	n.stats.channels.Add(1)
	return l, first, true
}

// dialLink makes the handshake of a connection this end dialed, as from
// (a node, or controlID) to node to (-1: the node that listens, for the
// command line), at clock: the frames after it go through the link it
// returns.
func dialLink(r *bufio.Reader, w *bufio.Writer, key []byte, from, to sim.NodeID, clock uint64) (*link, error) {
	nD := nonce()
	if err := writeCtlFrame(w, key, from, clock, &Control{Op: "hello", Peer: int(to), Nonce: nD}); err != nil {
		return nil, err
	}
	fr, c, err := readCtlFrame(r, key)
	if err != nil {
		return nil, err
	}
	if c.Op != "challenge" || c.Echo != nD || to >= 0 && fr.from != to {
		return nil, errors.New("not the challenge of its hello")
	}
	l := newLink(key, from, fr.from, nD, c.Nonce, true)
	var b bytes.Buffer
	if err := encodeFrame(&b, frame{from: from, clock: clock}); err != nil {
		return nil, err
	}
	if err := writeFrame(w, l.seal(nil, b.Bytes())); err != nil {
		return nil, err
	}
	return l, w.Flush()
}

// writeLinkFrame writes a frame from l's end at clock, holding ctl,
// through l, and flushes it.
func writeLinkFrame(w *bufio.Writer, l *link, clock uint64, ctl Control) error {
	var b bytes.Buffer
	if err := encodeFrame(&b, frame{from: l.from, clock: clock, msg: ctl}); err != nil {
		return err
	}
	if err := writeFrame(w, l.seal(nil, b.Bytes())); err != nil {
		return err
	}
	return w.Flush()
}

// readLinkFrame reads a frame holding a Control through l.
func readLinkFrame(r *bufio.Reader, l *link) (frame, Control, error) {
	f, err := readRawFrame(r)
	if err != nil {
		return frame{}, Control{}, err
	}
	body, ok := l.open(f)
	if !ok {
		return frame{}, Control{}, errNotCtl
	}
	fr, err := decodeFrame(body)
	if err != nil {
		return frame{}, Control{}, err
	}
	c, ok := fr.msg.(Control)
	if !ok || fr.from != l.to {
		return frame{}, Control{}, errNotCtl
	}
	return fr, c, nil
}

// tapWriter shows what is written to w to a test's tap first.
type tapWriter struct {
	w   io.Writer
	tap func([]byte)
}

func (t tapWriter) Write(b []byte) (int, error) {
	t.tap(bytes.Clone(b))
	return t.w.Write(b)
}

// readFrame reads one frame; one over the limit is skipped (errSkipped)
// and counted, or breaks the connection when far over.
func (t *tcp) readFrame(r *bufio.Reader, src netip.AddrPort) ([]byte, error) {
	var l [4]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return nil, err
	}
	size := int64(binary.BigEndian.Uint32(l[:]))
	if size > int64(t.n.max) {
		t.n.logf("dropped a frame of %d bytes from %s: more than the limit of %d", size, src, t.n.max)
		t.n.stats.oversized.Add(1)
		if size > skipFactor*int64(t.n.max) {
			return nil, fmt.Errorf("frame of %d bytes", size)
		}
		if _, err := io.CopyN(io.Discard, r, size); err != nil {
			return nil, err
		}
		return nil, errSkipped
	}
	f := make([]byte, size)
	_, err := io.ReadFull(r, f)
	return f, err
}

// connected says whether the node has dialed peer, or is connected to.
func (t *tcp) connected(peer sim.NodeID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.hasConn(peer)
}

// hasConn says, under t.mu, whether the simulator has a connection for
// the pair: a message went either way since it was last cut, or the
// node suspects the peer (what it sent was lost with the connection).
func (t *tcp) hasConn(peer sim.NodeID) bool {
	return t.sent[peer] || t.inFrom[peer] || t.owed[peer]
}

// noteSent notes that the node sent peer a message.
func (t *tcp) noteSent(peer sim.NodeID) {
	t.mu.Lock()
	t.sent[peer] = true
	t.mu.Unlock()
}

// cutPeer breaks the node's connection to peer for the nemesis: what
// was queued on it is lost, and every event from a connection of the
// pair made before now is dropped (stale), the Error its break would
// tell included: the nemesis tells both ends itself, in one step.
func (t *tcp) cutPeer(peer sim.NodeID, clock uint64) {
	t.mu.Lock()
	t.seq++
	t.cut[peer] = t.seq
	t.cutAt[peer] = clock
	t.owed[peer], t.inFrom[peer], t.sent[peer] = false, false, false
	oc := t.out[peer]
	t.mu.Unlock()
	if oc != nil {
		t.breakOut(oc)
	}
}

// stale says whether an event from connection seq with peer, with clock
// (a message's sender's clock; for an Error, the clock of the
// connection's dialer when it dialed) is from before a cut.
func (t *tcp) stale(peer sim.NodeID, seq, clock uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return int(peer) < len(t.cut) && (seq < t.cut[peer] || clock < t.cutAt[peer])
}

func (t *tcp) close() {
	t.mu.Lock()
	t.closed = true
	var conns []*net.TCPConn
	for c := range t.in {
		conns = append(conns, c)
	}
	var outs []*outConn
	for _, oc := range t.out {
		if oc != nil {
			outs = append(outs, oc)
		}
	}
	t.mu.Unlock()
	t.ln.Close()
	for _, c := range conns {
		c.Close()
	}
	for _, oc := range outs {
		t.breakOut(oc)
	}
	t.wg.Wait()
}
