package sim_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/sim"
)

func crash(node sim.NodeID) sim.Event { return sim.Event{Kind: sim.Crash, Node: node} }

// Crashes are enabled for each node up while the budget lasts, in id
// order after the resets; a world without the budget has none, and its
// states hash as before.
func TestCrashEnabledBudget(t *testing.T) {
	for _, tr := range []sim.Transport{sim.Datagram, sim.Stream} {
		t.Run(tr.String(), func(t *testing.T) {
			w, s := newWorld(t, spec(3, tr, nil, sim.Budget{}))
			wantEvents(t, enabled(w, s), nil)
			wantNotEnabled(t, w, s, crash(0))
			wc, sc := newWorld(t, spec(3, tr, nil, sim.Budget{Crashes: 2, Resets: 1}))
			if sc.Fingerprint() != s.Fingerprint() {
				t.Errorf("the crash budget changed the fingerprint of the initial state")
			}
			wantEvents(t, enabled(wc, sc), []sim.Event{reset(0), reset(1), reset(2), crash(0), crash(1), crash(2)})
			s1 := apply(t, wc, sc, crash(1))
			if !s1.Down(1) || s1.Down(0) || s1.DownNodes() != sim.NodeSet(0).Add(1) || s1.Used().Crashes != 1 || s1.Used().Resets != 0 {
				t.Fatalf("after crash 1: down %v, used %+v", s1.DownNodes(), s1.Used())
			}
			if len(wc.Last().Sent) != 0 || len(wc.Last().Logs) != 0 {
				t.Errorf("a crash ran a handler: sent %v, logs %v", wc.Last().Sent, wc.Last().Logs)
			}
			wantLog(t, s1, 1, "init")
			wantEvents(t, enabled(wc, s1), []sim.Event{reset(0), reset(1), reset(2), crash(0), crash(2)})
			wantNotEnabled(t, wc, s1, crash(1))
			s2 := apply(t, wc, s1, crash(2))
			// Budget spent: no crash; resets left: every node's reset.
			wantEvents(t, enabled(wc, s2), []sim.Event{reset(0), reset(1), reset(2)})
			wantNotEnabled(t, wc, s2, crash(0))
			// The reset budget spent by node 0: the restarts are still
			// enabled, and cost none.
			s3 := apply(t, wc, s2, reset(0))
			wantEvents(t, enabled(wc, s3), []sim.Event{reset(1), reset(2)})
			s4 := apply(t, wc, s3, reset(1))
			if s4.Down(1) || !s4.Down(2) || s4.Used().Resets != 1 || s4.Used().Crashes != 2 {
				t.Fatalf("after the restart of 1: down %v, used %+v", s4.DownNodes(), s4.Used())
			}
			wantLog(t, s4, 1, "init")
			wantEvents(t, enabled(wc, s4), []sim.Event{reset(2)})
			wantNotEnabled(t, wc, s4, reset(0))
			s5 := apply(t, wc, s4, reset(2))
			if s5.DownNodes() != 0 || s5.Used().Resets != 1 {
				t.Fatalf("after both restarts: down %v, used %+v", s5.DownNodes(), s5.Used())
			}
			wantEvents(t, enabled(wc, s5), nil)
		})
	}
}

