package sim_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/sim"
)

func TestInitial(t *testing.T) {
	sp := spec(3, sim.Datagram, nil, sim.Budget{},
		[]any{send{1, note("hi")}, setTimer("t")},
	)
	w, err := sim.NewWorld(sp)
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.Initial()
	if err != nil {
		t.Fatal(err)
	}
	wantLog(t, s, 0, "init")
	wantLog(t, s, 1, "init")
	wantLog(t, s, 2, "init")
	const dump = `node 0: tnode{Log:["init"] PanicOnError:false Up:true} timers=t
node 1: tnode{Log:["init"] PanicOnError:false Up:true}
node 2: tnode{Log:["init"] PanicOnError:false Up:true}
in flight: 0->1 "hi";
`
	if got := s.Dump(); got != dump {
		t.Errorf("Dump:\n%s\nwant\n%s", got, dump)
	}
	if s.N() != 3 || !slices.Equal(s.Timers(0), []string{"t"}) || !s.HasTimer(0, "t") || s.HasTimer(1, "t") {
		t.Errorf("N or timers wrong: %d %v", s.N(), s.Timers(0))
	}
	if got := s.InFlight(); len(got) != 1 || got[0].From != 0 || got[0].To != 1 || got[0].Msg != note("hi") || got[0].FP != sim.Fingerprint(note("hi")) {
		t.Errorf("InFlight = %+v", got)
	}
	if got := w.Last().Sent; len(got) != 1 || got[0].Msg != note("hi") {
		t.Errorf("Last().Sent after Initial = %+v", got)
	}
	wantEvents(t, enabled(w, s), []sim.Event{deliver(0, 1, note("hi")), timer(0, "t")})
	if s.Used() != (sim.Budget{}) {
		t.Errorf("Used = %+v", s.Used())
	}
	// Initial is deterministic.
	s2, err := w.Initial()
	if err != nil {
		t.Fatal(err)
	}
	if s2.Fingerprint() != s.Fingerprint() || s2.Fingerprint() == 0 {
		t.Errorf("Initial fingerprints %016x and %016x", s.Fingerprint(), s2.Fingerprint())
	}
	for i := range sim.NodeID(3) {
		if s.NodeFingerprint(i) != s2.NodeFingerprint(i) {
			t.Errorf("node %d fingerprint differs between two Initial calls", i)
		}
	}
	if s.NodeFingerprint(0) == s.NodeFingerprint(2) {
		t.Errorf("node 0 has a timer node 2 lacks, yet they hash alike")
	}
}

// Choose in a node's first Init gives the system several initial states:
// Starts builds one per combination of values, node 0's first, all 0
// first; InitialFrom builds the one a tape names (under Strict, exactly);
// Initial is the all-0 one whatever the Chooser. Choose in an Init after a
// reset is explored as in any other handler.
func TestChooseInFirstInit(t *testing.T) {
	// Node 0 chooses among 2, node 2 among 3; node 2's second choice (2
	// values) is made only when its first was 1: 2*(1+2+1) = 8 leaves.
	w, err := sim.NewWorld(spec(3, sim.Datagram, nil, sim.Budget{Resets: 1}, []any{choose(2)}, nil, []any{choose(3), dependent(2)}))
	if err != nil {
		t.Fatal(err)
	}
	w.Chooser = func(n int) int { return n - 1 }
	s, err := w.Initial()
	if err != nil {
		t.Fatal(err)
	}
	wantLog(t, s, 0, "init", "chose 0/2")
	wantLog(t, s, 2, "init", "chose 0/3")
	starts, err := w.Starts()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	fps := map[uint64]bool{}
	for _, st := range starts {
		got = append(got, fmt.Sprint(st.Init))
		fps[st.State.Fingerprint()] = true
	}
	want := []string{"[0 0]", "[0 1 0]", "[0 1 1]", "[0 2]", "[1 0]", "[1 1 0]", "[1 1 1]", "[1 2]"}
	if !slices.Equal(got, want) || len(fps) != len(want) {
		t.Fatalf("Starts gave %v (%d distinct states), want %v (all distinct)", got, len(fps), want)
	}
	// InitialFrom rebuilds each, strictly; a tape that does not fit is a
	// clear error, never a panic.
	w.Strict = true
	for _, st := range starts {
		s, err := w.InitialFrom(st.Init)
		if err != nil || s.Fingerprint() != st.State.Fingerprint() || !slices.Equal(w.Last().Choices, st.Init) {
			t.Fatalf("InitialFrom(%v) = %v, %v (choices %v)", st.Init, s, err, w.Last().Choices)
		}
	}
	for tape, msg := range map[string]string{
		"[1 5]":   "event not enabled: choice 1 is 5, outside [0, 3)",
		"[1]":     "event not enabled: the step makes more choices than the trace records",
		"[1 2 0]": "event not enabled: the first Init calls made 2 choices but the trace records 3",
	} {
		var tp []int
		for _, f := range strings.Fields(strings.Trim(tape, "[]")) {
			var v int
			fmt.Sscan(f, &v)
			tp = append(tp, v)
		}
		if s, err := w.InitialFrom(tp); s != nil || err == nil || err.Error() != msg {
			t.Errorf("InitialFrom(%s) = %v, %v; want the error %q", tape, s, err, msg)
		}
	}
	w.Strict = false
	// Past MaxStarts initial states: an error naming the node that
	// chooses most, and the count.
	wide, err := sim.NewWorld(spec(2, sim.Datagram, nil, sim.Budget{}, []any{choose(2)}, []any{choose(100), choose(100)}))
	if err != nil {
		t.Fatal(err)
	}
	const tooMany = "the first Init calls choose among more than 4096 initial states (node 1's Init alone among 10000): " +
		"choose in a later handler (a timer that Init sets), or fewer values"
	if ss, err := wide.Starts(); ss != nil || err == nil || err.Error() != tooMany {
		t.Errorf("Starts = %d states, %v; want the error %q", len(ss), err, tooMany)
	}
	// A panic under some choices ends the list with a *StartError that
	// names them.
	bad, err := sim.NewWorld(spec(1, sim.Datagram, nil, sim.Budget{}, []any{choose(3), panicOn(2)}))
	if err != nil {
		t.Fatal(err)
	}
	ss, err := bad.Starts()
	var se *sim.StartError
	var hp *sim.HandlerPanic
	if len(ss) != 2 || !errors.As(err, &se) || !slices.Equal(se.Init, []int{2}) || !errors.As(err, &hp) || hp.Handler != "Init" {
		t.Errorf("Starts = %d states, %v; want 2 and a panic at [2]", len(ss), err)
	}
	// A handler that runs later chooses from the Chooser.
	w2, s2 := newWorld(t, spec(1, sim.Datagram, []sim.Call{{0, choose(2)}}, sim.Budget{}))
	w2.Chooser = func(n int) int { return n - 1 }
	n := apply(t, w2, s2, app(0, 0))
	wantLog(t, n, 0, "init", "app 2", "chose 1/2")

	// An Init after a reset chooses: each value gives its own state.
	w3, s3 := newWorld(t, spec(2, sim.Datagram, nil, sim.Budget{Resets: 1}, nil, []any{laterChoose(3)}))
	fps = map[uint64]bool{}
	for v := range 3 {
		r := apply(t, w3, s3, reset(1), v)
		wantLog(t, r, 1, "init", fmt.Sprintf("chose %d/3", v))
		if got := w3.Last().Bounds; !slices.Equal(got, []int{3}) {
			t.Errorf("the reset's Init made choices bounded by %v, want [3]", got)
		}
		fps[r.Fingerprint()] = true
	}
	if len(fps) != 3 {
		t.Errorf("the reset's 3 choices give %d states", len(fps))
	}
}

// pinNode is a tiny node whose global state fingerprint is pinned.
type pinNode struct{ N int }

func (p *pinNode) Init(ctx sim.Context) {
	p.N = int(ctx.Self()) * 10
	ctx.Send((ctx.Self()+1)%sim.NodeID(ctx.Nodes()), p.N)
	ctx.SetTimer("tick")
}
func (p *pinNode) Receive(sim.Context, sim.NodeID, sim.Message) {}
func (p *pinNode) Timer(sim.Context, string)                    {}
func (p *pinNode) App(sim.Context, sim.AppCall)                 {}
func (p *pinNode) Error(sim.Context, sim.NodeID)                {}

func TestStateFingerprintPinned(t *testing.T) {
	w, s := newWorld(t, sim.Spec{Nodes: 2, New: func(sim.NodeID) sim.Node { return &pinNode{} }})
	const want = 0xdbdccf3f1059a4d0 // 0x72e420314d84bbd3 before issue 29's mixRest
	if got := s.Fingerprint(); got != want {
		t.Errorf("state fingerprint = %#016x, want %#016x", got, uint64(want))
	}
	s = apply(t, w, s, timer(1, "tick"))
	const want2 = 0x663ca1f9df35f7f4 // 0x8a27bf095d196e03 before mixRest
	if got := s.Fingerprint(); got != want2 {
		t.Errorf("state fingerprint after a step = %#016x, want %#016x", got, uint64(want2))
	}
}

