package host

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/livecheck/livecheck/sim"
)

// The datagram transport: each frame is one UDP datagram, sent from the
// node's own address, so that a receiver knows its sender by the address
// as well as by the id the frame names, and drops a frame on which the
// two disagree, or from an address that is no peer's.

type packetConn = *net.UDPConn

type udp struct {
	n     *Node
	conn  *net.UDPConn
	peers []netip.AddrPort
	ids   map[netip.AddrPort]sim.NodeID
	done  chan struct{}
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
	u := &udp{n: n, peers: peers, ids: map[netip.AddrPort]sim.NodeID{}, done: make(chan struct{}), conn: n.opts.packet}
	for i, p := range peers {
		u.ids[p] = sim.NodeID(i)
	}
	if u.conn == nil {
		if u.conn, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(peers[n.id])); err != nil {
			return nil, fmt.Errorf("node %d cannot listen on %s: %v", n.id, peers[n.id], err)
		}
	}
	go u.read()
	return u, nil
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
		b, ok := n.unseal(buf[:k], src.String())
		if !ok {
			continue
		}
		f, err := decodeFrame(b)
		if err != nil {
			n.logf("dropped a datagram from %s: %v", src, err)
			n.stats.malformed.Add(1)
			continue
		}
		if f.from == controlID {
			n.control(f.msg, src.String())
			continue
		}
		if id, ok := u.ids[src]; !ok || f.from != id {
			n.logf("dropped a datagram from %s that says it is from node %d, whose address is not that", src, f.from)
			n.stats.strangers.Add(1)
			continue
		}
		if !n.post(event{kind: evMsg, peer: f.from, msg: f.msg, clock: f.clock, epoch: f.epoch}) {
			return
		}
	}
}

func (u *udp) send(to sim.NodeID, frame []byte) {
	if _, err := u.conn.WriteToUDPAddrPort(frame, u.peers[to]); err != nil {
		u.n.stats.lost.Add(1)
	}
}

func (u *udp) close() {
	u.conn.Close()
	<-u.done
}
