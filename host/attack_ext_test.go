package host_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/livecheck/livecheck/examples/lock/lock"
	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/randtree"
	"github.com/livecheck/livecheck/systems/ring"
)

// The attacks on the channels (channel.go): an attacker on the network
// records what the nodes send and sends it again, raw, to its receiver
// or to another node, later, on a new connection. None of it is taken:
// each refusal is counted, exactly, and the run's logs merge and replay
// as a path of the simulator with no property broken.

var attackKey = []byte("the attack tests' cluster key, 32")

// A sent is a datagram or a connection's write, as the tap saw it.
type sent struct {
	from, to sim.NodeID
	raw      []byte
}

// recorder is the attacker's recording of the wire.
type recorder struct {
	mu    sync.Mutex
	dgram []sent
	// conns, by pair, each connection the first dialed to the second:
	// its writes, in order, the hello first.
	conns map[[2]sim.NodeID][][][]byte
}

func (r *recorder) tap(from, to sim.NodeID, raw []byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if host.IsHello(raw, true) {
		if r.conns == nil {
			r.conns = map[[2]sim.NodeID][][][]byte{}
		}
		p := [2]sim.NodeID{from, to}
		r.conns[p] = append(r.conns[p], nil)
	}
	if p := [2]sim.NodeID{from, to}; len(r.conns[p]) > 0 {
		cs := r.conns[p]
		cs[len(cs)-1] = append(cs[len(cs)-1], bytes.Clone(raw))
		return false
	}
	r.dgram = append(r.dgram, sent{from, to, bytes.Clone(raw)})
	return false
}

func (r *recorder) datagrams() []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sent(nil), r.dgram...)
}

// counts are the channel's refusals, by node.
type counts struct{ replayed, misdirected, unauth, strangers []int64 }

func countsOf(c *host.Cluster) counts {
	var k counts
	for _, n := range c.Nodes {
		s := n.Stats()
		k.replayed = append(k.replayed, s.Replayed)
		k.misdirected = append(k.misdirected, s.Misdirected)
		k.unauth = append(k.unauth, s.Unauthenticated)
		k.strangers = append(k.strangers, s.Strangers)
	}
	return k
}

func sum(v []int64) (s int64) {
	for _, x := range v {
		s += x
	}
	return s
}

// replayWhole merges and replays the run logs in dir on sys: every step
// placed, no fingerprint differs, no property broken.
func replayWhole(t *testing.T, dir string, sys *protocol.System) {
	t.Helper()
	rr, err := replayDir(t, dir, sys)
	if err != nil || rr.Divergence != nil || rr.Violation != "" || len(rr.LeftOut) != 0 {
		t.Fatalf("the run's replay: %v, divergence %v, violation %q (%s), left out %q", err, rr.Divergence, rr.Violation, rr.Message, rr.LeftOut)
	}
}

