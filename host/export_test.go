package host

import (
	"encoding/binary"
	"net/netip"

	"github.com/livecheck/livecheck/sim"
)

// The hooks of the package's own tests, for its external tests, which
// replay runs with runlog as the command does.

// Hold has every node of co hold back the frames hold says, until
// ReleaseHeld lets them go: messages in flight for as long as a test
// needs.
func Hold(co *ClusterOptions, hold func(from, to sim.NodeID, msg sim.Message) bool) { co.hold = hold }

// ReleaseHeld sends the frames node n held back.
func ReleaseHeld(n *Node) { n.release() }

// SetCrash has node id of co stop at a crash point (CrashPoints) when
// crash says.
func SetCrash(co *ClusterOptions, crash func(id sim.NodeID, point string) bool) { co.crash = crash }

// The crash points a first Init can stop at before its state file.
var CrashesBeforeState = []string{crashLog, crashLogTorn, crashLogged, crashStateTmp}

// The crash points between a step's log and its state file, where the
// log voids the step.
var CrashesVoided = []string{crashLogged, crashStateTmp}

// Suspects says whether node n of a stream system waits for peer to
// come back (a broken connection it has not told).
func Suspects(n *Node, peer sim.NodeID) bool {
	t := n.tr.(*tcp)
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.owed[peer]
}

// Connected says whether node n of a stream system has a connection
// with peer.
func Connected(n *Node, peer sim.NodeID) bool { return n.tr.(*tcp).connected(peer) }

// The tally system (testsys_test.go): each node counts, durably, in
// every handler.
type Tally = tally

var TallySystem = &tallySystem

// The attacker's tools, for the attack tests (attack_ext_test.go).

const ReplayWindow = replayWindow

// Tap has f see every datagram a node of co sends, and every write on a
// connection it dials, as they go on the wire; true swallows a
// datagram (it is not sent).
func Tap(co *ClusterOptions, f func(from, to sim.NodeID, raw []byte) bool) { co.tap = f }

// Inject sends raw to addr from node n's own UDP socket: from its
// address, as an attacker who can forge a source address does.
func Inject(n *Node, addr string, raw []byte) error {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return err
	}
	_, err = n.tr.(*udp).conn.WriteToUDPAddrPort(raw, ap)
	return err
}

// A Dgram is what a datagram on the wire says.
type Dgram struct {
	Kind     string // data, confirm, hello, challenge, ctl-hello, ctl-challenge
	From, To uint32
	Seq      uint64
	Msg      sim.Message // a data datagram's
}

// ReadDatagram reads raw, a datagram with a MAC if keyed.
func ReadDatagram(raw []byte, keyed bool) (Dgram, bool) {
	if keyed {
		if len(raw) < macSize {
			return Dgram{}, false
		}
		raw = raw[:len(raw)-macSize]
	}
	body, t, _, short := openDatagram(nil, raw)
	if short {
		return Dgram{}, false
	}
	d := Dgram{From: t.from, To: t.to, Seq: t.seq}
	d.Kind = map[byte]string{dgData: "data", dgConfirm: "confirm", dgHello: "hello", dgChallenge: "challenge",
		dgCtlHello: "ctl-hello", dgCtlChal: "ctl-challenge"}[t.kind]
	if t.kind == dgData {
		f, err := decodeFrame(body)
		if err != nil {
			return Dgram{}, false
		}
		d.Msg = f.msg
	}
	return d, d.Kind != ""
}

// IsHello says whether raw, a write on a connection, is the hello that
// begins it.
func IsHello(raw []byte, keyed bool) bool {
	if len(raw) < 4 || int(binary.BigEndian.Uint32(raw)) != len(raw)-4 {
		return false
	}
	f := raw[4:]
	if keyed {
		if len(f) < macSize {
			return false
		}
		f = f[:len(f)-macSize]
	}
	fr, err := decodeFrame(f)
	c, ok := fr.msg.(Control)
	return err == nil && ok && c.Op == "hello"
}