func TestNewWorldValidates(t *testing.T) {
	mk := func(sim.NodeID) sim.Node { return &tnode{} }
	cases := []struct {
		name string
		spec sim.Spec
		err  string
	}{
		{"ok", sim.Spec{Nodes: 1, New: mk}, ""},
		{"no nodes", sim.Spec{Nodes: 0, New: mk}, "a world needs at least 1 node, not 0"},
		{"no New", sim.Spec{Nodes: 2}, "the spec has no New function to build a node"},
		{"many calls", sim.Spec{Nodes: 1, New: mk, Calls: make([]sim.Call, 1000)}, ""},
		{"negative budget", sim.Spec{Nodes: 1, New: mk, Budget: sim.Budget{Drops: -1}}, "failure budgets cannot be negative"},
		{"call to missing node", sim.Spec{Nodes: 2, New: mk, Calls: []sim.Call{{To: 0}, {To: 2}}},
			"driver call 1 goes to node 2, but nodes are 0 to 1"},
		{"call to negative node", sim.Spec{Nodes: 2, New: mk, Calls: []sim.Call{{To: -1}}},
			"driver call 0 goes to node -1, but nodes are 0 to 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := sim.NewWorld(c.spec)
			if c.err == "" {
				if err != nil || w == nil {
					t.Fatalf("NewWorld: %v", err)
				}
				if w.Spec().HandlerTimeout <= 0 {
					t.Errorf("HandlerTimeout default not filled in")
				}
				return
			}
			if err == nil || err.Error() != c.err || w != nil {
				t.Fatalf("NewWorld error = %v, want %q", err, c.err)
			}
		})
	}
}

// sortedDeliveries lists deliveries in the datagram order: by receiver,
// sender, then message fingerprint.
func sortedDeliveries(evs ...sim.Event) []sim.Event {
	slices.SortFunc(evs, func(a, b sim.Event) int {
		switch {
		case a.Node != b.Node:
			return int(a.Node - b.Node)
		case a.Peer != b.Peer:
			return int(a.Peer - b.Peer)
		case a.Msg < b.Msg:
			return -1
		case a.Msg > b.Msg:
			return 1
		}
		return 0
	})
	return evs
}

func TestDatagramAnyMessageMayArrive(t *testing.T) {
	a, b, c := note("a"), note("b"), note("c")
	calls := []sim.Call{{To: 0, Call: batch{send{2, a}, send{2, b}, send{2, a}, send{1, c}, send{0, b}}}}
	w, s0 := newWorld(t, spec(3, sim.Datagram, calls, sim.Budget{}))
	s := apply(t, w, s0, app(0, 0))
	if len(s.InFlight()) != 5 {
		t.Fatalf("in flight: %d, want 5", len(s.InFlight()))
	}
	deliveries := sortedDeliveries(deliver(0, 2, a), deliver(0, 2, b), deliver(0, 1, c), deliver(0, 0, b))
	wantEvents(t, enabled(w, s), deliveries)
	if deliveries[0] != deliver(0, 0, b) || deliveries[1] != deliver(0, 1, c) {
		t.Fatalf("deliveries not ordered by receiver: %s", evList(deliveries))
	}
	// Any of them may be delivered next.
	for _, ev := range deliveries {
		t.Run(ev.String(), func(t *testing.T) {
			n := apply(t, w, s, ev)
			got := logOf(n, ev.Node)
			if want := fmt.Sprintf("recv 0 %s", sim.Dump(w.Last().Msg)); got[len(got)-1] != want || len(got) != len(logOf(s, ev.Node))+1 {
				t.Errorf("log of node %d: %q, want it to end in %q", ev.Node, got, want)
			}
			if w.Last().Msg == nil || sim.Fingerprint(w.Last().Msg) != ev.Msg {
				t.Errorf("Last().Msg = %v", w.Last().Msg)
			}
			if len(n.InFlight()) != 4 {
				t.Errorf("in flight after one delivery: %d", len(n.InFlight()))
			}
			if ev == deliver(0, 2, a) {
				// one copy of a is still in flight
				wantEvents(t, enabled(w, n), sortedDeliveries(deliver(0, 2, a), deliver(0, 2, b), deliver(0, 1, c), deliver(0, 0, b)))
			} else {
				rest := slices.DeleteFunc(slices.Clone(deliveries), func(e sim.Event) bool { return e == ev })
				wantEvents(t, enabled(w, n), rest)
			}
		})
	}
	// Equal messages are delivered once each.
	s = applyAll(t, w, s, deliver(0, 2, a), deliver(0, 2, a))
	wantNotEnabled(t, w, s, deliver(0, 2, a))
	wantLog(t, s, 2, "init", `recv 0 "a"`, `recv 0 "a"`)
	// Wrong sender, receiver or message.
	wantNotEnabled(t, w, s, deliver(1, 2, b))
	wantNotEnabled(t, w, s, deliver(0, 1, b))
	wantNotEnabled(t, w, s, deliver(0, 2, note("zz")))
	wantNotEnabled(t, w, s, deliver(0, 5, b))
}

// A sender is a node with no memory: it only sends what it is told to.
type sender struct{}

func (sender) Init(sim.Context)                             {}
func (sender) Receive(sim.Context, sim.NodeID, sim.Message) {}
func (sender) Timer(sim.Context, string)                    {}
func (sender) App(ctx sim.Context, call sim.AppCall) {
	for _, s := range call.([]send) {
		ctx.Send(s.To, s.Msg)
	}
}
func (sender) Error(sim.Context, sim.NodeID) {}

func TestFingerprintIgnoresSendOrder(t *testing.T) {
	x, y := note("x"), note("y")
	// Two nodes send to a third; the order of the calls must not matter.
	for _, tr := range []sim.Transport{sim.Datagram, sim.Stream} {
		t.Run("two senders "+tr.String(), func(t *testing.T) {
			calls := []sim.Call{{To: 0, Call: []send{{2, x}}}, {To: 1, Call: []send{{2, x}}}, {To: 0, Call: []send{{2, y}}}}
			w, s := newWorld(t, sim.Spec{Nodes: 3, Transport: tr, Calls: calls, New: func(sim.NodeID) sim.Node { return &sender{} }})
			p := applyAll(t, w, s, app(0, 0), app(1, 1), app(0, 2))
			q := applyAll(t, w, s, app(1, 1), app(0, 0), app(0, 2))
			r := applyAll(t, w, s, app(0, 0), app(0, 2), app(1, 1))
			if p.Fingerprint() != q.Fingerprint() || p.Fingerprint() != r.Fingerprint() {
				t.Errorf("fingerprints %016x %016x %016x differ", p.Fingerprint(), q.Fingerprint(), r.Fingerprint())
			}
			if p.Dump() != q.Dump() || p.Dump() != r.Dump() {
				t.Errorf("dumps differ:\n%s\n%s\n%s", p.Dump(), q.Dump(), r.Dump())
			}
			if !reflect.DeepEqual(enabled(w, p), enabled(w, q)) || !reflect.DeepEqual(enabled(w, p), enabled(w, r)) {
				t.Errorf("enabled events differ")
			}
		})
	}
	// One node sends the same messages in different orders.
	run := func(tr sim.Transport, msgs ...sim.Message) *sim.State {
		var sends []send
		for _, m := range msgs {
			sends = append(sends, send{1, m})
		}
		w, s := newWorld(t, sim.Spec{Nodes: 2, Transport: tr, Calls: []sim.Call{{To: 0, Call: sends}},
			New: func(sim.NodeID) sim.Node { return &sender{} }})
		return apply(t, w, s, app(0, 0))
	}
	cases := []struct {
		name string
		tr   sim.Transport
		a, b []sim.Message
		same bool
	}{
		{"datagram xy yx", sim.Datagram, []sim.Message{x, y}, []sim.Message{y, x}, true},
		{"datagram xxy xyx", sim.Datagram, []sim.Message{x, x, y}, []sim.Message{x, y, x}, true},
		{"datagram xxy xyy", sim.Datagram, []sim.Message{x, x, y}, []sim.Message{x, y, y}, false},
		{"datagram x xx", sim.Datagram, []sim.Message{x}, []sim.Message{x, x}, false},
		// a stream keeps order: x then y is not y then x
		{"stream xy yx", sim.Stream, []sim.Message{x, y}, []sim.Message{y, x}, false},
		{"stream xyx xyx", sim.Stream, []sim.Message{x, y, x}, []sim.Message{x, y, x}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, q := run(c.tr, c.a...), run(c.tr, c.b...)
			if got := p.Fingerprint() == q.Fingerprint(); got != c.same {
				t.Errorf("same fingerprint = %v, want %v\n%s\n%s", got, c.same, p.Dump(), q.Dump())
			}
		})
	}
}

func TestDatagramDrops(t *testing.T) {
	a, b := note("a"), note("b")
	calls := []sim.Call{{To: 0, Call: batch{send{1, a}, send{1, b}, send{1, a}}}}
	for budget := 0; budget <= 3; budget++ {
		t.Run(fmt.Sprintf("budget %d", budget), func(t *testing.T) {
			w, s := newWorld(t, spec(2, sim.Datagram, calls, sim.Budget{Drops: budget}))
			s = apply(t, w, s, app(0, 0))
			dels := sortedDeliveries(deliver(0, 1, a), deliver(0, 1, b))
			drops := sortedDeliveries(drop(0, 1, a), drop(0, 1, b))
			if budget == 0 {
				wantEvents(t, enabled(w, s), dels)
				wantNotEnabled(t, w, s, drop(0, 1, a))
				return
			}
			wantEvents(t, enabled(w, s), append(slices.Clone(dels), drops...))
			// Drop as many as the budget allows, a first.
			order := []sim.Event{drop(0, 1, a), drop(0, 1, b), drop(0, 1, a)}
			for i, ev := range order {
				if i == budget {
					// budget spent: no drop is enabled or applies
					for _, e := range enabled(w, s) {
						if e.Kind == sim.Drop {
							t.Errorf("drop %v enabled with the budget spent", e)
						}
					}
					wantNotEnabled(t, w, s, ev)
					break
				}
				s = apply(t, w, s, ev)
				if s.Used().Drops != i+1 {
					t.Errorf("Used().Drops = %d, want %d", s.Used().Drops, i+1)
				}
				if sim.Fingerprint(w.Last().Msg) != ev.Msg {
					t.Errorf("Last().Msg = %v", w.Last().Msg)
				}
				if len(s.InFlight()) != 2-i {
					t.Errorf("in flight after %d drops: %d", i+1, len(s.InFlight()))
				}
			}
			// A dropped message never reaches its receiver.
			wantLog(t, s, 1, "init")
		})
	}
	// Drops are a datagram failure: a stream never drops.
	w, s := newWorld(t, spec(2, sim.Stream, calls, sim.Budget{Drops: 5}))
	s = apply(t, w, s, app(0, 0))
	wantEvents(t, enabled(w, s), []sim.Event{deliver(0, 1, a)})
	wantNotEnabled(t, w, s, drop(0, 1, a))
}