// The correct lock over UDP, attacked: each grant the server sends is
// sent again at once from the server's address to the other client
// (the attack that made two clients hold the lock); once every client
// has been served, every datagram recorded is sent again to its
// receiver, then to the third node. Each is refused: the redirected
// ones counted Misdirected by the node they reach, the replayed ones
// Replayed by the node they reach or, for a hello, by its sender, which
// did not ask for the challenge the hello brings; the run replays with
// one-holder intact.
func TestAttackLockDatagrams(t *testing.T) {
	dir := t.TempDir()
	var rec recorder
	grants := make(chan sent, 64)
	co := host.ClusterOptions{Key: attackKey, Data: dir, LogDir: dir, Seed: 1}
	host.Tap(&co, func(from, to sim.NodeID, raw []byte) bool {
		rec.tap(from, to, raw)
		if d, ok := host.ReadDatagram(raw, true); ok && d.Kind == "data" && fmt.Sprintf("%T", d.Msg) == "lock.grant" {
			grants <- sent{from, to, bytes.Clone(raw)}
		}
		return false
	})
	c := start(t, &lock.System, protocol.Config{Nodes: 3}, co)
	base := countsOf(c)
	redirected := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for g := range grants {
			other := 3 - g.to // the other client
			if err := host.Inject(c.Nodes[0], c.Peers()[other], g.raw); err != nil {
				t.Error(err)
			}
			redirected++
		}
	}()
	live(t, c)
	waitFor(t, "both grants sent", func() bool { return c.Nodes[0].State().(*lock.Server).Lease >= 2 })
	close(grants)
	<-done
	waitFor(t, "the redirected grants refused", func() bool {
		k := countsOf(c)
		return k.misdirected[1]+k.misdirected[2]-base.misdirected[1]-base.misdirected[2] == int64(redirected)
	})

	// Every datagram again, to its receiver, then to the third node.
	before := countsOf(c)
	d := rec.datagrams()
	for _, s := range d {
		if err := host.Inject(c.Nodes[s.from], c.Peers()[s.to], s.raw); err != nil {
			t.Fatal(err)
		}
	}
	// Each is refused where the comment above says; a datagram of a
	// session the receiver has left may also draw a challenge (to a
	// sender whose session it lost, channel.go), which the sender
	// refuses too: never more refusals than that.
	want := make([]int64, 3)
	for _, s := range d {
		g, _ := host.ReadDatagram(s.raw, true)
		if g.Kind == "hello" {
			want[s.from]++
		} else {
			want[s.to]++
		}
	}
	refused := func(k counts) bool {
		for i := range want {
			if k.replayed[i]-before.replayed[i] < want[i] {
				return false
			}
		}
		return true
	}
	waitFor(t, "every datagram sent again refused as replayed", func() bool { return refused(countsOf(c)) })
	challenges := func() (n int64) {
		for _, s := range rec.datagrams()[len(d):] {
			if g, _ := host.ReadDatagram(s.raw, true); g.Kind == "challenge" {
				n++
			}
		}
		return n
	}
	for _, s := range d {
		third := 3 - s.from - s.to
		if err := host.Inject(c.Nodes[s.from], c.Peers()[third], s.raw); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "every datagram sent to another node refused as misdirected", func() bool {
		return sum(countsOf(c).misdirected)-sum(before.misdirected) == int64(len(d))
	})
	after := countsOf(c)
	if extra := sum(after.replayed) - sum(before.replayed) - int64(len(d)); sum(after.unauth) != sum(base.unauth) || sum(after.strangers) != sum(base.strangers) || !refused(after) || extra > challenges() {
		t.Errorf("refusals %+v, from %+v: other counts moved (%d replayed beyond the %d sent again, %d challenges sent since)", after, before, extra, len(d), challenges())
	}
	t.Logf("%d grants redirected, %d datagrams replayed and redirected", redirected, len(d))
	live(t, c)
	c.Stop()
	replayWhole(t, dir, &lock.System)
}

// A client of the lock killed and started again is a new incarnation:
// the server takes its new session, and refuses every datagram of its
// earlier process's, sent again from its address.
func TestAttackDatagramRestart(t *testing.T) {
	dir := t.TempDir()
	var rec recorder
	co := host.ClusterOptions{Key: attackKey, Data: dir, LogDir: dir, Seed: 1}
	host.Tap(&co, func(from, to sim.NodeID, raw []byte) bool { return rec.tap(from, to, raw) })
	c := start(t, &lock.System, protocol.Config{Nodes: 3}, co)
	live(t, c)
	var old []sent
	for _, s := range rec.datagrams() {
		if s.from == 1 && s.to == 0 {
			old = append(old, s)
		}
	}
	channels := c.Nodes[0].Stats().Channels
	if err := c.Restart(1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the server takes the new client's session", func() bool { return c.Nodes[0].Stats().Channels > channels })
	before := countsOf(c)
	// The server refuses all but the hellos; a hello's challenge, the
	// client.
	refused := 0
	for _, s := range old {
		if d, _ := host.ReadDatagram(s.raw, true); d.Kind != "hello" {
			refused++
		}
		if err := host.Inject(c.Nodes[1], c.Peers()[0], s.raw); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the earlier process's datagrams refused", func() bool {
		return c.Nodes[0].Stats().Replayed-before.replayed[0] == int64(refused)
	})
	if refused == 0 {
		t.Fatal("no datagram of the client's recorded")
	}
	live(t, c)
	c.Stop()
	replayWhole(t, dir, &lock.System)
}

