package sim_test

import (
	"fmt"
	"slices"
	"strings"
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

func partition(side ...sim.NodeID) sim.Event {
	var s sim.NodeSet
	for _, id := range side {
		s = s.Add(id)
	}
	return sim.PartitionEvent(s)
}

var heal = sim.Event{Kind: sim.Heal}

// Partitions are enabled while the budget lasts and none is in force, one
// for each side without the highest node, in order; then only the heal.
func TestPartitionEnabled(t *testing.T) {
	for _, tr := range []sim.Transport{sim.Datagram, sim.Stream} {
		t.Run(tr.String(), func(t *testing.T) {
			w, s := newWorld(t, spec(3, tr, nil, sim.Budget{}))
			wantEvents(t, enabled(w, s), nil)
			wantNotEnabled(t, w, s, partition(0))
			w, s = newWorld(t, spec(3, tr, nil, sim.Budget{Partitions: 1}))
			wantEvents(t, enabled(w, s), []sim.Event{partition(0), partition(1), partition(0, 1)})
			wantNotEnabled(t, w, s, heal)
			wantNotEnabled(t, w, s, partition(2))       // the highest node's side is named by the other
			wantNotEnabled(t, w, s, partition(0, 1, 2)) // not a cut
			wantNotEnabled(t, w, s, sim.Event{Kind: sim.Partition, Node: 1, Msg: 1})
			cut := apply(t, w, s, partition(1))
			if cut.Partition() != 2 || !cut.Cut(1, 2) || !cut.Cut(0, 1) || cut.Cut(0, 2) || cut.Used().Partitions != 1 {
				t.Fatalf("after partition {1}: side %v, used %+v", cut.Partition(), cut.Used())
			}
			wantEvents(t, enabled(w, cut), []sim.Event{heal})
			wantNotEnabled(t, w, cut, partition(0))
			healed := apply(t, w, cut, heal)
			if healed.Partition() != 0 || healed.Used().Partitions != 1 {
				t.Fatalf("after the heal: side %v, used %+v", healed.Partition(), healed.Used())
			}
			wantEvents(t, enabled(w, healed), nil) // the budget is spent
			if healed.Fingerprint() == s.Fingerprint() || cut.Fingerprint() == s.Fingerprint() || cut.Fingerprint() == healed.Fingerprint() {
				t.Errorf("before, during and after a partition are not three states")
			}
			w, s = newWorld(t, spec(3, tr, nil, sim.Budget{Partitions: 2}))
			s = applyAll(t, w, s, partition(0), heal, partition(0, 1))
			if s.Partition() != 3 || s.Used().Partitions != 2 {
				t.Fatalf("second partition: side %v, used %+v", s.Partition(), s.Used())
			}
			if got := w.Describe(s, heal); got != "heal {0,1} | {2}" {
				t.Errorf("Describe(heal) = %q", got)
			}
		})
	}
	if _, err := sim.NewWorld(spec(sim.MaxPartitionNodes+1, sim.Datagram, nil, sim.Budget{Partitions: 1})); err == nil {
		t.Errorf("a world of %d nodes with partitions was accepted", sim.MaxPartitionNodes+1)
	}
}

// On datagrams, what is in flight across the cut is lost with it, and
// what is sent across while it holds is lost when sent; within a side,
// and after the heal, messages go through.
func TestPartitionDatagrams(t *testing.T) {
	a, b, c := note("a"), note("b"), note("c")
	calls := []sim.Call{
		{To: 0, Call: batch{send{1, a}, send{2, a}}},
		{To: 0, Call: batch{send{1, b}, send{2, b}}},
		{To: 0, Call: batch{send{1, c}, send{2, c}}},
	}
	w, s := newWorld(t, spec(3, sim.Datagram, calls, sim.Budget{Partitions: 1}))
	s = applyAll(t, w, s, app(0, 0), partition(0, 1))
	// 0->2 crossed the cut: lost; 0->1 did not.
	wantEvents(t, enabled(w, s)[:1], []sim.Event{deliver(0, 1, a)})
	if n := len(s.InFlight()); n != 1 {
		t.Fatalf("%d in flight after the cut, want 1", n)
	}
	s = apply(t, w, s, app(0, 1))
	if n := len(w.Last().Sent); n != 2 {
		t.Errorf("Last().Sent has %d messages, want both sent", n)
	}
	if n := len(s.InFlight()); n != 2 {
		t.Fatalf("%d in flight after sends during the cut, want 2 (b to 2 lost)", n)
	}
	s = applyAll(t, w, s, heal, app(0, 2), deliver(0, 2, c))
	wantLog(t, s, 2, "init", `recv 0 "c"`)
	s = applyAll(t, w, s, deliver(0, 1, a), deliver(0, 1, b), deliver(0, 1, c))
	wantLog(t, s, 1, "init", `recv 0 "a"`, `recv 0 "b"`, `recv 0 "c"`)
}

// On streams the cut breaks the connections across it, both ends told;
// a send across it fails, the sender told once a peer in the step, and
// opens nothing; connections within a side stay.
func TestPartitionStreams(t *testing.T) {
	a, b := note("a"), note("b")
	calls := []sim.Call{
		{To: 0, Call: batch{send{1, a}, send{2, a}}},
		{To: 0, Call: batch{send{1, b}, send{2, b}, send{2, b}}},
	}
	w, s := newWorld(t, spec(3, sim.Stream, calls, sim.Budget{Partitions: 1}))
	s = applyAll(t, w, s, app(0, 0), partition(0, 1))
	wantLog(t, s, 0, "init", `app [send{To:1 Msg:"a"} send{To:2 Msg:"a"}]`, "error 2")
	wantLog(t, s, 2, "init", "error 0")
	wantLog(t, s, 1, "init")
	if !strings.Contains(s.Dump(), "connections: 0<->1\n") || !strings.Contains(s.Dump(), "partition: {0,1} | {2}\n") {
		t.Errorf("after the cut:\n%s", s.Dump())
	}
	s = apply(t, w, s, app(0, 1))
	wantLog(t, s, 0, "init", `app [send{To:1 Msg:"a"} send{To:2 Msg:"a"}]`, "error 2",
		`app [send{To:1 Msg:"b"} send{To:2 Msg:"b"} send{To:2 Msg:"b"}]`, "error 2")
	if strings.Contains(s.Dump(), "0<->2") {
		t.Errorf("a send across the cut opened a connection:\n%s", s.Dump())
	}
	s = applyAll(t, w, s, deliver(0, 1, a), deliver(0, 1, b), heal)
	wantLog(t, s, 1, "init", `recv 0 "a"`, `recv 0 "b"`)
}

// Under symmetry a partition is renamed with the nodes: of two members
// alike but for the message one of them got, the state where that one is
// cut off is a renaming of the one where the other got it and is cut
// off, and not of the one where the other is.
func TestPartitionRenamed(t *testing.T) {
	x := note("x")
	sp := spec(3, sim.Datagram, []sim.Call{{To: 2, Call: batch{send{0, x}, send{1, x}}}}, sim.Budget{Partitions: 1})
	sp.Symmetry = [][]sim.NodeID{{0, 1}}
	w, s := newWorld(t, sp)
	s = apply(t, w, s, app(2, 0))
	got0, got1 := apply(t, w, s, deliver(2, 0, x)), apply(t, w, s, deliver(2, 1, x))
	if got0.Key() != got1.Key() {
		t.Fatalf("the members are alike: one got x or the other, the same class")
	}
	cut0, cut1 := apply(t, w, got0, partition(0)), apply(t, w, got1, partition(1))
	other := apply(t, w, got0, partition(1))
	if cut0.Key() != cut1.Key() {
		t.Errorf("the member that got x cut off: two keys, want one class")
	}
	if cut0.Key() == other.Key() || cut0.Fingerprint() == other.Fingerprint() {
		t.Errorf("the member that got x cut off, or the other one: one key")
	}
	// A side that holds a member and the highest node is named by the
	// other side after renaming: cut {1} | {0,2} renamed 0<->1 is {0} |
	// {1,2}, which RenamedKey must hash as the state with that cut.
	swap := []sim.NodeID{1, 0, 2}
	if w.RenamedKey(cut0, swap) != w.RenamedKey(cut1, []sim.NodeID{0, 1, 2}) {
		t.Errorf("RenamedKey does not rename the partition")
	}
	both := apply(t, w, got0, partition(0, 1))
	if w.RenamedKey(both, swap) != w.RenamedKey(apply(t, w, got1, partition(0, 1)), []sim.NodeID{0, 1, 2}) {
		t.Errorf("RenamedKey of a cut of both members")
	}
	healed0, healed1 := apply(t, w, cut0, heal), apply(t, w, cut1, heal)
	if healed0.Key() != healed1.Key() || healed0.Key() == got0.Key() {
		t.Errorf("after the heal: keys %x, %x (before the partition %x)", healed0.Key(), healed1.Key(), got0.Key())
	}
}