func TestStreamDeliversInOrder(t *testing.T) {
	m := func(i int) note { return note(fmt.Sprintf("m%d", i)) }
	calls := []sim.Call{
		{To: 0, Call: batch{send{1, m(1)}, send{1, m(2)}, send{1, m(2)}, send{1, m(3)}, send{2, m(4)}}},
		{To: 1, Call: send{0, m(5)}},
	}
	w, s := newWorld(t, spec(3, sim.Stream, calls, sim.Budget{}))
	s = apply(t, w, s, app(0, 0))
	// Only the head of each queue, queues ordered by (sender, receiver).
	wantEvents(t, enabled(w, s), []sim.Event{deliver(0, 1, m(1)), deliver(0, 2, m(4)), app(1, 1)})
	wantNotEnabled(t, w, s, deliver(0, 1, m(2)))
	wantNotEnabled(t, w, s, deliver(0, 1, m(3)))
	s = apply(t, w, s, app(1, 1))
	wantEvents(t, enabled(w, s), []sim.Event{deliver(0, 1, m(1)), deliver(0, 2, m(4)), deliver(1, 0, m(5))})

	want := []sim.Event{deliver(0, 1, m(2)), deliver(0, 2, m(4)), deliver(1, 0, m(5))}
	s = apply(t, w, s, deliver(0, 1, m(1)))
	wantEvents(t, enabled(w, s), want)
	s = apply(t, w, s, deliver(0, 1, m(2)))
	wantEvents(t, enabled(w, s), want) // the second, equal m2 is the head now
	s = apply(t, w, s, deliver(0, 1, m(2)))
	wantNotEnabled(t, w, s, deliver(0, 1, m(2)))
	s = applyAll(t, w, s, deliver(0, 1, m(3)), deliver(1, 0, m(5)), deliver(0, 2, m(4)))
	wantLog(t, s, 1, "init", `app send{To:0 Msg:"m5"}`, `recv 0 "m1"`, `recv 0 "m2"`, `recv 0 "m2"`, `recv 0 "m3"`)
	wantLog(t, s, 0, "init", `app [send{To:1 Msg:"m1"} send{To:1 Msg:"m2"} send{To:1 Msg:"m2"} send{To:1 Msg:"m3"} send{To:2 Msg:"m4"}]`, `recv 1 "m5"`)
	wantEvents(t, enabled(w, s), nil)
	// Empty connections stay open.
	if got := s.Dump(); !strings.HasSuffix(got, "connections: 0<->1 0<->2\n") || strings.Contains(got, "in flight") {
		t.Errorf("Dump:\n%s", got)
	}
}

func TestStreamSocketError(t *testing.T) {
	a, b, c, d, e := note("a"), note("b"), note("c"), note("d"), note("e")
	calls := []sim.Call{
		{To: 0, Call: batch{send{1, a}, send{1, b}}},
		{To: 1, Call: send{0, c}},
		{To: 0, Call: send{2, d}},
		{To: 0, Call: send{1, e}},
	}
	for _, errs := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("budget %d", errs), func(t *testing.T) {
			w, s := newWorld(t, spec(3, sim.Stream, calls, sim.Budget{Errors: errs}))
			w.Record = true
			s = applyAll(t, w, s, app(0, 0), app(1, 1), app(0, 2))
			heads := []sim.Event{deliver(0, 1, a), deliver(0, 2, d), deliver(1, 0, c), app(0, 3)}
			if errs == 0 {
				wantEvents(t, enabled(w, s), heads)
				wantNotEnabled(t, w, s, sockErr(0, 1))
				return
			}
			wantEvents(t, enabled(w, s), append(slices.Clone(heads), sockErr(0, 1), sockErr(0, 2)))
			before := s
			s = apply(t, w, s, sockErr(0, 1))
			// both directions of 0<->1 are lost, 0->2 is not
			if got := s.InFlight(); len(got) != 1 || got[0].Msg != d {
				t.Errorf("in flight after the error: %+v", got)
			}
			wantLog(t, s, 0, "init", `app [send{To:1 Msg:"a"} send{To:1 Msg:"b"}]`, `app send{To:2 Msg:"d"}`, "error 1")
			wantLog(t, s, 1, "init", `app send{To:0 Msg:"c"}`, "error 0")
			wantLog(t, s, 2, "init")
			if got := w.Last().Logs; !slices.Equal(got, []string{"0: error from 1", "1: error from 0"}) {
				t.Errorf("Last().Logs = %q", got)
			}
			if s.Used() != (sim.Budget{Errors: 1}) {
				t.Errorf("Used = %+v", s.Used())
			}
			if got := s.Dump(); !strings.HasSuffix(got, "in flight: 0->2 \"d\";\nconnections: 0<->2\n") {
				t.Errorf("Dump:\n%s", got)
			}
			wantNotEnabled(t, w, s, deliver(0, 1, a))
			wantNotEnabled(t, w, s, deliver(1, 0, c))
			wantNotEnabled(t, w, s, sockErr(0, 1)) // no such connection now
			if errs == 1 {
				wantEvents(t, enabled(w, s), []sim.Event{deliver(0, 2, d), app(0, 3)})
				wantNotEnabled(t, w, s, sockErr(0, 2))
			} else {
				wantEvents(t, enabled(w, s), []sim.Event{deliver(0, 2, d), app(0, 3), sockErr(0, 2)})
			}
			// Sending again reopens the connection.
			s = apply(t, w, s, app(0, 3))
			want := []sim.Event{deliver(0, 1, e), deliver(0, 2, d)}
			if errs == 2 {
				want = append(want, sockErr(0, 1), sockErr(0, 2))
			}
			wantEvents(t, enabled(w, s), want)
			s = apply(t, w, s, deliver(0, 1, e))
			wantLog(t, s, 1, "init", `app send{To:0 Msg:"c"}`, "error 0", `recv 0 "e"`)
			if errs == 2 {
				s = apply(t, w, s, sockErr(0, 1))
				if s.Used().Errors != 2 {
					t.Errorf("Used().Errors = %d", s.Used().Errors)
				}
				wantEvents(t, enabled(w, s), []sim.Event{deliver(0, 2, d)})
				wantLog(t, s, 0, "init", `app [send{To:1 Msg:"a"} send{To:1 Msg:"b"}]`, `app send{To:2 Msg:"d"}`, "error 1",
					`app send{To:1 Msg:"e"}`, "error 1")
			}
			// The state before the error is untouched.
			if len(before.InFlight()) != 4 || len(logOf(before, 0)) != 3 {
				t.Errorf("socket error changed its input state:\n%s", before.Dump())
			}
		})
	}
	// Socket errors are a stream failure.
	w, s := newWorld(t, spec(2, sim.Datagram, []sim.Call{{To: 0, Call: send{1, a}}}, sim.Budget{Errors: 3}))
	s = apply(t, w, s, app(0, 0))
	wantEvents(t, enabled(w, s), []sim.Event{deliver(0, 1, a)})
	wantNotEnabled(t, w, s, sockErr(0, 1))
}

func TestTimers(t *testing.T) {
	calls := []sim.Call{
		{To: 0, Call: cancelTimer("b")},
		{To: 0, Call: cancelTimer("nope")},
		{To: 0, Call: batch{setTimer("a"), setTimer("a")}},
	}
	w, s := newWorld(t, spec(2, sim.Datagram, calls, sim.Budget{},
		[]any{setTimer("b"), setTimer("a"), setTimer("a")}, []any{setTimer("a")}))
	if !slices.Equal(s.Timers(0), []string{"a", "b"}) {
		t.Fatalf("Timers(0) = %q, want [a b]: set twice is one timer, sorted", s.Timers(0))
	}
	wantEvents(t, enabled(w, s), []sim.Event{timer(0, "a"), timer(0, "b"), timer(1, "a"), app(0, 0)})

	// A timer stays enabled until it fires.
	s1 := apply(t, w, s, timer(0, "a"))
	wantLog(t, s1, 0, "init", "timer a")
	if !slices.Equal(s1.Timers(0), []string{"b"}) || s1.HasTimer(0, "a") || !s1.HasTimer(1, "a") {
		t.Errorf("after firing: %q %q", s1.Timers(0), s1.Timers(1))
	}
	wantEvents(t, enabled(w, s1), []sim.Event{timer(0, "b"), timer(1, "a"), app(0, 0)})
	wantNotEnabled(t, w, s1, timer(0, "a"))
	wantNotEnabled(t, w, s1, timer(0, "c"))
	wantNotEnabled(t, w, s1, timer(1, "b"))

	// Or until it is cancelled; cancelling a timer that is not set does nothing.
	s2 := apply(t, w, s1, app(0, 0))
	wantEvents(t, enabled(w, s2), []sim.Event{timer(1, "a"), app(0, 1)})
	wantNotEnabled(t, w, s2, timer(0, "b"))
	s3 := apply(t, w, s2, app(0, 1))
	if len(s3.Timers(0)) != 0 {
		t.Errorf("Timers(0) = %q", s3.Timers(0))
	}
	// Setting it again (twice) makes one timer.
	s4 := apply(t, w, s3, app(0, 2))
	wantEvents(t, enabled(w, s4), []sim.Event{timer(0, "a"), timer(1, "a")})
	if got := s4.Dump(); !strings.Contains(got, "node 0: tnode{") || !strings.Contains(got, " timers=a\nnode 1:") {
		t.Errorf("Dump:\n%s", got)
	}
	// The inputs keep their timers.
	if !slices.Equal(s.Timers(0), []string{"a", "b"}) || !slices.Equal(s1.Timers(0), []string{"b"}) || len(s3.Timers(0)) != 0 {
		t.Errorf("Apply changed the timers of an earlier state")
	}
}

