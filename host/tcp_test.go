package host

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// When a node's process dies, the connections of its peers to and from
// it break: each peer's Error runs; the node started again is dialed
// again, and dials again, and the pings flow.
func TestStreamBreakAndReconnect(t *testing.T) {
	c, _ := startSystem(t, &streamPingers, ClusterOptions{})
	for _, n := range c.Nodes {
		waitFor(t, "pings", func() bool { return got(n) >= 3 })
	}
	if err := c.Restart(1); err != nil {
		t.Fatal(err)
	}
	errs := func(i int) int { return c.Nodes[i].State().(*pinger).Errs }
	// Node 0 sends to node 1; node 1 sent to node 2.
	waitFor(t, "node 0 told its connection to node 1 broke", func() bool { return errs(0) >= 1 })
	waitFor(t, "node 2 told its connection from node 1 broke", func() bool { return errs(2) >= 1 })
	g1, g2 := got(c.Nodes[1]), got(c.Nodes[2])
	waitFor(t, "node 1 gets pings again", func() bool { return got(c.Nodes[1]) > g1+2 })
	waitFor(t, "node 2 gets node 1's pings again", func() bool { return got(c.Nodes[2]) > g2+2 })
}

// writeTestFrame writes a frame after its length.
func writeTestFrame(t *testing.T, c net.Conn, f []byte) {
	t.Helper()
	var l [4]byte
	binary.BigEndian.PutUint32(l[:], uint32(len(f)))
	if _, err := c.Write(append(l[:], f...)); err != nil {
		t.Fatal(err)
	}
}

// A connection from a host that is no peer's is dropped; on a peer's
// connection, a frame over the limit and a malformed frame are dropped
// and counted, and the frames after them arrive.
func TestStreamDrops(t *testing.T) {
	c, _ := startSystem(t, &streamPingers, ClusterOptions{})
	n := c.Nodes[0]
	var hello, ping bytes.Buffer
	encodeFrame(&hello, frame{from: 2, msg: Control{Op: "hello", Peer: 0, Nonce: 1}})
	encodeFrame(&ping, frame{from: 2, clock: 1, msg: Ping{N: 99}})

	// 127.0.0.2 is loopback too, but no peer's host.
	stray, err := net.DialTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, net.TCPAddrFromAddrPort(mustAddr(t, c.Peers()[0])))
	if err != nil {
		t.Skipf("cannot dial from 127.0.0.2: %v", err)
	}
	defer stray.Close()
	writeTestFrame(t, stray, hello.Bytes())
	waitFor(t, "the stranger counted", func() bool { return n.Stats().Strangers == 1 })

	peer, l := dialTestLink(t, c.Peers()[0], nil, 2, 0)
	defer peer.Close()
	writeTestFrame(t, peer, make([]byte, DefaultMaxMessage+1))
	l.skip()
	writeTestFrame(t, peer, l.seal(nil, []byte("LCW\x01junk")))
	before := got(n)
	writeTestFrame(t, peer, l.seal(nil, ping.Bytes()))
	waitFor(t, "the oversized and malformed frames counted", func() bool {
		s := n.Stats()
		return s.Oversized == 1 && s.Malformed == 1
	})
	waitFor(t, "the ping after them arrives", func() bool { return got(n) > before })
	if err := n.Err(); err != nil {
		t.Fatal(err)
	}
}

// dialTestLink dials addr as node from, to node to, and makes the
// handshake under key: the connection, and its link for the frames
// after.
func dialTestLink(t *testing.T, addr string, key []byte, from, to sim.NodeID) (net.Conn, *link) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	l, err := dialLink(r, w, key, from, to, 0)
	if err != nil {
		c.Close()
		t.Fatal(err)
	}
	return c, l
}

func mustAddr(t *testing.T, s string) (ap netip.AddrPort) {
	t.Helper()
	a, err := resolve("tcp", []string{s})
	if err != nil {
		t.Fatal(err)
	}
	return a[0]
}

// With a cluster key, the nodes talk as before, and a frame without the
// key's MAC is dropped and counted, on a datagram or on a connection:
// a process on a peer's host cannot pass for the peer.
func TestClusterKey(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	for _, sys := range []*protocol.System{&pingers, &streamPingers} {
		t.Run(sys.Name, func(t *testing.T) {
			c, _ := startSystem(t, sys, ClusterOptions{Key: key})
			waitFor(t, "pings with the key", func() bool { return c.Holds(c.State()) })
			var hello, ping bytes.Buffer
			encodeFrame(&hello, frame{from: 2, msg: Control{Op: "hello", Peer: 0, Nonce: 1}})
			encodeFrame(&ping, frame{from: 2, msg: Ping{N: 1}})
			n := c.Nodes[0]
			if sys == &pingers {
				stray, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
				if err != nil {
					t.Fatal(err)
				}
				defer stray.Close()
				stray.WriteToUDP(ping.Bytes(), net.UDPAddrFromAddrPort(mustAddr(t, c.Peers()[0])))
			} else {
				conn, err := net.Dial("tcp", c.Peers()[0])
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				writeTestFrame(t, conn, hello.Bytes())
			}
			waitFor(t, "the frame without the MAC counted", func() bool { return n.Stats().Unauthenticated == 1 })
			if err := n.Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
	if _, err := StartCluster(&pingers, protocol.Config{Nodes: 3}, ClusterOptions{Key: []byte("short")}); err == nil {
		t.Error("a key of 5 bytes was taken")
	}
}
