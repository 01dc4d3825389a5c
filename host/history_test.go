package host

import (
	"strings"
	"testing"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/kvstore"
)

// A client node's History, whose spec holds closures, crosses the state
// file and a state report as its calls, and reads back into the node New
// builds as the History written: the same fingerprint, events,
// operations and verdict, linearizable or not, with an abandoned
// operation among them.
func TestHistoryCrosses(t *testing.T) {
	_, m, err := kvstore.System.Model(protocol.Config{})
	if err != nil {
		t.Fatal(err)
	}
	clients := sim.NodeID(kvstore.Replicas)
	put := kvstore.Op{Put: true, Key: "x", Val: 1}
	get := kvstore.Op{Key: "x"}
	cases := []struct {
		name, violation string
		record          func(h *properties.History)
	}{
		{"linearizable", "", func(h *properties.History) {
			h.Invoke(0, put)
			h.Invoke(1, get)
			h.Abandon(1)
			h.Return(0, 0)
			h.Invoke(1, get)
			h.Return(1, 1)
		}},
		{"stale read", "get(x) -> 0", func(h *properties.History) {
			h.Invoke(0, put)
			h.Return(0, 0)
			h.Invoke(1, get)
			h.Return(1, 0)
		}},
	}
	hdr := &LogHeader{System: "kvstore", Node: int(clients), Config: protocol.Config{Nodes: kvstore.Replicas + 1}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := m.Spec.New(clients).(*kvstore.Clients)
			c.record(&n.H)
			if got := n.H.Violation(); (got == "") != (c.violation == "") || !strings.Contains(got, c.violation) {
				t.Fatalf("the history recorded: violation %q; want one with %q", got, c.violation)
			}
			check := func(how string, back *kvstore.Clients) {
				t.Helper()
				if sim.Fingerprint(back) != sim.Fingerprint(n) || back.H.Events() != n.H.Events() ||
					back.H.Violation() != n.H.Violation() || back.H.Err() != "" || len(back.H.Ops()) != len(n.H.Ops()) {
					t.Errorf("%s: read back %s (%d events, violation %q, error %q); want %s (%d events)",
						how, sim.Dump(back), back.H.Events(), back.H.Violation(), back.H.Err(), sim.Dump(n), n.H.Events())
				}
				for i, o := range back.H.Ops() {
					if w := n.H.Ops()[i]; o.String() != w.String() {
						t.Errorf("%s: operation %d read back %v; want %v", how, i, o, w)
					}
				}
			}
			back := m.Spec.New(clients).(*kvstore.Clients)
			if _, err := decodeFor(encodeFor(t, hdr, 0, n), hdr, back); err != nil {
				t.Fatal(err)
			}
			check("state file", back)
			b, err := EncodeState(n)
			if err != nil {
				t.Fatal(err)
			}
			back = m.Spec.New(clients).(*kvstore.Clients)
			if err := DecodeState(b, back); err != nil {
				t.Fatal(err)
			}
			check("state report", back)
		})
	}
}