// A periodic timer stays set when it fires, until cancelled or reset; a
// timer set with SetTimer fires once.
func TestPeriodicTimers(t *testing.T) {
	calls := []sim.Call{
		{To: 0, Call: batch{setTimer("p"), setPeriodic("o")}}, // p stays periodic, o becomes periodic
		{To: 0, Call: cancelTimer("p")},
	}
	w, s := newWorld(t, spec(2, sim.Datagram, calls, sim.Budget{Resets: 1}, []any{setPeriodic("p"), setTimer("o")}))
	if !s.Periodic(0, "p") || s.Periodic(0, "o") || !s.HasTimer(0, "o") {
		t.Fatalf("after Init: p periodic %v, o periodic %v", s.Periodic(0, "p"), s.Periodic(0, "o"))
	}
	if got := sim.DumpNode(s, 0); !strings.HasSuffix(got, " timers=o,p(periodic)") {
		t.Errorf("DumpNode = %s", got)
	}
	// p fires again and again; o once.
	s1 := apply(t, w, s, timer(0, "p"))
	s2 := apply(t, w, s1, timer(0, "p"))
	wantLog(t, s2, 0, "init", "timer p", "timer p")
	if !s2.Periodic(0, "p") || !slices.Equal(s2.Timers(0), []string{"o", "p"}) {
		t.Errorf("after firing twice: timers %q, p periodic %v", s2.Timers(0), s2.Periodic(0, "p"))
	}
	s3 := apply(t, w, s2, timer(0, "o"))
	if !slices.Equal(s3.Timers(0), []string{"p"}) {
		t.Errorf("a timer set once is still set after it fired: %q", s3.Timers(0))
	}
	wantEvents(t, enabled(w, s3), []sim.Event{timer(0, "p"), app(0, 0), reset(0), reset(1)})
	// Walks change states in place: the same states.
	own := w.Own(s)
	for _, ev := range []sim.Event{timer(0, "p"), timer(0, "p"), timer(0, "o")} {
		if err := w.Step(own, ev, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Seal(own); err != nil || own.Fingerprint() != s3.Fingerprint() {
		t.Errorf("Step and Apply differ: %v\n%s\n%s", err, own.Dump(), s3.Dump())
	}
	// SetTimer leaves a periodic timer periodic; SetPeriodic makes a set
	// timer periodic.
	s4 := apply(t, w, s, app(0, 0))
	if !s4.Periodic(0, "p") || !s4.Periodic(0, "o") {
		t.Errorf("after SetTimer(p), SetPeriodic(o): p periodic %v, o periodic %v", s4.Periodic(0, "p"), s4.Periodic(0, "o"))
	}
	// Cancelling stops it.
	s5 := apply(t, w, s4, app(0, 1))
	if s5.HasTimer(0, "p") || s5.Periodic(0, "p") || !s5.Periodic(0, "o") {
		t.Errorf("after CancelTimer(p): timers %q", s5.Timers(0))
	}
	wantNotEnabled(t, w, s5, timer(0, "p"))
	// A reset loses it: Init sets the timers again as at the start, p
	// periodic and o once.
	r := apply(t, w, s5, reset(0))
	if !r.Periodic(0, "p") || r.Periodic(0, "o") || !r.HasTimer(0, "o") {
		t.Errorf("after a reset and Init: p periodic %v, o periodic %v, want true, false", r.Periodic(0, "p"), r.Periodic(0, "o"))
	}
	// The earlier states are unchanged.
	if !s.Periodic(0, "p") || s.Periodic(0, "o") || !s4.Periodic(0, "p") || !s4.Periodic(0, "o") || !s2.Periodic(0, "p") {
		t.Errorf("a step changed the periodic timers of an earlier state")
	}
	// Local steps keep it too.
	l := w.LocalOf(s, 0)
	if !slices.Equal(l.Periodic, []string{"p"}) {
		t.Errorf("LocalOf: periodic %q", l.Periodic)
	}
	l1, err := w.ApplyLocal(0, l, timer(0, "p"), nil, nil)
	if err != nil || !slices.Equal(l1.Timers, []string{"o", "p"}) || !slices.Equal(l1.Periodic, []string{"p"}) || l1.FP != w.LocalOf(s1, 0).FP {
		t.Errorf("ApplyLocal(timer p) = %+v, %v", l1, err)
	}
}

// Whether a timer is periodic is part of the state.
func TestPeriodicInFingerprint(t *testing.T) {
	run := func(c batch) *sim.State {
		w, s := newWorld(t, quietSpec(1, sim.Datagram, []sim.Call{{To: 0, Call: c}}, sim.Budget{}))
		return apply(t, w, s, app(0, 0))
	}
	once, periodic := run(batch{setTimer("t")}), run(batch{setPeriodic("t")})
	if once.NodeFingerprint(0) == periodic.NodeFingerprint(0) {
		t.Errorf("a timer set once and a periodic one hash alike")
	}
	if again := run(batch{setPeriodic("t"), setTimer("t"), setPeriodic("t")}); again.Fingerprint() != periodic.Fingerprint() {
		t.Errorf("setting a periodic timer again changes the state")
	}
	if none := run(batch{setPeriodic("t"), cancelTimer("t")}); none.Fingerprint() != run(batch{}).Fingerprint() {
		t.Errorf("a cancelled periodic timer leaves a trace in the state")
	}
}

func TestTimersInFingerprint(t *testing.T) {
	calls := []sim.Call{{To: 0, Call: setTimer("t")}, {To: 0, Call: cancelTimer("t")}}
	w, s0 := newWorld(t, quietSpec(1, sim.Datagram, calls, sim.Budget{}))
	s1 := apply(t, w, s0, app(0, 0))
	s2 := apply(t, w, s1, app(0, 1))
	if s1.NodeFingerprint(0) == s0.NodeFingerprint(0) || s1.Fingerprint() == s0.Fingerprint() {
		t.Errorf("a timer does not change the fingerprint")
	}
	if s2.NodeFingerprint(0) != s0.NodeFingerprint(0) {
		t.Errorf("set then cancelled timer: node fingerprint %016x, want %016x", s2.NodeFingerprint(0), s0.NodeFingerprint(0))
	}
	// The driver's progress is part of the global state.
	if s2.Fingerprint() == s0.Fingerprint() {
		t.Errorf("states with different calls made hash alike")
	}
	// The order timers were set in does not matter.
	run := func(c batch) *sim.State {
		w, s := newWorld(t, quietSpec(1, sim.Datagram, []sim.Call{{To: 0, Call: c}}, sim.Budget{}))
		return apply(t, w, s, app(0, 0))
	}
	p := run(batch{setTimer("x"), setTimer("y"), setTimer("z")})
	q := run(batch{setTimer("z"), setTimer("x"), setTimer("y"), setTimer("x")})
	r := run(batch{setTimer("x"), setTimer("y")})
	if p.Fingerprint() != q.Fingerprint() {
		t.Errorf("timer set order changes the fingerprint")
	}
	if p.Fingerprint() == r.Fingerprint() {
		t.Errorf("a missing timer does not change the fingerprint")
	}
}

// A driver may list more than 64 calls: each is made once, in order per
// node, and a made call changes the fingerprint, past the first 64 too.
func TestManyAppCalls(t *testing.T) {
	const n = 150 // three words of call bits
	var calls []sim.Call
	for i := range n {
		calls = append(calls, sim.Call{To: sim.NodeID(i % 2), Call: i})
	}
	w, s := newWorld(t, quietSpec(2, sim.Datagram, calls, sim.Budget{}))
	states := []*sim.State{s}
	seen := map[uint64]bool{s.Fingerprint(): true}
	own := w.Own(s)
	for i := range n {
		// Node 0 makes its calls first, then node 1 (all of them past 64
		// for node 1), so the pending ones are not in call order.
		c := 2 * i
		if i >= n/2 {
			c = 2*(i-n/2) + 1
		}
		evs := enabled(w, s)
		var want []sim.Event // listed by call index
		switch {
		case c == 0:
			want = append(want, app(0, 0), app(1, 1))
		case c%2 == 0:
			want = append(want, app(1, 1), app(0, c))
		default:
			want = append(want, app(1, c))
		}
		wantEvents(t, evs, want)
		s = apply(t, w, s, app(sim.NodeID(c%2), c))
		if err := w.Step(own, app(sim.NodeID(c%2), c), nil); err != nil {
			t.Fatalf("Step call %d: %v", c, err)
		}
		if err := w.Seal(own); err != nil {
			t.Fatal(err)
		}
		if own.Fingerprint() != s.Fingerprint() {
			t.Fatalf("after call %d, Step and Apply give different fingerprints", c)
		}
		if seen[s.Fingerprint()] {
			t.Fatalf("after call %d the fingerprint repeats an earlier state's", c)
		}
		seen[s.Fingerprint()] = true
		states = append(states, s)
		if got := w.LocalOf(s, sim.NodeID(c%2)).Calls; got != c/2+1 {
			t.Fatalf("after call %d node %d has made %d calls, want %d", c, c%2, got, c/2+1)
		}
	}
	if evs := enabled(w, s); len(evs) != 0 {
		t.Errorf("after every call, enabled %v", evs)
	}
	// Each state knows exactly the calls made on the way to it: the
	// earlier states are not changed by later steps.
	for k, st := range states {
		made := 0
		for i := range n {
			if st.CallMade(i) {
				made++
			}
		}
		if made != k {
			t.Errorf("state %d has %d calls made, want %d", k, made, k)
		}
	}
	if !s.CallMade(149) || states[149].CallMade(149) || s.CallMade(150) {
		t.Errorf("CallMade(149) wrong, or CallMade(150) is true")
	}
}

func TestAppCalls(t *testing.T) {
	calls := []sim.Call{{0, "a"}, {1, "b"}, {0, "c"}, {2, "d"}, {1, "e"}}
	w, s := newWorld(t, spec(3, sim.Datagram, calls, sim.Budget{}))
	wantEvents(t, enabled(w, s), []sim.Event{app(0, 0), app(1, 1), app(2, 3)})
	wantNotEnabled(t, w, s, app(0, 2)) // not node 0's first call
	wantNotEnabled(t, w, s, app(1, 0)) // call 0 is for node 0
	wantNotEnabled(t, w, s, app(0, 5)) // no such call
	wantNotEnabled(t, w, s, app(0, -1))

	s1 := apply(t, w, s, app(1, 1))
	// listed by call index
	wantEvents(t, enabled(w, s1), []sim.Event{app(0, 0), app(2, 3), app(1, 4)})
	s2 := apply(t, w, s1, app(0, 0))
	wantEvents(t, enabled(w, s2), []sim.Event{app(0, 2), app(2, 3), app(1, 4)})
	wantNotEnabled(t, w, s2, app(0, 0)) // each call once
	if !s2.CallMade(0) || !s2.CallMade(1) || s2.CallMade(2) || s.CallMade(0) || s1.CallMade(0) {
		t.Errorf("CallMade wrong")
	}

	// Enumerate every order: calls to one node keep their order, calls to
	// different nodes interleave, each call is made once.
	seen := map[uint64]bool{}
	var finals []uint64
	var orders [][]int
	var walk func(s *sim.State, order []int)
	walk = func(s *sim.State, order []int) {
		seen[s.Fingerprint()] = true
		evs := enabled(w, s)
		if len(evs) == 0 {
			orders = append(orders, slices.Clone(order))
			finals = append(finals, s.Fingerprint())
			for i := range calls {
				if !s.CallMade(i) {
					t.Errorf("order %v: call %d not made", order, i)
				}
			}
			return
		}
		for _, ev := range evs {
			if ev.Kind != sim.App {
				t.Fatalf("unexpected event %v", ev)
			}
			walk(apply(t, w, s, ev), append(order, ev.Call))
		}
	}
	walk(s, nil)
	// 5!/(2!·2!·1!) orders, through 3·3·2 states
	if len(orders) != 30 || len(seen) != 18 {
		t.Errorf("%d orders through %d states, want 30 through 18", len(orders), len(seen))
	}
	for _, o := range orders {
		pos := make([]int, len(calls))
		for i, c := range o {
			pos[c] = i
		}
		if pos[0] > pos[2] || pos[1] > pos[4] || len(o) != 5 {
			t.Errorf("order %v breaks a node's call order", o)
		}
	}
	for _, f := range finals {
		if f != finals[0] {
			t.Errorf("final states differ")
		}
	}
	var end *sim.State = s
	for _, c := range orders[len(orders)-1] {
		end = apply(t, w, end, app(calls[c].To, c))
	}
	wantLog(t, end, 0, "init", `app "a"`, `app "c"`)
	wantLog(t, end, 1, "init", `app "b"`, `app "e"`)
	wantLog(t, end, 2, "init", `app "d"`)
}

func TestResetDatagram(t *testing.T) {
	x := note("x")
	calls := []sim.Call{{To: 0, Call: batch{send{1, x}, setTimer("u")}}, {To: 0, Call: "later"}}
	for _, budget := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("budget %d", budget), func(t *testing.T) {
			w, s := newWorld(t, spec(2, sim.Datagram, calls, sim.Budget{Resets: budget}, []any{setTimer("t")}))
			s = apply(t, w, s, app(0, 0))
			base := []sim.Event{deliver(0, 1, x), timer(0, "t"), timer(0, "u"), app(0, 1)}
			if budget == 0 {
				wantEvents(t, enabled(w, s), base)
				wantNotEnabled(t, w, s, reset(0))
				return
			}
			wantEvents(t, enabled(w, s), append(slices.Clone(base), reset(0), reset(1)))
			r := apply(t, w, s, reset(0))
			// state and timers lost, Init ran again (and set t again)
			wantLog(t, r, 0, "init")
			if !slices.Equal(r.Timers(0), []string{"t"}) {
				t.Errorf("timers after reset: %q", r.Timers(0))
			}
			if r.Used() != (sim.Budget{Resets: 1}) {
				t.Errorf("Used = %+v", r.Used())
			}
			// a datagram already sent is still in flight; the driver's
			// progress is not the node's
			if len(r.InFlight()) != 1 || !r.CallMade(0) {
				t.Errorf("in flight %d, call 0 made %v", len(r.InFlight()), r.CallMade(0))
			}
			// A reset node is a fresh node: the same as the initial one, but
			// for the calls made and the budget used.
			s0, _ := w.Initial()
			if r.NodeFingerprint(0) != s0.NodeFingerprint(0) {
				t.Errorf("reset node differs from a fresh one:\n%s\n%s", sim.DumpNode(r, 0), sim.DumpNode(s0, 0))
			}
			if budget == 1 {
				wantEvents(t, enabled(w, r), []sim.Event{deliver(0, 1, x), timer(0, "t"), app(0, 1)})
				wantNotEnabled(t, w, r, reset(1))
				wantNotEnabled(t, w, r, reset(0))
				return
			}
			wantEvents(t, enabled(w, r), []sim.Event{deliver(0, 1, x), timer(0, "t"), app(0, 1), reset(0), reset(1)})
			r = apply(t, w, r, reset(1))
			if r.Used().Resets != 2 {
				t.Errorf("Used().Resets = %d", r.Used().Resets)
			}
			wantNotEnabled(t, w, r, reset(0))
			// two resets of the same node
			q := applyAll(t, w, s, reset(0), reset(0))
			if q.Used().Resets != 2 || q.NodeFingerprint(0) != s0.NodeFingerprint(0) {
				t.Errorf("reset twice: %+v\n%s", q.Used(), q.Dump())
			}
		})
	}
}

