package host

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"hash"

	"github.com/livecheck/livecheck/sim"
)

// The channels. A frame is taken once, by its receiver, on the channel
// it was sent on; the cluster key's MAC (Options.Key) makes that hold
// against a process that records frames on the network and sends them
// again, to the same node or another, now or later.
//
// Every channel is opened by a handshake in which the receiver draws a
// fresh random nonce, so that no frame recorded before it can be of it:
// a node that starts again (a new incarnation) draws new nonces, and
// what was sent to or by its earlier process belongs to channels that
// are gone. The MAC of each frame covers the sender, the receiver, the
// channel's nonces and the frame's sequence number in its direction:
//
//   - Datagrams (udp.go). A sender with no session with a peer sends it
//     a hello with a nonce of its own, R; the peer answers with a
//     challenge holding R and a fresh session nonce S; the sender takes
//     a challenge only for its R, and draws a new R at once, so that no
//     challenge is taken twice. Each datagram then carries (sender,
//     receiver, S, R, seq) in a trailer under the MAC, seq counting from
//     1; the first, a confirm with no message, makes S the receiver's
//     session with the sender, and every earlier session of the pair is
//     gone. The receiver keeps a window of the last replayWindow
//     sequence numbers, as IPsec and DTLS do: a number seen already, or
//     older than the window, is refused. A datagram whose session the
//     receiver does not know (it started again, or the datagram is of
//     an older session) is refused, and the receiver challenges the R
//     it carries: a live sender takes the challenge and goes on in a
//     new session. A node sends its hellos as soon as it starts, so
//     that its peers drop its earlier process's sessions at once.
//   - Streams (tcp.go). The dialer sends a hello with a nonce of its
//     own (and says which node it dials); the listener answers with a
//     challenge holding it and a nonce of its own; every frame after
//     that, both ways, carries a MAC over the direction, both ids, both
//     nonces and its sequence number on the connection, which TCP
//     delivers in order (so it is not sent). A recorded stream or hello
//     played on a new connection meets a new nonce, and is refused at
//     its first frame; the connection counts only from then on (a hello
//     alone does not make a node suspect its peer).
//   - Control frames from the command line (remote.go) over datagrams
//     ask for a challenge first, and carry its nonce, which the node
//     takes once; over TCP they ride a connection with its handshake.
//
// A frame refused for its channel is logged and counted: Replayed (seen
// already, older than the window, of a session or connection that is
// not the channel's, a challenge not asked for) or Misdirected (for
// another node). Without a key the channels are the same, with no MAC:
// a duplicate on the network is still taken once, but anyone who can
// send the nodes a datagram can pass for a node; a node refuses to run
// without a key unless every peer is on loopback. The channel
// authenticates; it does not hide: frames cross in the clear.

// replayWindow is how many sequence numbers a datagram session
// remembers below the highest it has taken (a multiple of 64).
const replayWindow = 256

// A replayWin is the anti-replay window of one datagram session.
type replayWin struct {
	top  uint64                    // the highest sequence number taken
	seen [replayWindow / 64]uint64 // bit s%replayWindow: s taken, for top-replayWindow < s <= top
}

// take says whether seq is new and in the window, and marks it taken.
func (w *replayWin) take(seq uint64) bool {
	if seq == 0 {
		return false
	}
	if seq > w.top {
		if seq-w.top >= replayWindow {
			w.seen = [replayWindow / 64]uint64{}
		} else {
			for s := w.top + 1; s < seq; s++ {
				w.seen[s/64%(replayWindow/64)] &^= 1 << (s % 64)
			}
		}
		w.top = seq
		w.seen[seq/64%(replayWindow/64)] |= 1 << (seq % 64)
		return true
	}
	if w.top-seq >= replayWindow {
		return false // older than the window
	}
	word, bit := seq/64%(replayWindow/64), uint64(1)<<(seq%64)
	if w.seen[word]&bit != 0 {
		return false
	}
	w.seen[word] |= bit
	return true
}

// nonce is a fresh random nonce, never 0 (0 says "none").
func nonce() uint64 {
	var b [8]byte
	for {
		rand.Read(b[:])
		if v := binary.LittleEndian.Uint64(b[:]); v != 0 {
			return v
		}
	}
}

// A macer computes the cluster key's MACs, reusing its HMAC state: one
// per goroutine that seals or opens. Nil without a key.
type macer struct {
	h   hash.Hash
	sum [sha256.Size]byte
}

func newMacer(key []byte) *macer {
	if key == nil {
		return nil
	}
	return &macer{h: hmac.New(sha256.New, key)}
}

// mac is the MAC of prefix then b.
func (m *macer) mac(prefix, b []byte) []byte {
	m.h.Reset()
	m.h.Write(prefix)
	m.h.Write(b)
	return m.h.Sum(m.sum[:0])[:macSize]
}

