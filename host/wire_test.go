package host

import (
	"bytes"
	"github.com/livecheck/livecheck/internal/hosttest"
	"net"
	"strings"
	"testing"
)

// A frame reads back as it was written; damaged, it is an error.
func TestFrame(t *testing.T) {
	var b bytes.Buffer
	if err := encodeFrame(&b, frame{from: 2, clock: 5, msg: Ping{N: 7}}); err != nil {
		t.Fatal(err)
	}
	f, err := decodeFrame(b.Bytes())
	if err != nil || f != (frame{from: 2, clock: 5, msg: Ping{N: 7}}) {
		t.Fatalf("decoded %+v %v, want from 2 clock 5 Ping{N: 7}", f, err)
	}
	good := b.Bytes()
	for name, bad := range map[string][]byte{
		"empty": nil, "no magic": []byte("hello world"), "version 9": append([]byte("LCW\x09"), good[4:]...),
		"cut": good[:len(good)/2], "garbage after the header": append([]byte("LCW\x01\x02"), bytes.Repeat([]byte{0xff}, 40)...),
	} {
		if _, err := decodeFrame(bad); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	type fn struct{ F func() }
	n := 0
	if err := encodeFrame(&b, frame{msg: fn{F: func() { n++ }}}); err == nil || !strings.Contains(err.Error(), "cannot cross the wire") ||
		!strings.Contains(err.Error(), "is a closure") {
		t.Errorf("a message with a closure: %v, want it refused", err)
	}
}

// Junk, a datagram over the limit and a well-formed frame from an
// address that is no peer's reach node 0: each is dropped and counted,
// and the node goes on.
func TestDropsAndStrangers(t *testing.T) {
	c, _ := startPingers(t, ClusterOptions{})
	stray, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer stray.Close()
	to, _ := net.ResolveUDPAddr("udp", c.Peers()[0])
	var fr bytes.Buffer
	if err := encodeFrame(&fr, frame{from: 2, msg: Ping{N: 1}}); err != nil {
		t.Fatal(err)
	}
	d := sealDatagram(nil, nil, fr.Bytes(), trailer{kind: dgData, from: 2, to: 0, sess: 1, seq: 1})
	for _, d := range [][]byte{[]byte("junk"), make([]byte, DefaultMaxMessage+1000), d} {
		if _, err := stray.WriteToUDP(d, to); err != nil {
			t.Fatal(err)
		}
	}
	n := c.Nodes[0]
	waitFor(t, "three drops counted", func() bool {
		s := n.Stats()
		return s.Malformed == 1 && s.Oversized == 1 && s.Strangers == 1
	})
	before := got(n)
	waitFor(t, "node 0 still gets pings", func() bool { return got(n) > before })
	if err := n.Err(); err != nil {
		t.Fatal(err)
	}
}

// A message over the limit is not sent, and counted; the node goes on.
func TestOversizedSend(t *testing.T) {
	c, l := startPingers(t, ClusterOptions{})
	if err := c.Nodes[1].Call("big"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the big message counted", func() bool { return c.Nodes[1].Stats().Oversized == 1 })
	if !strings.Contains(l.String(), "more than the limit") {
		t.Errorf("the log does not say why the message was not sent")
	}
	if err := c.Nodes[1].Err(); err != nil {
		t.Fatal(err)
	}
}

// A handler that panics stops its node, with the event in the log and
// in Err; the other nodes run on.
func TestPanicStopsOneNode(t *testing.T) {
	c, l := startPingers(t, ClusterOptions{})
	if err := c.Nodes[1].Call("panic"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Nodes[1].Done():
	case <-timeAfter():
		t.Fatal("node 1 did not stop")
	}
	err := c.Nodes[1].Err()
	if err == nil || !strings.Contains(err.Error(), `handler App "panic" panicked: told to`) {
		t.Fatalf("node 1 stopped with %v", err)
	}
	if !strings.Contains(l.String(), `handler App "panic" panicked`) {
		t.Errorf("the log does not name the event")
	}
	before := got(c.Nodes[0])
	waitFor(t, "node 0 still gets pings from node 2", func() bool { return got(c.Nodes[0]) > before })
	if c.Nodes[0].Err() != nil || c.Nodes[2].Err() != nil {
		t.Fatal("another node stopped")
	}
}

// A handler that does not return is logged, once, as the node stuck in
// it (the checker's divergence); the other nodes run on.
func TestStuckHandler(t *testing.T) {
	hosttest.Release = make(chan struct{}) // before any node reads it
	c, l := startPingers(t, ClusterOptions{})
	if err := c.Nodes[1].Call("hang"); err != nil {
		t.Fatal(err)
	}
	defer close(hosttest.Release)
	waitFor(t, "the stuck handler counted", func() bool { return c.Nodes[1].Stats().Stuck == 1 })
	if !strings.Contains(l.String(), `handler App has not returned after`) {
		t.Errorf("the log does not say the node is stuck")
	}
	before := got(c.Nodes[0])
	waitFor(t, "node 0 still gets pings from node 2", func() bool { return got(c.Nodes[0]) > before })
}