func TestResetStream(t *testing.T) {
	a, b, c := note("a"), note("b"), note("c")
	calls := []sim.Call{{To: 0, Call: send{1, a}}, {To: 2, Call: send{0, b}}, {To: 1, Call: send{2, c}}, {To: 0, Call: setTimer("u")}}
	w, s := newWorld(t, spec(3, sim.Stream, calls, sim.Budget{Resets: 1, Errors: 1}))
	w.Record = true
	s = applyAll(t, w, s, app(0, 0), app(2, 1), app(1, 2), app(0, 3))
	if got := s.Dump(); !strings.HasSuffix(got, "connections: 0<->1 0<->2 1<->2\n") {
		t.Fatalf("Dump:\n%s", got)
	}
	r := apply(t, w, s, reset(0))
	// the peers heard of it before the node restarted
	if got := w.Last().Logs; !slices.Equal(got, []string{"1: error from 0", "2: error from 0", "0: init"}) {
		t.Errorf("Last().Logs = %q", got)
	}
	if got := w.Last().Errors; got != 2 {
		t.Errorf("Last().Errors = %d, want the 2 peers told", got)
	}
	wantLog(t, r, 0, "init")
	wantLog(t, r, 1, "init", `app send{To:2 Msg:"c"}`, "error 0")
	wantLog(t, r, 2, "init", `app send{To:0 Msg:"b"}`, "error 0")
	if len(r.Timers(0)) != 0 {
		t.Errorf("timers survived the reset: %q", r.Timers(0))
	}
	// only 1<->2 and its message remain
	if got := r.InFlight(); len(got) != 1 || got[0].Msg != c {
		t.Errorf("in flight: %+v", got)
	}
	if got := r.Dump(); !strings.HasSuffix(got, "in flight: 1->2 \"c\";\nconnections: 1<->2\n") {
		t.Errorf("Dump:\n%s", got)
	}
	// a reset spends a reset, not a socket error
	if r.Used() != (sim.Budget{Resets: 1}) {
		t.Errorf("Used = %+v", r.Used())
	}
	wantEvents(t, enabled(w, r), []sim.Event{deliver(1, 2, c), sockErr(1, 2)})
	// A node with no connection hears nothing.
	w2, s2 := newWorld(t, spec(2, sim.Stream, nil, sim.Budget{Resets: 1}))
	w2.Record = true
	r2 := apply(t, w2, s2, reset(1))
	wantLog(t, r2, 0, "init")
	if got := w2.Last().Logs; !slices.Equal(got, []string{"1: init"}) {
		t.Errorf("Last().Logs = %q", got)
	}
	if got := w2.Last().Errors; got != 0 {
		t.Errorf("Last().Errors = %d, want none", got)
	}
}