// A datagram held back by the network and delivered late is taken once
// within the replay window, and refused older than it. Node 0 pings
// node 1 every tick; the attacker swallows all it sends after its
// first few, and delivers what it chooses.
func TestAttackReorderWindow(t *testing.T) {
	var mu sync.Mutex
	var held []host.Dgram
	var raws [][]byte
	co := host.ClusterOptions{Key: attackKey}
	host.Tap(&co, func(from, to sim.NodeID, raw []byte) bool {
		d, ok := host.ReadDatagram(raw, true)
		if !ok || from != 0 || to != 1 || d.Kind != "data" || d.Seq <= 5 {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		held, raws = append(held, d), append(raws, bytes.Clone(raw))
		return true
	})
	c := start(t, &pingers, protocol.Config{Nodes: 3}, co)
	n := c.Nodes[1]
	W := uint64(host.ReplayWindow)
	var first uint64
	waitFor(t, "node 0 sends a window's worth and more", func() bool {
		mu.Lock()
		defer mu.Unlock()
		if len(held) > 0 {
			first = held[0].Seq
		}
		return len(held) > 0 && held[len(held)-1].Seq >= first+W+10
	})
	mu.Lock()
	bySeq := map[uint64][]byte{}
	for i, d := range held {
		bySeq[d.Seq] = raws[i]
	}
	mu.Unlock()
	inject := func(seq uint64) {
		t.Helper()
		if err := host.Inject(c.Nodes[0], c.Peers()[1], bySeq[seq]); err != nil {
			t.Fatal(err)
		}
	}
	r, p := n.Stats().Received, n.Stats().Replayed
	inject(first + W + 5) // the newest: taken
	waitFor(t, "the newest taken", func() bool { return n.Stats().Received == r+1 })
	inject(first) // W+5 older than the newest: refused
	inject(first + W + 3)
	inject(first + W + 3) // within the window, taken once
	inject(first + W + 4)
	waitFor(t, "one within the window taken once, the one older than the window refused", func() bool {
		s := n.Stats()
		return s.Received == r+3 && s.Replayed == p+2
	})
}

// The ring and RandTree over TCP, attacked once formed: a connection's
// recorded stream played on a new connection to its receiver, to
// another node and to its sender, its hello alone to each. Every one is
// refused at the handshake, counted exactly; no node suspects a peer
// for it, and the run replays whole.
func TestAttackStreams(t *testing.T) {
	for _, tc := range []struct {
		sys *protocol.System
		cfg protocol.Config
	}{
		{&ring.System, protocol.Config{Nodes: 3}},
		{&randtree.System, protocol.Config{Nodes: 3, Params: map[string]string{"peers": "all"}}},
	} {
		t.Run(tc.sys.Name, func(t *testing.T) { testAttackStreams(t, tc.sys, tc.cfg) })
	}
}

func testAttackStreams(t *testing.T, sys *protocol.System, cfg protocol.Config) {
	dir := t.TempDir()
	var rec recorder
	log := newLog(t)
	co := host.ClusterOptions{Key: attackKey, LogDir: dir, Seed: 1, Log: log}
	host.Tap(&co, rec.tap)
	c := start(t, sys, cfg, co)
	live(t, c)
	var pair [2]sim.NodeID
	var stream [][]byte
	rec.mu.Lock()
	for p, cs := range rec.conns {
		if len(cs[0]) >= 3 { // hello, the first frame, a message
			pair, stream = p, cs[0]
			break
		}
	}
	rec.mu.Unlock()
	if stream == nil {
		t.Fatal("no connection with a message recorded")
	}
	from, to := pair[0], pair[1]
	other := 3 - from - to
	base := countsOf(c)
	want := countsOf(c)
	all := bytes.Join(stream, nil)
	for _, a := range []struct {
		what   string
		target sim.NodeID
		raw    []byte
		count  *[]int64
	}{
		{"the stream to its receiver", to, all, &want.replayed},
		{"the stream to another node", other, all, &want.misdirected},
		{"the stream to its sender", from, all, &want.misdirected},
		{"the hello to its receiver", to, stream[0], &want.replayed},
		{"the hello to another node", other, stream[0], &want.misdirected},
	} {
		(*a.count)[a.target]++
		playStream(t, c.Peers()[a.target], a.raw)
		waitFor(t, a.what+" refused", func() bool {
			k := countsOf(c)
			return fmt.Sprint(k.replayed, k.misdirected) == fmt.Sprint(want.replayed, want.misdirected)
		})
	}
	live(t, c)
	k := countsOf(c)
	if fmt.Sprint(k.unauth, k.strangers) != fmt.Sprint(base.unauth, base.strangers) {
		t.Errorf("unauthenticated %v, strangers %v, from %v, %v", k.unauth, k.strangers, base.unauth, base.strangers)
	}
	// A node suspects a peer right after a connection from it ends (and
	// every node does, at Stop, of the nodes stopped before it).
	if strings.Contains(log.String(), "is suspect") {
		t.Error("a node suspected a peer")
	}
	c.Stop()
	for i, n := range c.Nodes {
		if b := n.Stats().Broken; b != 0 {
			t.Errorf("node %d was told of %d broken connections", i, b)
		}
	}
	replayWhole(t, dir, sys)
}

// playStream sends raw on a new connection to addr, as the attacker
// does, and reads what comes back until the node closes it (a hello
// alone: until its challenge, then closes it itself).
func playStream(t *testing.T, addr string, raw []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(deadline))
	if _, err := conn.Write(raw); err != nil {
		t.Fatal(err)
	}
	if host.IsHello(raw, true) {
		// A hello alone: the challenge, if any, then close.
		bufio.NewReader(conn).Peek(1)
		return
	}
	io.Copy(io.Discard, conn)
}