// A node down gets no delivery, timer or driver call, and runs no
// handler; what it sent before is delivered; drops and duplications of
// datagrams to it are enabled as usual; its restart keeps its durable
// fields, clears its state, and lets what waited for it happen.
func TestCrashDatagram(t *testing.T) {
	a, b := note("a"), note("b")
	calls := []sim.Call{{To: 1, Call: note("c")}, {To: 0, Call: note("d")}}
	boot := [][]any{{send{1, a}}, {setPeriodic("p"), setTimer("t"), send{0, b}}}
	w, s := newWorld(t, spec(2, sim.Datagram, calls, sim.Budget{Crashes: 1, Drops: 1, Dups: 1}, boot...))
	s = apply(t, w, s, crash(1))
	if got := s.Timers(1); len(got) != 0 || s.Periodic(1, "p") {
		t.Errorf("a node down keeps timers %v (periodic p: %v)", got, s.Periodic(1, "p"))
	}
	wantLog(t, s, 1, "init")
	// Deliveries: only node 0's; the call to node 1 waits, node 0's is
	// made; drops and duplicates of both datagrams; node 1's restart.
	want := []sim.Event{deliver(1, 0, b), app(0, 1)}
	want = append(want, sortedDeliveries(drop(1, 0, b), drop(0, 1, a))...)
	want = append(want, sortedDeliveries(dup(1, 0, b), dup(0, 1, a))...)
	want = append(want, reset(1))
	wantEvents(t, enabled(w, s), want)
	wantNotEnabled(t, w, s, deliver(0, 1, a))
	wantNotEnabled(t, w, s, timer(1, "t"))
	wantNotEnabled(t, w, s, timer(1, "p"))
	wantNotEnabled(t, w, s, app(1, 0))
	if !strings.Contains(s.Dump(), "down=true") || !strings.Contains(sim.DumpNode(s, 1), "down=true") || strings.Contains(sim.DumpNode(s, 0), "down") {
		t.Errorf("the dump does not say which node is down:\n%s", s.Dump())
	}
	if _, err := w.WithTimer(s, 1, "t"); err == nil {
		t.Errorf("WithTimer gave a node down a timer")
	}
	// What node 1 sent before it crashed arrives.
	d := apply(t, w, s, deliver(1, 0, b))
	wantLog(t, d, 0, "init", `recv 1 "b"`)
	// A drop of a datagram to it is a drop.
	if dr := apply(t, w, s, drop(0, 1, a)); dr.Used().Drops != 1 || len(dr.InFlight()) != 1 {
		t.Errorf("drop to a node down: used %+v, in flight %d", dr.Used(), len(dr.InFlight()))
	}
	// The restart: a fresh node (its log begins again) that kept its
	// durable field, Init run, and what waited for it enabled again.
	r := apply(t, w, s, reset(1))
	wantLog(t, r, 1, "init")
	if !r.Node(1).(*tnode).Up || r.Down(1) || r.Used().Resets != 0 {
		t.Errorf("after the restart: up %v, down %v, used %+v", r.Node(1).(*tnode).Up, r.Down(1), r.Used())
	}
	if !slices.Equal(r.Timers(1), []string{"p", "t"}) {
		t.Errorf("after the restart, timers %v; want Init's [p t]", r.Timers(1))
	}
	r = apply(t, w, r, deliver(0, 1, a))
	r = apply(t, w, r, app(1, 0))
	wantLog(t, r, 1, "init", `recv 0 "a"`, `app "c"`)
}