func TestRecord(t *testing.T) {
	calls := []sim.Call{{To: 0, Call: send{1, note("n")}}}
	w, s := newWorld(t, spec(2, sim.Datagram, calls, sim.Budget{}))
	s = apply(t, w, s, app(0, 0))
	if got := w.Last(); got.Event != app(0, 0) || len(got.Sent) != 1 || got.Sent[0].Msg != note("n") || got.Sent[0].To != 1 {
		t.Errorf("Last = %+v", got)
	}
	if got := sim.DescribeSent(w.Last().Sent); got != `"n" 0->1` {
		t.Errorf("DescribeSent = %s", got)
	}
	if got := w.Describe(s, deliver(0, 1, note("n"))); got != `deliver "n" 0->1` {
		t.Errorf("Describe = %s", got)
	}
	if got := w.Describe(s, app(0, 0)); got != `app send{To:1 Msg:"n"} at 0` {
		t.Errorf("Describe = %s", got)
	}
	apply(t, w, s, deliver(0, 1, note("n")))
	if len(w.Last().Logs) != 0 {
		t.Errorf("Logs kept without Record: %q", w.Last().Logs)
	}
	w.Record = true
	apply(t, w, s, deliver(0, 1, note("n")))
	if got := w.Last().Logs; !slices.Equal(got, []string{`1: got "n" from 0`}) {
		t.Errorf("Logs = %q", got)
	}
}

func TestChoose(t *testing.T) {
	calls := []sim.Call{{To: 0, Call: batch{choose(3), choose(2), choose(4)}}}
	last := func(n int) int { return n - 1 }
	cases := []struct {
		name    string
		tape    []int
		chooser func(int) int
		strict  bool
		want    []int // nil: an error
	}{
		{"full tape", []int{2, 1, 3}, nil, false, []int{2, 1, 3}},
		{"no tape", nil, nil, false, []int{0, 0, 0}},
		{"short tape then zeros", []int{2}, nil, false, []int{2, 0, 0}},
		{"short tape then chooser", []int{1}, last, false, []int{1, 1, 3}},
		{"chooser only", nil, last, false, []int{2, 1, 3}},
		{"tape wins over chooser", []int{0, 0, 0}, last, false, []int{0, 0, 0}},
		{"long tape", []int{1, 1, 1, 1}, nil, false, []int{1, 1, 1}},
		{"value out of range", []int{3}, nil, false, nil},
		{"negative value", []int{0, -1}, nil, false, nil},
		{"strict exact", []int{2, 1, 3}, nil, true, []int{2, 1, 3}},
		{"strict runs out", []int{2, 1}, nil, true, nil},
		{"strict runs out with chooser", []int{2, 1}, last, true, nil},
		{"strict left over", []int{2, 1, 3, 0}, nil, true, nil},
		{"strict empty", nil, nil, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, s := newWorld(t, spec(1, sim.Datagram, calls, sim.Budget{}))
			w.Chooser, w.Strict = c.chooser, c.strict
			fp := s.Fingerprint()
			n, err := w.Apply(s, app(0, 0), c.tape)
			if c.want == nil {
				if !errors.Is(err, sim.ErrNotEnabled) || n != nil {
					t.Fatalf("Apply = %v, %v; want a tape error", n, err)
				}
				if s.Fingerprint() != fp || len(logOf(s, 0)) != 1 {
					t.Errorf("a failed Apply changed its input")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := w.Last().Choices; !slices.Equal(got, c.want) {
				t.Errorf("Choices = %v, want %v", got, c.want)
			}
			if got := w.Last().Bounds; !slices.Equal(got, []int{3, 2, 4}) {
				t.Errorf("Bounds = %v", got)
			}
			want := []string{"init", `app [3 2 4]`}
			for i, v := range c.want {
				want = append(want, fmt.Sprintf("chose %d/%d", v, []int{3, 2, 4}[i]))
			}
			wantLog(t, n, 0, want...)
		})
	}
}

func TestNextTape(t *testing.T) {
	// The odometer over bounds [2 3], as the search drives it: apply a tape,
	// steps past its end choose 0, then ask for the next tape.
	bounds := []int{2, 3}
	var tapes, choices [][]int
	var tape, buf []int
	for range 100 {
		tapes = append(tapes, slices.Clone(tape))
		ch := append(slices.Clone(tape), make([]int, len(bounds)-len(tape))...)
		choices = append(choices, ch)
		var ok bool
		buf, ok = sim.NextTape(ch, bounds, buf)
		if !ok {
			if len(buf) != 0 {
				t.Errorf("NextTape returned %v with false", buf)
			}
			break
		}
		tape = slices.Clone(buf)
	}
	wantTapes := [][]int{{}, {0, 1}, {0, 2}, {1}, {1, 1}, {1, 2}}
	wantChoices := [][]int{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}}
	if fmt.Sprint(tapes) != fmt.Sprint(wantTapes) {
		t.Errorf("tapes %v, want %v", tapes, wantTapes)
	}
	if !reflect.DeepEqual(choices, wantChoices) {
		t.Errorf("choices %v, want %v", choices, wantChoices)
	}

	// The same odometer through World.Apply.
	w, s := newWorld(t, spec(1, sim.Datagram, []sim.Call{{To: 0, Call: batch{choose(2), choose(3)}}}, sim.Budget{}))
	var got [][]int
	fps := map[uint64]bool{}
	tape = nil
	for range 100 {
		n := apply(t, w, s, app(0, 0), tape...)
		got = append(got, slices.Clone(w.Last().Choices))
		fps[n.Fingerprint()] = true
		next, ok := sim.NextTape(w.Last().Choices, w.Last().Bounds, nil)
		if !ok {
			break
		}
		tape = next
	}
	if !reflect.DeepEqual(got, wantChoices) || len(fps) != 6 {
		t.Errorf("choices through Apply %v (%d states), want %v (6 states)", got, len(fps), wantChoices)
	}

	cases := []struct {
		choices, bounds, want []int
		ok                    bool
	}{
		{nil, nil, nil, false},
		{[]int{0}, []int{1}, nil, false},
		{[]int{0, 0}, []int{1, 1}, nil, false},
		{[]int{0, 0}, []int{1, 2}, []int{0, 1}, true},
		{[]int{1, 2}, []int{2, 3}, nil, false},
		{[]int{0, 4, 2}, []int{2, 5, 3}, []int{1}, true},
		{[]int{3, 0, 0}, []int{5, 1, 1}, []int{4}, true},
	}
	for _, c := range cases {
		buf := make([]int, 0, 8)
		next, ok := sim.NextTape(c.choices, c.bounds, buf)
		if ok != c.ok || !slices.Equal(next, c.want) {
			t.Errorf("NextTape(%v, %v) = %v, %v; want %v, %v", c.choices, c.bounds, next, ok, c.want, c.ok)
		}
		if ok && &next[0] != &buf[:1][0] {
			t.Errorf("NextTape did not reuse buf")
		}
	}
}

// replaySpec is a world with every kind of event and choices in handlers.
func replaySpec(tr sim.Transport) sim.Spec {
	fwd := func(to sim.NodeID, m string) batch { return batch{choose(3), send{to, note(m)}} }
	calls := []sim.Call{
		{To: 0, Call: batch{send{1, fwd(2, "p")}, send{2, note("q")}, setTimer("t")}},
		{To: 1, Call: batch{choose(2), send{0, fwd(1, "r")}}},
		{To: 2, Call: batch{send{0, note("s")}, send{1, fwd(0, "v")}, cancelTimer("w")}},
		{To: 0, Call: batch{choose(4), send{2, note("q")}}},
	}
	return spec(3, tr, calls, sim.Budget{Resets: 1, Drops: 2, Errors: 1}, []any{setTimer("w")}, nil, []any{setTimer("w"), laterChoose(2)})
}

// randomPath walks steps events from the initial state, choosing events and
// choices with a seeded source, and returns the path and each state's
// fingerprint.
func randomPath(t *testing.T, w *sim.World, s *sim.State, seed uint64, steps int) (sim.Path, []uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	w.Chooser = func(n int) int { return r.IntN(n) }
	defer func() { w.Chooser = nil }()
	var p sim.Path
	var fps []uint64
	for range steps {
		evs := enabled(w, s)
		if len(evs) == 0 {
			break
		}
		ev := evs[r.IntN(len(evs))]
		s = apply(t, w, s, ev)
		p = append(p, sim.Step{Event: ev, Choices: slices.Clone(w.Last().Choices)})
		fps = append(fps, s.Fingerprint())
	}
	return p, fps
}

func TestRunReplays(t *testing.T) {
	for _, tr := range []sim.Transport{sim.Datagram, sim.Stream} {
		for seed := range uint64(8) {
			t.Run(fmt.Sprintf("%v seed %d", tr, seed), func(t *testing.T) {
				w, s0 := newWorld(t, replaySpec(tr))
				p, fps := randomPath(t, w, s0, seed, 40)
				if len(p) < 10 {
					t.Fatalf("walk too short: %d steps", len(p))
				}
				// A fresh world replays it exactly, in strict mode.
				r, s := newWorld(t, replaySpec(tr))
				r.Strict = true
				var got []uint64
				end, err := r.Run(s, p, func(i int, s *sim.State, info *sim.StepInfo) error {
					if info.Event != p[i].Event || !slices.Equal(info.Choices, p[i].Choices) {
						t.Errorf("step %d: info %v %v, want %v %v", i, info.Event, info.Choices, p[i].Event, p[i].Choices)
					}
					got = append(got, s.Fingerprint())
					return nil
				})
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if !slices.Equal(got, fps) || end.Fingerprint() != fps[len(fps)-1] {
					t.Fatalf("replay diverged:\n got  %x\n want %x", got, fps)
				}
				// Run with a nil callback gets to the same state.
				end2, err := r.Run(s, p, nil)
				if err != nil || end2.Fingerprint() != end.Fingerprint() || end2.Dump() != end.Dump() {
					t.Fatalf("Run(nil) = %v", err)
				}
			})
		}
	}
}