// A node of the ring restarted (a new incarnation) forms the ring again;
// the stream its earlier process sent, played again, is refused.
func TestAttackStreamRestart(t *testing.T) {
	dir := t.TempDir()
	var rec recorder
	co := host.ClusterOptions{Key: attackKey, LogDir: dir, Data: dir, Seed: 1}
	host.Tap(&co, rec.tap)
	c := start(t, &ring.System, protocol.Config{Nodes: 3}, co)
	live(t, c)
	var pair [2]sim.NodeID
	var stream [][]byte
	rec.mu.Lock()
	for p, cs := range rec.conns {
		if len(cs[0]) >= 3 {
			pair, stream = p, cs[0]
			break
		}
	}
	rec.mu.Unlock()
	if stream == nil {
		t.Fatal("no connection with a message recorded")
	}
	if err := c.Apply(host.Fault{Kind: "restart", Node: pair[0]}); err != nil {
		t.Fatal(err)
	}
	live(t, c)
	before := c.Nodes[pair[1]].Stats().Replayed
	playStream(t, c.Peers()[pair[1]], bytes.Join(stream, nil))
	waitFor(t, "the earlier process's stream refused", func() bool { return c.Nodes[pair[1]].Stats().Replayed == before+1 })
	live(t, c)
	c.Stop()
	replayWhole(t, dir, &ring.System)
}