// On streams a crash loses what is in flight to the node, keeps its
// connections half open, and what it sent stays deliverable. A socket
// error on a connection with an end down is enabled without the budget,
// costs none, and tells only the end up; a send to the node down waits,
// undeliverable, until the connection breaks or the node restarts, whose
// reset breaks its connections and tells the peers up.
func TestCrashStream(t *testing.T) {
	a, b, x, c := note("a"), note("b"), note("x"), note("c")
	calls := []sim.Call{{To: 0, Call: send{1, c}}}
	boot := [][]any{{send{1, a}, send{2, x}}, {send{0, b}}}
	w, s0 := newWorld(t, spec(3, sim.Stream, calls, sim.Budget{Crashes: 1}, boot...))
	s := apply(t, w, s0, crash(1))
	if len(s.InFlight()) != 2 {
		t.Fatalf("after the crash, in flight: %v; want 1->0 b and 0->2 x", s.InFlight())
	}
	want := []sim.Event{deliver(0, 2, x), deliver(1, 0, b), app(0, 0), sockErr(0, 1), reset(1)}
	wantEvents(t, enabled(w, s), want)
	wantNotEnabled(t, w, s, sockErr(0, 2)) // no socket errors budget, both ends up
	wantNotEnabled(t, w, s, deliver(0, 1, a))

	// The free socket error: node 0 told, node 1 not, nothing spent,
	// both directions' messages lost with the connection.
	e := apply(t, w, s, sockErr(0, 1))
	wantLog(t, e, 0, "init", "error 1")
	wantLog(t, e, 1, "init")
	if e.Used().Errors != 0 || len(e.InFlight()) != 1 {
		t.Errorf("after the socket error: used %+v, in flight %v", e.Used(), e.InFlight())
	}
	wantEvents(t, enabled(w, e), []sim.Event{deliver(0, 2, x), app(0, 0), reset(1)})

	// A send to the node down waits, undeliverable.
	q := apply(t, w, e, app(0, 0))
	wantEvents(t, enabled(w, q), []sim.Event{deliver(0, 2, x), sockErr(0, 1), reset(1)})
	// The restart breaks the connection, what waited on it lost, the
	// peer told; the node starts afresh.
	r := apply(t, w, q, reset(1))
	wantLog(t, r, 0, "init", "error 1", `app send{To:1 Msg:"c"}`, "error 1")
	wantLog(t, r, 1, "init")
	if r.Down(1) || r.Used().Resets != 0 || len(r.InFlight()) != 2 { // x, and b that Init sends again
		t.Errorf("after the restart: down %v, used %+v, in flight %v", r.Down(1), r.Used(), r.InFlight())
	}
}

// A reset of a node up with a peer down tells the peer nothing, and a
// partition that breaks a connection with an end down tells the end up
// only. A socket error between two nodes down tells no one.
func TestCrashPeersDown(t *testing.T) {
	a := note("a")
	boot := [][]any{{send{1, a}, send{2, a}}}
	w, s := newWorld(t, spec(3, sim.Stream, nil, sim.Budget{Crashes: 2, Resets: 1, Partitions: 1}, boot...))
	s = apply(t, w, s, crash(1))
	r := apply(t, w, s, reset(0))
	wantLog(t, r, 1, "init")
	wantLog(t, r, 2, "init", "error 0")
	if !r.Down(1) || r.Used().Resets != 1 {
		t.Errorf("a reset of another node: down %v, used %+v", r.DownNodes(), r.Used())
	}
	p := apply(t, w, s, partition(1))
	wantLog(t, p, 0, "init", "error 1")
	wantLog(t, p, 1, "init")
	if !p.Down(1) {
		t.Errorf("a partition brought node 1 up")
	}
	// Both ends down.
	s2 := apply(t, w, s, crash(0))
	n := apply(t, w, s2, sockErr(0, 1))
	wantLog(t, n, 0, "init")
	wantLog(t, n, 1, "init")
	wantLog(t, n, 2, "init")
	m := apply(t, w, n, sockErr(0, 2))
	wantLog(t, m, 2, "init", "error 0")
	if m.Used().Errors != 0 {
		t.Errorf("free socket errors counted: %+v", m.Used())
	}
}