func TestRunRejectsBadPaths(t *testing.T) {
	w, s0 := newWorld(t, replaySpec(sim.Datagram))
	p, fps := randomPath(t, w, s0, 3, 30)
	w.Strict = true
	k := 7
	// Each mutation breaks the path at one step and returns its index.
	cases := []struct {
		name   string
		change func(p sim.Path) int
	}{
		{"undeliverable message", func(p sim.Path) int {
			p[k] = sim.Step{Event: deliver(0, 1, note("never sent"))}
			return k
		}},
		{"timer never set", func(p sim.Path) int { p[k] = sim.Step{Event: timer(1, "zzz")}; return k }},
		{"node out of range", func(p sim.Path) int { p[k] = sim.Step{Event: reset(9)}; return k }},
		{"unknown kind", func(p sim.Path) int { p[k] = sim.Step{Event: sim.Event{Kind: 42}}; return k }},
		{"call made twice", func(p sim.Path) int {
			for i := range p[:len(p)-1] {
				if p[i].Event.Kind == sim.App {
					p[i+1] = p[i]
					return i + 1
				}
			}
			panic("no app call on the path")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := p.Clone()
			want := c.change(q)
			end, err := w.Run(s0, q, nil)
			var se *sim.StepError
			if !errors.As(err, &se) {
				t.Fatalf("Run = %v, want a *StepError", err)
			}
			if se.Index != want || se.Event != q[want].Event || !errors.Is(err, sim.ErrNotEnabled) {
				t.Errorf("StepError %+v, want index %d event %v", se, want, q[want].Event)
			}
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("step %d (%v): ", want+1, q[want].Event)) {
				t.Errorf("message %q", err.Error())
			}
			// Run returns the last good state.
			wantFP := s0.Fingerprint()
			if want > 0 {
				wantFP = fps[want-1]
			}
			if end.Fingerprint() != wantFP {
				t.Errorf("Run returned state %016x, want the state before step %d", end.Fingerprint(), want)
			}
		})
	}
	// A tape that does not match the handler's choices fails at its step.
	for i, st := range p {
		if len(st.Choices) == 0 {
			continue
		}
		for _, tc := range []struct {
			name string
			tape []int
		}{{"short", st.Choices[:len(st.Choices)-1]}, {"long", append(slices.Clone(st.Choices), 0)}} {
			q := p.Clone()
			q[i].Choices = tc.tape
			_, err := w.Run(s0, q, nil)
			var se *sim.StepError
			if !errors.As(err, &se) || se.Index != i || !errors.Is(err, sim.ErrNotEnabled) {
				t.Errorf("%s tape at step %d: %v", tc.name, i, err)
			}
		}
		break
	}
	// An error from the callback stops the run and is returned as is.
	stop := errors.New("stop")
	calls := 0
	_, err := w.Run(s0, p, func(i int, s *sim.State, info *sim.StepInfo) error {
		calls++
		if i == 4 {
			return stop
		}
		return nil
	})
	if err != stop || calls != 5 {
		t.Errorf("Run = %v after %d callbacks, want stop after 5", err, calls)
	}
	// Path.Clone shares nothing.
	q := p.Clone()
	for i := range q {
		if len(q[i].Choices) > 0 {
			q[i].Choices[0] = 99
			if p[i].Choices[0] == 99 {
				t.Errorf("Clone shares choices")
			}
			break
		}
	}
}

func TestHandlerPanic(t *testing.T) {
	type tc struct {
		name    string
		spec    sim.Spec
		path    []sim.Event
		node    sim.NodeID
		handler string
		value   string
	}
	cases := []tc{
		{"Init", spec(2, sim.Datagram, nil, sim.Budget{}, nil, []any{boom("init!")}), nil, 1, "Init", "init!"},
		{"App", spec(2, sim.Datagram, []sim.Call{{To: 1, Call: boom("app!")}}, sim.Budget{}),
			[]sim.Event{app(1, 0)}, 1, "App", "app!"},
		{"Receive", spec(2, sim.Datagram, []sim.Call{{To: 0, Call: send{1, boom("recv!")}}}, sim.Budget{}),
			[]sim.Event{app(0, 0), deliver(0, 1, boom("recv!"))}, 1, "Receive", "recv!"},
		{"Timer", spec(2, sim.Datagram, nil, sim.Budget{}, []any{setTimer("panic")}),
			[]sim.Event{timer(0, "panic")}, 0, "Timer", "timer went off"},
		{"Error on socket error", spec(2, sim.Stream, []sim.Call{{To: 1, Call: armError{}}, {To: 0, Call: send{1, note("x")}}}, sim.Budget{Errors: 1}),
			[]sim.Event{app(1, 0), app(0, 1), sockErr(0, 1)}, 1, "Error", "error handler"},
		{"Error on a peer's reset", spec(2, sim.Stream, []sim.Call{{To: 1, Call: batch{armError{}, send{0, note("x")}}}}, sim.Budget{Resets: 1}),
			[]sim.Event{app(1, 0), reset(0)}, 1, "Error", "error handler"},
		{"Choose(0)", spec(1, sim.Datagram, []sim.Call{{To: 0, Call: choose(0)}}, sim.Budget{}),
			[]sim.Event{app(0, 0)}, 0, "App", "Choose(0): n must be at least 1"},
		{"Send to a missing node", spec(2, sim.Datagram, []sim.Call{{To: 0, Call: send{2, note("x")}}}, sim.Budget{}),
			[]sim.Event{app(0, 0)}, 0, "App", "Send to node 2: nodes are 0 to 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := sim.NewWorld(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			s, err := w.Initial()
			if len(c.path) > 0 {
				if err != nil {
					t.Fatal(err)
				}
				p := make(sim.Path, len(c.path))
				for i, ev := range c.path {
					p[i].Event = ev
				}
				before := s
				fp := before.Fingerprint()
				_, err = w.Run(s, p, nil)
				var se *sim.StepError
				if !errors.As(err, &se) || se.Index != len(p)-1 {
					t.Fatalf("Run = %v, want a StepError at step %d", err, len(p)-1)
				}
				if before.Fingerprint() != fp {
					t.Errorf("input state changed")
				}
			} else if s != nil {
				t.Fatalf("Initial returned a state with a panicking Init")
			}
			var hp *sim.HandlerPanic
			if !errors.As(err, &hp) {
				t.Fatalf("error %v, want a *HandlerPanic", err)
			}
			if hp.Node != c.node || hp.Handler != c.handler || fmt.Sprint(hp.Value) != c.value {
				t.Errorf("HandlerPanic{%d %s %v}, want {%d %s %s}", hp.Node, hp.Handler, hp.Value, c.node, c.handler, c.value)
			}
			if want := fmt.Sprintf("node %d panicked in %s: %s", c.node, c.handler, c.value); hp.Error() != want {
				t.Errorf("Error() = %q, want %q", hp.Error(), want)
			}
			if !strings.Contains(hp.Stack, "goroutine") {
				t.Errorf("no stack: %q", hp.Stack)
			}
		})
	}
	// The world is still usable after a panic, and a reset re-runs Init.
	w, s := newWorld(t, spec(2, sim.Datagram, []sim.Call{{To: 0, Call: boom("x")}}, sim.Budget{Resets: 1}, nil, []any{laterChoose(2)}))
	if _, err := w.Apply(s, app(0, 0), nil); err == nil {
		t.Fatal("no panic")
	}
	r := apply(t, w, s, reset(1), 1)
	wantLog(t, r, 1, "init", "chose 1/2")
}

func TestTypeErrorsInWorld(t *testing.T) {
	type chanNode struct {
		tnode
		C chan int
	}
	w, err := sim.NewWorld(sim.Spec{Nodes: 1, New: func(sim.NodeID) sim.Node { return &chanNode{C: make(chan int)} }})
	if err != nil {
		t.Fatal(err)
	}
	var te *sim.TypeError
	if _, err := w.Initial(); !errors.As(err, &te) {
		t.Errorf("node with a chan field: Initial = %v, want a *TypeError", err)
	}
	// A message with a pointer cycle is sent: hashed with a
	// back-reference, copied with the cycle.
	type ring struct {
		V    int
		Next *ring
	}
	loop := &ring{V: 1}
	loop.Next = loop
	w, s := newWorld(t, sim.Spec{Nodes: 2, Calls: []sim.Call{{To: 0, Call: []send{{1, loop}}}},
		New: func(sim.NodeID) sim.Node { return &sender{} }})
	if n, err := w.Apply(s, app(0, 0), nil); err != nil {
		t.Errorf("sending a cyclic message: %v", err)
	} else if got := n.InFlight()[0].Msg.(*ring); got == loop || got.Next != got {
		t.Errorf("the cyclic message in flight is not a copy with its cycle: %p -> %p (sent %p)", got, got.Next, loop)
	}
	// A message that cannot be hashed fails the step, not the test.
	bad := map[string]any{"f": func() {}}
	w, s = newWorld(t, spec(2, sim.Datagram, []sim.Call{{To: 0, Call: send{1, bad}}, {To: 1, Call: send{0, note("ok")}}}, sim.Budget{}))
	fp := s.Fingerprint()
	if _, err := w.Apply(s, app(0, 0), nil); !errors.As(err, &te) {
		t.Errorf("sending a func: %v, want a *TypeError", err)
	}
	if s.Fingerprint() != fp || len(s.InFlight()) != 0 {
		t.Errorf("failed step changed its input")
	}
	// The world hashes soundly afterwards.
	n := apply(t, w, s, app(1, 1))
	w2, s2 := newWorld(t, spec(2, sim.Datagram, []sim.Call{{To: 0, Call: send{1, bad}}, {To: 1, Call: send{0, note("ok")}}}, sim.Budget{}))
	if n2 := apply(t, w2, s2, app(1, 1)); n2.Fingerprint() != n.Fingerprint() {
		t.Errorf("fingerprint after a type error differs from a fresh world's")
	}
}