// The datagram trailer, after the frame (none for a hello, a challenge,
// a confirm), before the MAC: kind, sender, receiver (anyNode: the
// command line's hello, which does not know it), the session nonce S,
// the sender's nonce R, and the sequence number.
const (
	trailerSize = 1 + 4 + 4 + 8 + 8 + 8
	anyNode     = 1<<32 - 1
)

// Datagram kinds.
const (
	dgData      = 'd' // a frame, in session S
	dgConfirm   = 'a' // no frame: the first of session S
	dgHello     = 'h' // no frame: please challenge R
	dgChallenge = 'c' // no frame: session S, for the hello (or datagram) with R
	dgCtlHello  = 'H' // the command line's hello: please challenge R
	dgCtlChal   = 'C' // the node's answer: one control frame under nonce S
)

type trailer struct {
	kind      byte
	from, to  uint32
	sess, rep uint64
	seq       uint64
}

func appendTrailer(b []byte, t trailer) []byte {
	b = append(b, t.kind)
	b = binary.BigEndian.AppendUint32(b, t.from)
	b = binary.BigEndian.AppendUint32(b, t.to)
	b = binary.BigEndian.AppendUint64(b, t.sess)
	b = binary.BigEndian.AppendUint64(b, t.rep)
	return binary.BigEndian.AppendUint64(b, t.seq)
}

// sealDatagram appends t and the MAC of the whole (with m) to body.
func sealDatagram(dst []byte, m *macer, body []byte, t trailer) []byte {
	dst = append(dst[:0], body...)
	dst = appendTrailer(dst, t)
	if m != nil {
		dst = append(dst, m.mac(nil, dst)...)
	}
	return dst
}

// openDatagram checks d's MAC (with m) and splits it; ok false: the
// MAC is wrong (or missing); short: no trailer.
func openDatagram(m *macer, d []byte) (body []byte, t trailer, ok, short bool) {
	if m != nil {
		if len(d) < macSize {
			return nil, t, false, false
		}
		var mac []byte
		d, mac = d[:len(d)-macSize], d[len(d)-macSize:]
		if !hmac.Equal(m.mac(nil, d), mac) {
			return nil, t, false, false
		}
	}
	if len(d) < trailerSize {
		return nil, t, true, true
	}
	body, x := d[:len(d)-trailerSize], d[len(d)-trailerSize:]
	t = trailer{kind: x[0], from: binary.BigEndian.Uint32(x[1:]), to: binary.BigEndian.Uint32(x[5:]),
		sess: binary.BigEndian.Uint64(x[9:]), rep: binary.BigEndian.Uint64(x[17:]), seq: binary.BigEndian.Uint64(x[25:])}
	return body, t, true, false
}

// A link is one TCP connection after its handshake: its two directions'
// sequence numbers and the binding their MACs cover.
type link struct {
	m        *macer // nil without a key
	bind     [1 + 4 + 4 + 8 + 8 + 8]byte
	out, in  uint64 // frames sealed, frames opened
	outDir   byte   // this end's direction: 'D' dialer to listener, 'L' back
	from, to sim.NodeID
}

func newLink(key []byte, dialer, listener sim.NodeID, nD, nL uint64, dialing bool) *link {
	l := &link{m: newMacer(key), outDir: 'L', from: listener, to: dialer}
	if dialing {
		l.outDir, l.from, l.to = 'D', dialer, listener
	}
	binary.BigEndian.PutUint32(l.bind[1:], uint32(dialer))
	binary.BigEndian.PutUint32(l.bind[5:], uint32(listener))
	binary.BigEndian.PutUint64(l.bind[9:], nD)
	binary.BigEndian.PutUint64(l.bind[17:], nL)
	return l
}

// mac is the MAC of frame f, the seq'th of direction dir.
func (l *link) mac(dir byte, seq uint64, f []byte) []byte {
	l.bind[0] = dir
	binary.BigEndian.PutUint64(l.bind[25:], seq)
	return l.m.mac(l.bind[:], f)
}

// seal appends f and its MAC to dst[:0], the next frame this end sends.
func (l *link) seal(dst, f []byte) []byte {
	l.out++
	dst = append(dst[:0], f...)
	if l.m != nil {
		dst = append(dst, l.mac(l.outDir, l.out, f)...)
	}
	return dst
}

// skip counts a frame of the other end's that was not read through (too
// long): its sequence number is spent.
func (l *link) skip() { l.in++ }

// open checks f, the next frame from the other end, and returns it
// without its MAC; false if it is not that frame of this connection.
func (l *link) open(f []byte) ([]byte, bool) {
	l.in++
	if l.m == nil {
		return f, true
	}
	if len(f) < macSize {
		return nil, false
	}
	dir := byte('L')
	if l.outDir == 'L' {
		dir = 'D'
	}
	body, mac := f[:len(f)-macSize], f[len(f)-macSize:]
	return body, hmac.Equal(l.mac(dir, l.in, body), mac)
}
