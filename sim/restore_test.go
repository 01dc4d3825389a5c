package sim_test

import (
	"testing"

	"github.com/livecheck/livecheck/sim"
)

// A timer or a message put back is the state before the step that took
// it, where that step changed nothing else: the same fingerprint, and
// the same events enabled.
func TestRestore(t *testing.T) {
	for _, tr := range []sim.Transport{sim.Datagram, sim.Stream} {
		w, s0 := newWorld(t, quietSpec(2, tr, nil, sim.Budget{}, []any{setTimer("t"), send{1, note("x")}, send{1, note("y")}}))
		fired := apply(t, w, s0, sim.Event{Kind: sim.Timer, Node: 0, Timer: "t"})
		if fired.HasTimer(0, "t") {
			t.Fatalf("%v: the timer is still set after it fired", tr)
		}
		back, err := w.WithTimer(fired, 0, "t")
		if err != nil || back.Fingerprint() != s0.Fingerprint() || !back.HasTimer(0, "t") {
			t.Errorf("%v: WithTimer = %v, %v: want the state before the timer fired", tr, back, err)
		}
		if same, err := w.WithTimer(s0, 0, "t"); err != nil || same != s0 {
			t.Errorf("%v: WithTimer of a timer set already = %v, %v: want the state itself", tr, same, err)
		}
		if _, err := w.WithTimer(s0, 5, "t"); err == nil {
			t.Errorf("%v: WithTimer at node 5 of 2: no error", tr)
		}
		// The head of the queue 0->1 (on streams the first sent).
		var head sim.Envelope
		for _, e := range s0.InFlight() {
			if sim.Dump(e.Msg) == `"x"` || tr == sim.Datagram {
				head = e
				break
			}
		}
		got := apply(t, w, s0, sim.Event{Kind: sim.Deliver, Node: 1, Peer: 0, Msg: head.FP})
		back, err = w.WithMessage(got, head)
		if err != nil || back.Fingerprint() != s0.Fingerprint() {
			t.Fatalf("%v: WithMessage = %v: want the state before the delivery", tr, err)
		}
		// The message put back can be delivered again, first on a stream.
		again := apply(t, w, back, sim.Event{Kind: sim.Deliver, Node: 1, Peer: 0, Msg: head.FP})
		if again.Fingerprint() != got.Fingerprint() {
			t.Errorf("%v: delivering the message put back does not lead where the first delivery did", tr)
		}
		if _, err := w.WithMessage(got, sim.Envelope{From: 0, To: 7}); err == nil {
			t.Errorf("%v: WithMessage to node 7 of 2: no error", tr)
		}
	}
}