// ctrNode takes over its own copy, hash and dump.
type ctrNode struct {
	N      int
	Copies *int `livecheck:"-"`
	Hashes *int `livecheck:"-"`
}

func (c *ctrNode) CopyState() any {
	*c.Copies++
	d := *c
	return &d
}
func (c *ctrNode) HashState(h *sim.Hasher) { *c.Hashes++; h.Int(c.N) }
func (c *ctrNode) DumpState() string       { return fmt.Sprintf("ctr(%d)", c.N) }

func (c *ctrNode) Init(sim.Context)                             {}
func (c *ctrNode) Receive(sim.Context, sim.NodeID, sim.Message) { c.N += 10 }
func (c *ctrNode) Timer(sim.Context, string)                    {}
func (c *ctrNode) App(ctx sim.Context, _ sim.AppCall)           { c.N++; ctx.Send(1, "hello") }
func (c *ctrNode) Error(sim.Context, sim.NodeID)                {}

func TestWorldUsesCustomMethods(t *testing.T) {
	copies, hashes := 0, 0
	w, s := newWorld(t, sim.Spec{Nodes: 3, Calls: []sim.Call{{To: 0}},
		New: func(sim.NodeID) sim.Node { return &ctrNode{Copies: &copies, Hashes: &hashes} }})
	if copies != 0 || hashes != 3 {
		t.Errorf("Initial: %d copies %d hashes, want 0 and 3", copies, hashes)
	}
	n := apply(t, w, s, app(0, 0))
	// only the node that ran is copied and rehashed
	if copies != 1 || hashes != 4 {
		t.Errorf("Apply: %d copies %d hashes, want 1 and 4", copies, hashes)
	}
	if got := n.Dump(); got != "node 0: ctr(1)\nnode 1: ctr(0)\nnode 2: ctr(0)\nin flight: 0->1 \"hello\";\n" {
		t.Errorf("Dump:\n%s", got)
	}
	if s.Node(0).(*ctrNode).N != 0 || n.Node(0).(*ctrNode).N != 1 {
		t.Errorf("the copy was not used")
	}
	// untouched nodes are shared, not copied
	if n.Node(1) != s.Node(1) || n.Node(0) == s.Node(0) {
		t.Errorf("node sharing wrong")
	}
	if n.NodeFingerprint(1) != s.NodeFingerprint(1) || n.NodeFingerprint(0) == s.NodeFingerprint(0) {
		t.Errorf("node fingerprints wrong")
	}
	apply(t, w, n, deliver(0, 1, "hello"))
	if copies != 2 || hashes != 5 {
		t.Errorf("deliver: %d copies %d hashes, want 2 and 5", copies, hashes)
	}
}

// TestApplyNeverMutatesInput explores every state to a small depth, applies
// every enabled event to each, and checks the input is unchanged. It also
// checks that fingerprints are canonical: two states have the same
// fingerprint exactly when they are the same (same dump, budget and calls).
func TestApplyNeverMutatesInput(t *testing.T) {
	for _, tr := range []sim.Transport{sim.Datagram, sim.Stream} {
		t.Run(tr.String(), func(t *testing.T) {
			w, s0 := newWorld(t, replaySpec(tr))
			type snap struct {
				fp      uint64
				dump    string
				enabled []sim.Event
			}
			take := func(s *sim.State) snap { return snap{s.Fingerprint(), s.Dump(), enabled(w, s)} }
			key := func(s *sim.State) string {
				var made []int
				for i := range w.Spec().Calls {
					if s.CallMade(i) {
						made = append(made, i)
					}
				}
				return fmt.Sprintf("%s%+v %v", s.Dump(), s.Used(), made)
			}
			byFP := map[uint64]string{}
			byKey := map[string]uint64{}
			frontier := []*sim.State{s0}
			applied := 0
			for depth := 0; depth < 4; depth++ {
				var next []*sim.State
				for _, s := range frontier {
					before := take(s)
					for _, ev := range before.enabled {
						n, err := w.Apply(s, ev, nil)
						if err != nil {
							t.Fatalf("Apply(%v): %v", ev, err)
						}
						applied++
						k := key(n)
						if old, ok := byFP[n.Fingerprint()]; ok && old != k {
							t.Fatalf("two different states share fingerprint %016x:\n%s\n%s", n.Fingerprint(), old, k)
						}
						if old, ok := byKey[k]; ok && old != n.Fingerprint() {
							t.Fatalf("one state has two fingerprints %016x %016x:\n%s", old, n.Fingerprint(), k)
						}
						if _, ok := byFP[n.Fingerprint()]; !ok {
							next = append(next, n)
						}
						byFP[n.Fingerprint()] = k
						byKey[k] = n.Fingerprint()
					}
					if after := take(s); !reflect.DeepEqual(after, before) {
						t.Fatalf("Apply changed its input:\n%s\nnow\n%s", before.dump, after.dump)
					}
				}
				frontier = next
			}
			if applied < 500 || len(byFP) < 200 {
				t.Errorf("explored too little: %d steps, %d states", applied, len(byFP))
			}
			// The first state is unchanged after all of it.
			_, s2 := newWorld(t, replaySpec(tr))
			if s0.Fingerprint() != s2.Fingerprint() || s0.Dump() != s2.Dump() {
				t.Errorf("initial state changed")
			}
		})
	}
}

func TestGuard(t *testing.T) {
	g := &sim.Guard{}
	var during [3]bool
	var tok uint64
	w, err := sim.NewWorld(sim.Spec{Nodes: 1, Calls: []sim.Call{{To: 0}}, New: func(sim.NodeID) sim.Node {
		return &hookNode{onApp: func() {
			var stuck bool
			tok, stuck = g.Stuck(0)
			during[0] = stuck
			_, during[1] = g.Stuck(tok) // same token, handler still running
		}}
	}})
	if err != nil {
		t.Fatal(err)
	}
	w.Guard = g
	s, err := w.Initial()
	if err != nil {
		t.Fatal(err)
	}
	t0, stuck := g.Stuck(0)
	if stuck || t0 != 2 {
		t.Errorf("after Initial: token %d stuck %v, want 2 false (one Init entered and left)", t0, stuck)
	}
	apply(t, w, s, app(0, 0))
	if during[0] || !during[1] || tok != 3 {
		t.Errorf("during the handler: first %v, second %v, token %d; want false, true, 3", during[0], during[1], tok)
	}
	if _, stuck := g.Stuck(tok); stuck {
		t.Errorf("stuck after the handler returned")
	}
}

type hookNode struct {
	onApp func() `livecheck:"-"`
}

func (h *hookNode) Init(sim.Context)                             {}
func (h *hookNode) Receive(sim.Context, sim.NodeID, sim.Message) {}
func (h *hookNode) Timer(sim.Context, string)                    {}
func (h *hookNode) App(sim.Context, sim.AppCall)                 { h.onApp() }
func (h *hookNode) Error(sim.Context, sim.NodeID)                {}

func TestContext(t *testing.T) {
	var got []string
	w, s := newWorld(t, sim.Spec{Nodes: 3, Calls: []sim.Call{{To: 2}}, New: func(id sim.NodeID) sim.Node {
		return &ctxNode{seen: &got}
	}})
	apply(t, w, s, app(2, 0))
	want := []string{"init 0/3", "init 1/3", "init 2/3", "app 2/3"}
	if !slices.Equal(got, want) {
		t.Errorf("Self/Nodes seen %q, want %q", got, want)
	}
}

type ctxNode struct {
	seen *[]string `livecheck:"-"`
}

func (c *ctxNode) Init(ctx sim.Context) {
	*c.seen = append(*c.seen, fmt.Sprintf("init %d/%d", ctx.Self(), ctx.Nodes()))
}
func (c *ctxNode) Receive(sim.Context, sim.NodeID, sim.Message) {}
func (c *ctxNode) Timer(sim.Context, string)                    {}
func (c *ctxNode) App(ctx sim.Context, _ sim.AppCall) {
	*c.seen = append(*c.seen, fmt.Sprintf("app %d/%d", ctx.Self(), ctx.Nodes()))
}
func (c *ctxNode) Error(sim.Context, sim.NodeID) {}

// A node may open a stream to itself: a socket error on it raises Error
// once, and a reset of the node drops it without an Error.
func TestStreamSelfConnection(t *testing.T) {
	calls := []sim.Call{{To: 0, Call: batch{send{0, note("me")}, send{1, note("you")}}}}
	w, s := newWorld(t, spec(2, sim.Stream, calls, sim.Budget{Errors: 1, Resets: 1}))
	w.Record = true
	s = apply(t, w, s, app(0, 0))
	wantEvents(t, enabled(w, s), []sim.Event{deliver(0, 0, note("me")), deliver(0, 1, note("you")),
		sockErr(0, 0), sockErr(0, 1), reset(0), reset(1)})
	e := apply(t, w, s, sockErr(0, 0))
	wantLog(t, e, 0, "init", `app [send{To:0 Msg:"me"} send{To:1 Msg:"you"}]`, "error 0")
	if got := e.InFlight(); len(got) != 1 || got[0].Msg != note("you") {
		t.Errorf("in flight: %+v", got)
	}
	r := apply(t, w, s, reset(0))
	if got := w.Last().Logs; !slices.Equal(got, []string{"1: error from 0", "0: init"}) {
		t.Errorf("Last().Logs = %q", got)
	}
	if len(r.InFlight()) != 0 || strings.Contains(r.Dump(), "connections") {
		t.Errorf("after reset:\n%s", r.Dump())
	}
}