// Control frames from the command line, recorded on their way to the
// node (through a proxy) and sent again, 20 times to the node and once
// to another: the node did what it was asked once, and refused each
// copy (Replayed); the other refused it too (Misdirected over UDP,
// where the frame names its node; Replayed over TCP, where the
// connection's handshake is the node's own).
func TestAttackControl(t *testing.T) {
	for _, tc := range []struct {
		sys    *protocol.System
		stream bool
		asked  string
	}{
		{&lock.System, false, "asks for the nemesis's"},
		{&ring.System, true, "asks for the next driver call"},
	} {
		t.Run(tc.sys.Name, func(t *testing.T) {
			log := newLog(t)
			c := start(t, tc.sys, protocol.Config{Nodes: 3}, host.ClusterOptions{Key: attackKey, Seed: 1, Log: log})
			live(t, c)
			target, other := sim.NodeID(2), sim.NodeID(1)
			base := countsOf(c)
			var recorded []byte
			if tc.stream {
				addr, rec := tcpProxy(t, c.Peers()[target])
				if err := host.SendControl(addr, true, attackKey, "next-call"); err != nil {
					t.Fatal(err)
				}
				recorded = rec()
			} else {
				addr, rec := udpProxy(t, c.Peers()[target])
				if err := host.SendFault(addr, attackKey, target, 3, host.Fault{Kind: "duplicate", Node: target, Peer: 0, Count: 1}); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the proxy passes the control frame on", func() bool {
					for _, raw := range rec() {
						if d, ok := host.ReadDatagram(raw, true); ok && d.Kind == "data" {
							recorded = raw // after the hello, the control frame
						}
					}
					return recorded != nil
				})
			}
			waitFor(t, "the node does what it is asked", func() bool { return strings.Count(log.String(), tc.asked) == 1 })
			want := countsOf(c)
			for range 20 {
				want.replayed[target]++
				if tc.stream {
					playStream(t, c.Peers()[target], recorded)
				} else {
					sendDatagram(t, c.Peers()[target], recorded)
				}
			}
			if tc.stream {
				want.replayed[other]++
				playStream(t, c.Peers()[other], recorded)
			} else {
				want.misdirected[other]++
				sendDatagram(t, c.Peers()[other], recorded)
			}
			waitFor(t, "every copy refused", func() bool {
				k := countsOf(c)
				return fmt.Sprint(k.replayed, k.misdirected) == fmt.Sprint(want.replayed, want.misdirected)
			})
			if k := strings.Count(log.String(), tc.asked); k != 1 {
				t.Errorf("the node did what it was asked %d times, want once", k)
			}
			if k := countsOf(c); fmt.Sprint(k.unauth) != fmt.Sprint(base.unauth) {
				t.Errorf("unauthenticated %v, from %v", k.unauth, base.unauth)
			}
		})
	}
}

// sendDatagram sends raw to addr from a socket of its own.
func sendDatagram(t *testing.T, addr string, raw []byte) {
	t.Helper()
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(raw); err != nil {
		t.Fatal(err)
	}
}

// udpProxy passes datagrams between one client and the node at addr,
// recording what the client sends: its address, and the recording.
func udpProxy(t *testing.T, node string) (string, func() [][]byte) {
	t.Helper()
	p, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	to, err := net.ResolveUDPAddr("udp", node)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var rec [][]byte
	go func() {
		var client *net.UDPAddr
		buf := make([]byte, 1<<16)
		for {
			k, src, err := p.ReadFromUDP(buf)
			if err != nil {
				return
			}
			if src.String() == to.String() {
				if client != nil {
					p.WriteToUDP(buf[:k], client)
				}
				continue
			}
			client = src
			mu.Lock()
			rec = append(rec, bytes.Clone(buf[:k]))
			mu.Unlock()
			p.WriteToUDP(buf[:k], to)
		}
	}()
	return p.LocalAddr().String(), func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		return append([][]byte(nil), rec...)
	}
}

// tcpProxy passes one connection through to the node at addr,
// recording what the client sends: its address, and the recording
// once the client has closed it.
func tcpProxy(t *testing.T, node string) (string, func() []byte) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var rec bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		n, err := net.Dial("tcp", node)
		if err != nil {
			return
		}
		defer n.Close()
		go io.Copy(c, n)
		io.Copy(io.MultiWriter(n, &rec), c)
	}()
	return ln.Addr().String(), func() []byte {
		<-done
		return rec.Bytes()
	}
}