// A node down is a state of its own: two states whose nodes are alike
// but for which one is down differ, and differ from the one with none
// down; with symmetry they are renamings of each other. The restart is
// counted nowhere, the crash is.
func TestCrashFingerprint(t *testing.T) {
	sp := quietSpec(2, sim.Datagram, nil, sim.Budget{Crashes: 2})
	w, s := newWorld(t, sp)
	d0, d1 := apply(t, w, s, crash(0)), apply(t, w, s, crash(1))
	if sim.Dump(d0.Node(0)) != sim.Dump(s.Node(0)) {
		t.Fatalf("a crash changed the node's state")
	}
	if d0.Fingerprint() == s.Fingerprint() || d0.Fingerprint() == d1.Fingerprint() || d0.NodeFingerprint(0) == s.NodeFingerprint(0) {
		t.Errorf("down and up hash alike: %x %x %x", s.Fingerprint(), d0.Fingerprint(), d1.Fingerprint())
	}
	if d0.NodeFingerprint(1) != s.NodeFingerprint(1) {
		t.Errorf("a crash of node 0 changed node 1's fingerprint")
	}
	// Crash and restart: back to the start but for the crash used.
	back := apply(t, w, d0, reset(0))
	if back.Fingerprint() == s.Fingerprint() || back.NodeFingerprint(0) != s.NodeFingerprint(0) {
		t.Errorf("after crash and restart: state %x (start %x), node %x (start %x)", back.Fingerprint(), s.Fingerprint(), back.NodeFingerprint(0), s.NodeFingerprint(0))
	}
	// Two orders of the same crashes: one state.
	ab := applyAll(t, w, s, crash(0), crash(1))
	ba := applyAll(t, w, s, crash(1), crash(0))
	if ab.Fingerprint() != ba.Fingerprint() {
		t.Errorf("crash 0 then 1 and 1 then 0 differ")
	}
	// Symmetry: the two one-down states are one class, not the start's.
	sp.Symmetry = [][]sim.NodeID{{0, 1}}
	ws, ss := newWorld(t, sp)
	e0, e1 := apply(t, ws, ss, crash(0)), apply(t, ws, ss, crash(1))
	if e0.Key() != e1.Key() {
		t.Errorf("renamings differ in key: %x %x", e0.Key(), e1.Key())
	}
	if e0.Key() == ss.Key() || e0.Key() == apply(t, ws, e0, reset(0)).Key() {
		t.Errorf("a state with a node down has the key of one without")
	}
	if ws.RenamedKey(e0, []sim.NodeID{1, 0}) != ws.RenamedKey(e1, []sim.NodeID{0, 1}) {
		t.Errorf("renaming does not carry the down bit with the node")
	}
}

// Walks step states in place (Step, Seal): a crash and a restart there
// make the states Apply makes.
func TestCrashStepSeal(t *testing.T) {
	a := note("a")
	boot := [][]any{{send{1, a}, setTimer("t")}}
	for _, tr := range []sim.Transport{sim.Datagram, sim.Stream} {
		w, s := newWorld(t, spec(2, tr, nil, sim.Budget{Crashes: 1}, boot...))
		want := applyAll(t, w, s, crash(0), deliver(0, 1, a), reset(0))
		own := w.Own(s)
		for _, ev := range []sim.Event{crash(0), deliver(0, 1, a), reset(0)} {
			if err := w.Step(own, ev, nil); err != nil {
				t.Fatalf("%v: Step(%v): %v", tr, ev, err)
			}
		}
		if err := w.Seal(own); err != nil {
			t.Fatal(err)
		}
		if own.Fingerprint() != want.Fingerprint() || own.Dump() != want.Dump() {
			t.Errorf("%v: Step and Apply differ:\n%s\n%s", tr, own.Dump(), want.Dump())
		}
	}
}

// The kind's name, its place in Kinds, its parse and its words.
func TestCrashKind(t *testing.T) {
	if k, err := sim.ParseKind("crash"); err != nil || k != sim.Crash || sim.Crash.String() != "crash" {
		t.Errorf("ParseKind(crash) = %v, %v", k, err)
	}
	if int(sim.Crash) != int(sim.Heal)+1 {
		t.Errorf("crash is numbered %d, not after heal", sim.Crash)
	}
	if !slices.Contains(sim.Kinds(), sim.Crash) || !strings.Contains(sim.KindNames(), "reset, crash, partition") {
		t.Errorf("Kinds %v, names %s", sim.Kinds(), sim.KindNames())
	}
	if got := crash(2).String(); got != "crash 2" {
		t.Errorf("crash(2).String() = %q", got)
	}
	if h := sim.HandlerOf(crash(1), 1); h != "" {
		t.Errorf("HandlerOf(crash) = %q; it runs none", h)
	}
	sp := spec(65, sim.Datagram, nil, sim.Budget{Crashes: 1})
	if _, err := sim.NewWorld(sp); err == nil {
		t.Errorf("crashes with 65 nodes accepted")
	}
}
