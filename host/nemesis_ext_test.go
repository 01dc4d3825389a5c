package host_test

import (
	"testing"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/systems/transport"
)

// A seeded bug fails under the nemesis as it does in the checker: with
// syn-dup, the transport's acknowledgements dropped for real make
// the sender retransmit its SYN, which the receiver takes for a new
// connection and delivers again; the merged log replays to the
// violation of delivered-once-in-order. The correct transport, under
// the same fault, delivers every message once.
func TestNemesisTransport(t *testing.T) {
	for _, bugs := range [][]string{{"syn-dup"}, nil} {
		name := "correct"
		if bugs != nil {
			name = bugs[0]
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			drop := host.Fault{Kind: "drop", Node: 1, Peer: 0, Count: 2}
			c := start(t, &transport.System, protocol.Config{Bugs: bugs}, host.ClusterOptions{Data: dir, LogDir: dir, Seed: 1, Faults: []host.Fault{drop}})
			live(t, c)
			waitFor(t, "a retransmission reaches node 1", func() bool { return c.Nodes[1].Stats().Received >= 3 })
			c.Stop()
			logs, err := host.ReadRunLogs(dir)
			if err != nil {
				t.Fatal(err)
			}
			m, err := host.Merge(logs)
			if err != nil {
				t.Fatal(err)
			}
			rr, err := m.Replay(&transport.System)
			if err != nil || rr.Divergence != nil {
				t.Fatalf("the run's replay: %v, divergence %v", err, rr.Divergence)
			}
			want := ""
			if bugs != nil {
				want = "delivered-once-in-order"
			}
			if rr.Violation != want {
				t.Fatalf("the run's replay violates %q (%s), want %q", rr.Violation, rr.Message, want)
			}
			// The run's trace, its drops in it, replays as the checker's do.
			if _, err := check.ReplayTrace(&transport.System, rr.Trace, 0, nil); err != nil {
				t.Errorf("the run's trace does not replay: %v", err)
			}
		})
	}
}
