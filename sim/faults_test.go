package sim_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/livecheck/livecheck/sim"
)

func dup(from, to sim.NodeID, msg sim.Message) sim.Event {
	return sim.Event{Kind: sim.Duplicate, Node: to, Peer: from, Msg: sim.Fingerprint(msg)}
}

// A duplication is enabled once per distinct datagram in flight while the
// budget lasts, copies it (both copies arrive), counts against the
// budget, and makes a state of its own.
func TestDatagramDuplicates(t *testing.T) {
	a, b := note("a"), note("b")
	calls := []sim.Call{{To: 0, Call: batch{send{1, a}, send{1, b}, send{1, a}}}}
	for budget := 0; budget <= 2; budget++ {
		t.Run(fmt.Sprintf("budget %d", budget), func(t *testing.T) {
			w, s := newWorld(t, spec(2, sim.Datagram, calls, sim.Budget{Dups: budget}))
			s = apply(t, w, s, app(0, 0))
			dels := sortedDeliveries(deliver(0, 1, a), deliver(0, 1, b))
			if budget == 0 {
				wantEvents(t, enabled(w, s), dels)
				wantNotEnabled(t, w, s, dup(0, 1, a))
				return
			}
			dups := sortedDeliveries(dup(0, 1, a), dup(0, 1, b))
			wantEvents(t, enabled(w, s), append(slices.Clone(dels), dups...))
			before := s
			s = apply(t, w, s, dup(0, 1, b))
			if s.Used().Dups != 1 || len(s.InFlight()) != 4 || sim.Fingerprint(w.Last().Msg) != sim.Fingerprint(b) {
				t.Fatalf("after a duplication: used %+v, %d in flight, Last().Msg %v", s.Used(), len(s.InFlight()), w.Last().Msg)
			}
			if len(w.Last().Sent) != 0 {
				t.Errorf("a duplication sends nothing, Last().Sent = %v", w.Last().Sent)
			}
			if s.Fingerprint() == before.Fingerprint() {
				t.Errorf("a duplication left the fingerprint as it was")
			}
			// Both copies of b arrive, then nothing of b is left.
			s = applyAll(t, w, s, deliver(0, 1, b), deliver(0, 1, b))
			wantLog(t, s, 1, "init", `recv 0 "b"`, `recv 0 "b"`)
			if budget == 1 {
				for _, e := range enabled(w, s) {
					if e.Kind == sim.Duplicate {
						t.Errorf("duplication %v enabled with the budget spent", e)
					}
				}
				wantNotEnabled(t, w, s, dup(0, 1, a))
			} else {
				s = apply(t, w, s, dup(0, 1, a))
				if s.Used().Dups != 2 || len(s.InFlight()) != 3 {
					t.Errorf("second duplication: used %+v, %d in flight", s.Used(), len(s.InFlight()))
				}
			}
			wantNotEnabled(t, w, s, dup(0, 1, b)) // none in flight any more
		})
	}
	// Duplication is a datagram failure: a stream never duplicates.
	w, s := newWorld(t, spec(2, sim.Stream, calls, sim.Budget{Dups: 5}))
	s = apply(t, w, s, app(0, 0))
	wantEvents(t, enabled(w, s), []sim.Event{deliver(0, 1, a)})
	wantNotEnabled(t, w, s, dup(0, 1, a))
}

// Two states alike but for a copy in flight, or for the duplications
// used, differ; the same duplication reached two ways is one state.
func TestDuplicateFingerprint(t *testing.T) {
	a, b := note("a"), note("b")
	calls := []sim.Call{{To: 0, Call: batch{send{1, a}, send{1, b}}}}
	w, s := newWorld(t, quietSpec(2, sim.Datagram, calls, sim.Budget{Dups: 2}))
	s = apply(t, w, s, app(0, 0))
	twoA := apply(t, w, s, dup(0, 1, a))
	// Delivered, the copy leaves the network as before but the budget
	// used is not: a state of its own.
	used := apply(t, w, twoA, deliver(0, 1, a))
	if used.Fingerprint() == s.Fingerprint() {
		t.Errorf("a state with a duplication used hashes as one without")
	}
	if twoA.Fingerprint() == s.Fingerprint() {
		t.Errorf("a state with a copy in flight hashes as one without")
	}
	// Duplicate a then b, or b then a: one state.
	ab := applyAll(t, w, s, dup(0, 1, a), dup(0, 1, b))
	ba := applyAll(t, w, s, dup(0, 1, b), dup(0, 1, a))
	if ab.Fingerprint() != ba.Fingerprint() || ab.Dump() != ba.Dump() {
		t.Errorf("the same duplications in two orders differ:\n%s\n%s", ab.Dump(), ba.Dump())
	}
	// A world without duplications hashes its states as before: no
	// budget for them is hashed, only what was used.
	w0, s0 := newWorld(t, quietSpec(2, sim.Datagram, calls, sim.Budget{}))
	s0 = apply(t, w0, s0, app(0, 0))
	if s0.Fingerprint() != s.Fingerprint() {
		t.Errorf("the duplication budget changed the fingerprint of a state that used none")
	}
}
