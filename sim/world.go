package sim

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/livecheck/livecheck/internal/gid"
)

// A World runs a Spec: it builds the initial state, lists the enabled events
// of a state and applies one. A World is used by one goroutine at a time;
// each search or walk worker has its own.
type World struct {
	spec Spec

	// Chooser answers a handler's Choose(n) once the tape given to Apply is
	// used up. Nil answers 0, which the exhaustive search relies on: it
	// enumerates choices by extending the tape.
	Chooser func(n int) int
	// Strict makes a tape that runs out, or has values left over, an error:
	// replay uses it, so a trace must account for every choice.
	Strict bool
	// Record keeps Logf lines and sent messages' dumps for reports.
	Record bool
	// NoKeys leaves the keys of the states Apply makes to be worked out
	// when asked for (World.Key): with symmetry a key costs one or more
	// renamed fingerprints, which states that are only made again on the
	// way to another one do not need.
	NoKeys bool
	// NoFingerprints leaves the fingerprints and keys of the states Apply
	// makes to be worked out when asked for (World.Key,
	// World.Fingerprint): a state made again on the way to another one
	// needs its nodes' fingerprints, which the states after it share, and
	// not its own.
	NoFingerprints bool
	// Guard, when set, is told when a handler starts and ends, so a watchdog
	// can tell a handler that never returns.
	Guard *Guard
	// Recheck, when positive, runs the first recheckFirst steps that Apply
	// is asked for, then one in Recheck, a second time on the same state
	// with the same choices, and compares what the two runs did. A handler
	// that is not a function of its node state and its input (map
	// iteration, time, rand, goroutines, shared memory) then fails its step
	// with a *NondeterminismError that names it, rather than leaving traces
	// that do not replay and results that change from run to run. 1 checks
	// every step; 0 (the default) none.
	Recheck int
	// Stop, when set, is asked every StopEvery steps (Apply and Step)
	// whether to end the work: while it says so, every step fails with
	// ErrStopped. The engines that drive the world (search, walks,
	// probes, replay) then end within a few milliseconds, however long
	// the work they were given, and their callers tell ErrStopped from
	// a finding by errors.Is.
	Stop func() bool
	// SharedCache, when set, is a step cache this world shares with
	// others of the same spec (the search's workers): a run one world
	// recorded answers the others' steps too (stepcache.go).
	SharedCache *SharedStepCache
	// NoStepCache turns off the step cache (stepcache.go), which answers
	// a handler's run on a node state and input met before with what it
	// did then: for the cross-checks, which compare the two.
	NoStepCache bool

	h    Hasher
	sym  *symmetry // nil without Spec.Symmetry
	free []*State  // discarded states, for Apply to reuse
	// spareNodes are node objects of discarded states, made for them by
	// Apply and held by nothing else, for copyNode to copy into.
	spareNodes []Node
	// hashing is the node or message being hashed, for the path in a
	// TypeError, which the plans do not track.
	hashing any
	// spareNets are the networks of reused states, for the steps that
	// change a network (netRoom).
	spareNets [][]Envelope
	applies   uint64 // Apply calls so far, for Recheck
	// draw is the cell of the goroutine that last ran a handler of this
	// world, and drawG that goroutine (see draw.go); drawCut, when not
	// 0, is one past the index of the step's first choice from which no
	// value need be tried (crypto/rand.Int rejected it: cutDraws).
	draw     *drawCell
	drawG    uintptr
	drawCut  int
	unpolled int // steps since Stop was last asked
	again    struct {
		choices, bounds []int
		sent            []Envelope
	}
	// cache is the step cache; invokes counts the handlers the step
	// under way ran; rechecking says Recheck's second run is under way,
	// which the cache does not answer.
	cache      stepCache
	invokes    int
	rechecking bool
	ctx        nodeCtx
	from       *State // the state Apply was given, for Current
	tape       []int
	last       StepInfo
	tapeErr    error
	touched    []bool
	ownTime    []bool
	// raw[i], for a node the step's handler copied (touched), is the size
	// of its struct when the copy was a plain memory copy, 0 otherwise.
	raw    []uintptr
	netOwn bool
	// callWords is how many words past the first the driver's calls need.
	callWords int
	// initNodes[i] is where node i's choices begin in the last
	// InitialFrom's Choices.
	initNodes []int
	// refused are the sends of the step across the partition in force,
	// on a stream: (sender, receiver), each once; refuse tells the senders.
	refused   []link
	localStep bool   // ApplyLocal is stepping: no monitors
	observer  []bool // Spec.Observers, by node id
}

// StepInfo is what the last Apply did. Its slices are reused by the next
// Apply: copy what must outlive it.
type StepInfo struct {
	Event   Event
	Msg     Message    // the message delivered, dropped or duplicated, if any
	Sent    []Envelope // messages sent during the step
	Choices []int      // values Choose returned, in order
	Bounds  []int      // the n of each Choose call
	Logs    []string   // Logf lines, "node: line" (only when Record is set)
	// Errors counts the Error handlers the step ran: both ends of a
	// socket error, the peers told of a reset, the senders a partition
	// refused.
	Errors int
}

// ErrNotEnabled is returned (wrapped) by Apply for an event that cannot
// happen in the state it is applied to.
var ErrNotEnabled = errors.New("event not enabled")

// ErrStopped is returned (wrapped) by Apply and Step once the world's Stop
// says to end the work: the step was not taken.
var ErrStopped = errors.New("stopped")

// StopEvery is how many steps a world takes between two questions to
// its Stop: a step takes microseconds, so a stop is seen within
// milliseconds, and asking costs nothing measurable.
const StopEvery = 1024

// stopped asks Stop, every StopEvery steps, whether to end the work; once
// it says so, it asks again at every step.
func (w *World) stopped() bool {
	if w.Stop == nil {
		return false
	}
	if w.unpolled++; w.unpolled < StopEvery {
		return false
	}
	if w.Stop() {
		return true
	}
	w.unpolled = 0
	return false
}

// A HandlerPanic is a handler that panicked: a safety violation of the
// protocol, reported with the path that led to it.
type HandlerPanic struct {
	Node NodeID
	// Layer is the layer of a stacked node whose handler panicked (see
	// [Stack]); empty for a node of one layer.
	Layer   string
	Handler string // Init, Receive, Timer, App, Error, or a layer's Down
	Value   any
	Stack   string
}

func (p *HandlerPanic) Error() string {
	if p.Layer != "" {
		return fmt.Sprintf("node %d panicked in %s of layer %s: %v", p.Node, p.Handler, p.Layer, p.Value)
	}
	return fmt.Sprintf("node %d panicked in %s: %v", p.Node, p.Handler, p.Value)
}

// maxFree is how many discarded states a world keeps for Apply to reuse:
// a caller may make a few dozen states before it discards most of them
// (the exhaustive search takes a batch of steps, then judges them).
const maxFree = 40

// NewWorld checks spec and returns a world for it.
func NewWorld(spec Spec) (*World, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if spec.HandlerTimeout <= 0 {
		spec.HandlerTimeout = 2 * time.Second
	}
	w := &World{spec: spec, sym: newSymmetry(&spec), callWords: max(0, (len(spec.Calls)+63)/64-1), free: make([]*State, 0, maxFree),
		spareNodes: make([]Node, 0, 2*maxFree)}
	w.ctx.w = w
	w.touched = padded[bool](spec.Nodes)
	if len(spec.Observers) > 0 {
		w.observer = make([]bool, spec.Nodes)
		for _, id := range spec.Observers {
			w.observer[id] = true
		}
	}
	w.ownTime = padded[bool](spec.Nodes)
	w.raw = padded[uintptr](spec.Nodes)
	return w, nil
}

// padded makes a slice of n elements that shares no cache line with any
// other object: a world writes its touched and ownTime flags at every
// step, and worlds made one after the other (a search's workers') had
// them side by side, a few bytes each, so that two workers stepping at
// once took a line from each other at every step (Paxos split 2 x 4 on 2
// workers spent 9% more CPU than on 1 in World.invoke and unchanged).
func padded[T any](n int) []T {
	var z T
	pad := (cacheLine + int(unsafe.Sizeof(z)) - 1) / int(unsafe.Sizeof(z))
	return make([]T, n+2*pad)[pad : pad+n : pad+n]
}

// cacheLine is the size of a cache line, or more.
const cacheLine = 64

// Observer says whether node id is one of Spec.Observers.
func (w *World) Observer(id NodeID) bool { return w.observer != nil && w.observer[id] }

// Spec returns the world's spec.
func (w *World) Spec() *Spec { return &w.spec }

// Last returns what the last Apply did.
func (w *World) Last() *StepInfo { return &w.last }

// Initial builds the first initial state: every node is built and its
// Init runs, in id order, with every Choose in these first Init calls
// answered 0. A system whose first Init calls choose has several initial
// states (see [World.Starts]); InitialFrom builds any one of them.
func (w *World) Initial() (*State, error) {
	saved := w.Chooser
	w.Chooser = nil
	defer func() { w.Chooser = saved }()
	return w.InitialFrom(nil)
}

// InitialFrom builds the initial state that the choices of the first Init
// calls pick: node 0's Init runs first, then node 1's, and so on, and
// their Choose calls take their values from tape first, then from the
// Chooser (or 0), as a step's do; with Strict the tape must account for
// every choice. Last then holds the choices made and their bounds (its
// Event is the zero Event). A system whose first Init calls do not choose
// has one initial state, which every tape but the empty one misses under
// Strict.
func (w *World) InitialFrom(tape []int) (*State, error) {
	s := newState(w.spec.Nodes)
	w.begin(Event{}, tape)
	w.initNodes = w.initNodes[:0]
	for i := range s.nodes {
		w.initNodes = append(w.initNodes, len(w.last.Choices))
		s.nodes[i].node = w.spec.New(NodeID(i))
		w.touched[i] = true
		if err := w.invoke(s, NodeID(i), initH, 0, nil, "", nil); err != nil {
			return nil, err
		}
		if w.tapeErr != nil {
			return nil, w.tapeErr
		}
	}
	if w.Strict && len(w.last.Choices) < len(tape) {
		return nil, fmt.Errorf("%w: the first Init calls made %d choices but the trace records %d", ErrNotEnabled, len(w.last.Choices), len(tape))
	}
	if err := w.monitor(s); err != nil {
		return nil, err
	}
	if err := w.finish(s); err != nil {
		return nil, err
	}
	return s, nil
}

// MaxStarts bounds the initial states a system may have: the leaves of
// the tree of choices its first Init calls make.
const MaxStarts = 4096

// A Start is an initial state with the choices of the first Init calls
// that build it.
type Start struct {
	Init  []int
	State *State
}

// A StartError is an initial state that could not be built: a handler
// panic (a finding) or a state that cannot be hashed, under the choices
// Init.
type StartError struct {
	Init []int
	Err  error
}

func (e *StartError) Error() string {
	if len(e.Init) == 0 {
		return e.Err.Error()
	}
	return fmt.Sprintf("initial state %v: %v", e.Init, e.Err)
}
func (e *StartError) Unwrap() error { return e.Err }

// Starts builds every initial state, one for each combination of the
// values the first Init calls' Choose calls can return, in the order the
// search enumerates a step's choices (NextTape): all 0 first. A system
// whose first Init calls do not choose has one. Equal states are not
// merged: each comes with its own choices. An initial state that cannot
// be built ends the list with a *StartError; more than MaxStarts is an
// error that names the node whose choices are the most numerous.
func (w *World) Starts() ([]Start, error) {
	saved := w.Chooser
	w.Chooser = nil
	defer func() { w.Chooser = saved }()
	var out []Start
	var tape []int
	for {
		s, err := w.InitialFrom(tape)
		choices := slices.Clone(w.last.Choices)
		if err != nil {
			return out, &StartError{Init: choices, Err: err}
		}
		if len(out) == MaxStarts {
			node, n := w.widestInit()
			return nil, fmt.Errorf("the first Init calls choose among more than %d initial states (node %d's Init alone among %d): choose in a later handler (a timer that Init sets), or fewer values",
				MaxStarts, node, n)
		}
		out = append(out, Start{Init: choices, State: s})
		next, more := NextTape(w.last.Choices, w.last.Bounds, nil)
		if !more {
			return out, nil
		}
		tape = next
	}
}

// widestInit returns the node whose first Init made the most combinations
// of choices in the last InitialFrom, and how many.
func (w *World) widestInit() (NodeID, int) {
	best, most := NodeID(0), 0
	for i, lo := range w.initNodes {
		hi := len(w.last.Bounds)
		if i+1 < len(w.initNodes) {
			hi = w.initNodes[i+1]
		}
		n := 1
		for _, b := range w.last.Bounds[lo:hi] {
			n = min(n*b, 1<<30)
		}
		if n > most {
			best, most = NodeID(i), n
		}
	}
	return best, most
}

// Enabled appends the events enabled in s to buf, in a stable order:
// deliveries, timers, application calls, drops, duplications, socket
// errors, resets, crashes, then partitions or the heal. Deliveries
// (drops, duplications) of equal messages between the same nodes appear
// once.
//
// A node that is down (it crashed: State.Down) gets no delivery, timer or
// driver call; drops and duplications of datagrams to it are enabled as
// usual, and what it sent before it crashed is delivered as usual. Its
// restart is its Reset, enabled whatever the reset budget (it costs
// none), and on streams a socket error on one of its connections is
// enabled whatever the socket-error budget (it costs none: the peer
// learns that the connection is dead). Crashes of the nodes up are
// enabled while the crash budget allows, in id order.
// While the budget allows a partition and none is in force, there is one
// for each way to cut the nodes in two, named by the side without the
// highest node (PartitionEvent): the sets of the other nodes that are
// not empty, in increasing order of their bits. While one is in force,
// the heal is enabled, whatever the budget, and no other partition.
func (w *World) Enabled(s *State, buf []Event) []Event {
	stream := w.spec.Transport == Stream
	down := s.downs()
	for i := range s.net {
		e := &s.net[i]
		if i > 0 {
			p := &s.net[i-1]
			if stream && p.From == e.From && p.To == e.To {
				continue // only the head of a connection's queue
			}
			if !stream && p.From == e.From && p.To == e.To && p.FP == e.FP {
				continue
			}
		}
		if down != 0 && down.Has(e.To) {
			continue // not while its receiver is down
		}
		buf = append(buf, Event{Kind: Deliver, Node: e.To, Peer: e.From, Msg: e.FP})
	}
	for i := range s.nodes {
		for _, t := range s.nodes[i].timers {
			buf = append(buf, Event{Kind: Timer, Node: NodeID(i), Timer: t})
		}
	}
	if len(w.spec.Calls) > 0 {
		var seen uint64 // nodes that already have a pending call listed (ids < 64)
		for c, call := range w.spec.Calls {
			if s.CallMade(c) {
				continue
			}
			if call.To < 64 {
				if seen&(1<<uint(call.To)) != 0 {
					continue
				}
				seen |= 1 << uint(call.To)
			} else if !w.firstPending(s, c) {
				continue
			}
			if down.Has(call.To) {
				continue // the driver waits for the node to be up
			}
			buf = append(buf, Event{Kind: App, Node: call.To, Call: c})
		}
	}
	if !stream && s.used.Drops < w.spec.Budget.Drops {
		buf = distinctInFlight(s, Drop, buf)
	}
	if !stream && s.used.Dups < w.spec.Budget.Dups {
		buf = distinctInFlight(s, Duplicate, buf)
	}
	if stream && (s.used.Errors < w.spec.Budget.Errors || down != 0) {
		all := s.used.Errors < w.spec.Budget.Errors
		for _, c := range s.conns {
			if all || down.Has(c.a) || down.Has(c.b) {
				buf = append(buf, Event{Kind: SocketError, Node: c.a, Peer: c.b})
			}
		}
	}
	if s.used.Resets < w.spec.Budget.Resets {
		for i := range s.nodes {
			buf = append(buf, Event{Kind: Reset, Node: NodeID(i)})
		}
	} else {
		// The restarts of the nodes down, which cost no reset.
		for t := uint64(down); t != 0; t &= t - 1 {
			buf = append(buf, Event{Kind: Reset, Node: NodeID(bits.TrailingZeros64(t))})
		}
	}
	if s.used.Crashes < w.spec.Budget.Crashes {
		for i := range s.nodes {
			if !down.Has(NodeID(i)) {
				buf = append(buf, Event{Kind: Crash, Node: NodeID(i)})
			}
		}
	}
	switch {
	case s.cut != 0:
		buf = append(buf, Event{Kind: Heal})
	case s.used.Partitions < w.spec.Budget.Partitions:
		// Each way to cut the nodes in two once: by the side without
		// the highest node, in increasing order of its bits.
		for side := NodeSet(1); side < 1<<uint(len(s.nodes)-1); side++ {
			buf = append(buf, PartitionEvent(side))
		}
	}
	return buf
}

// distinctInFlight appends an event of kind k (a drop or a duplication)
// for each distinct datagram in flight: equal ones between the same nodes
// are one event, as they are one delivery.
func distinctInFlight(s *State, k Kind, buf []Event) []Event {
	for i := range s.net {
		e := &s.net[i]
		if i > 0 {
			p := &s.net[i-1]
			if p.From == e.From && p.To == e.To && p.FP == e.FP {
				continue
			}
		}
		buf = append(buf, Event{Kind: k, Node: e.To, Peer: e.From, Msg: e.FP})
	}
	return buf
}

// firstPending says whether call c is the first call not yet made to its node.
func (w *World) firstPending(s *State, c int) bool {
	to := w.spec.Calls[c].To
	for i := 0; i < c; i++ {
		if w.spec.Calls[i].To == to && !s.CallMade(i) {
			return false
		}
	}
	return true
}

// Apply applies ev to s and returns the successor; s is unchanged. Choose
// calls take their values from tape first, then from the Chooser (or 0).
// What the step did is in Last until the next call.
//
// The error is ErrNotEnabled (wrapped) if ev cannot happen in s, a
// *HandlerPanic if a handler panicked (a finding), a *TypeError if a state
// or message cannot be hashed, a tape error when Strict is set, or
// ErrStopped when Stop says to end the work.
func (w *World) Apply(s *State, ev Event, tape []int) (*State, error) {
	if w.stopped() {
		return nil, ErrStopped
	}
	n, err := w.apply(s, ev, tape)
	if err != nil || w.Recheck <= 0 {
		return n, err
	}
	w.applies++
	if w.Recheck > 1 && w.applies > recheckFirst && w.applies%uint64(w.Recheck) != 0 {
		return n, nil
	}
	return w.recheck(s, ev, n)
}

// recheckFirst is how many steps a world with Recheck set checks before it
// samples: a small system is checked throughout.
const recheckFirst = 256

// recheck applies ev to s again, with the choices the first run (which
// made first) took, and says where the two runs differ. The second run's
// state and Last are the step's.
func (w *World) recheck(s *State, ev Event, first *State) (*State, error) {
	a := &w.again
	a.choices = append(a.choices[:0], w.last.Choices...)
	a.bounds = append(a.bounds[:0], w.last.Bounds...)
	a.sent = append(a.sent[:0], w.last.Sent...)
	strict := w.Strict
	w.Strict, w.rechecking = true, true
	second, err := w.apply(s, ev, a.choices)
	w.Strict, w.rechecking = strict, false
	defer clear(a.sent) // do not keep the messages alive
	differ := func(node NodeID, what string) error {
		return &NondeterminismError{Event: ev, Text: w.Describe(s, ev), Node: node, Handler: HandlerOf(ev, node), What: what}
	}
	if err != nil {
		var hp *HandlerPanic
		if errors.As(err, &hp) {
			return nil, differ(hp.Node, fmt.Sprintf("panicked when run again (%v)", hp.Value))
		}
		return nil, differ(ev.Node, fmt.Sprintf("failed when run again (%v)", err))
	}
	if !slices.Equal(a.bounds, w.last.Bounds) {
		return nil, differ(ev.Node, "made other choices when run again")
	}
	sent := w.last.Sent
	for i := range max(len(sent), len(a.sent)) {
		if i >= len(sent) || i >= len(a.sent) || sent[i].From != a.sent[i].From || sent[i].To != a.sent[i].To || sent[i].FP != a.sent[i].FP {
			from := ev.Node
			if i < len(sent) {
				from = sent[i].From
			} else if i < len(a.sent) {
				from = a.sent[i].From
			}
			return nil, differ(from, "sent other messages when run again")
		}
	}
	for i := range second.nodes {
		if second.nodes[i].fp != first.nodes[i].fp {
			what := "left its node in another state when run again"
			if d := FirstDifference(first.nodes[i].node, second.nodes[i].node); d != "" {
				what += " (" + d + ", first run vs second)"
			}
			return nil, differ(NodeID(i), what)
		}
	}
	if second.fp != first.fp {
		return nil, differ(ev.Node, "had other effects when run again")
	}
	// The first run's state is the second's twin: its records go back
	// for later steps to reuse, as a state the search drops does.
	w.Discard(first)
	return second, nil
}

// A NondeterminismError is a handler that did something else when run
// again on the same input: its step cannot be replayed, so neither can
// the traces through it. Step and Text are set where the path is known.
type NondeterminismError struct {
	Step    int    // 1-based step of the path (0: not known)
	Event   Event  // the step's event
	Text    string // the event in words, when known
	Node    NodeID // the node whose handler differed
	Handler string // Init, Receive, Timer, App or Error
	What    string // what differed, "sent other messages when run again"
}

func (e *NondeterminismError) Error() string {
	where := fmt.Sprintf("on %v", e.Event)
	if e.Text != "" {
		where = "on " + e.Text
	}
	if e.Step > 0 {
		where = fmt.Sprintf("at step %d (%s)", e.Step, strings.TrimPrefix(where, "on "))
	}
	return fmt.Sprintf("the handler is not deterministic (map iteration, time, rand, goroutines, shared memory?): node %d's %s, %s, %s",
		e.Node, e.Handler, where, e.What)
}

// HandlerOf names the handler of node that ev runs: Init, Receive,
// Timer, App or Error; empty for a crash, which runs none.
func HandlerOf(ev Event, node NodeID) string {
	switch ev.Kind {
	case Crash:
		return ""
	case Deliver:
		return handlerNames[receiveH]
	case Timer:
		return handlerNames[timerH]
	case App:
		return handlerNames[appH]
	case Reset:
		if node == ev.Node {
			return handlerNames[initH]
		}
	}
	return handlerNames[errorH]
}

// Current returns the step under way, the choices it has made so far, and
// the state Apply was given (nil under Step, which changes its state in
// place). It is for a watchdog, while Guard.Hold keeps the world's
// goroutine in a handler (which may run on, but neither return nor
// choose): the step may then be run again exactly as far as it got.
func (w *World) Current() (ev Event, choices []int, from *State) {
	return w.last.Event, slices.Clone(w.last.Choices), w.from
}

// apply is Apply without the recheck.
func (w *World) apply(s *State, ev Event, tape []int) (*State, error) {
	w.begin(ev, tape)
	w.from = s
	n := w.reuse(len(s.nodes))
	copy(n.nodes, s.nodes)
	n.net, n.netSum, n.conns, n.calls, n.ext, n.used, n.cut, n.pending = s.net, s.netSum, s.conns, s.calls, s.ext, s.used, s.cut, s.pending
	if err := w.step(n, ev, tape); err != nil {
		return nil, err
	}
	if err := w.finish(n); err != nil {
		return nil, err
	}
	for i, t := range w.touched {
		if t && i < 64 {
			n.fresh |= 1 << uint(i)
		}
	}
	if len(w.cache.runs) > 0 {
		w.stepRecord(s, n)
	}
	return n, nil
}

// Discard gives back a state this world's Apply returned and that
// nothing holds any more (the search drops most of the states it makes:
// they were found before), so that a later Apply reuses it instead of
// allocating one. Of its node states, those the step made for it are
// reused too; the others are shared with the state it was made from.
func (w *World) Discard(s *State) {
	if s == nil || len(w.free) == cap(w.free) {
		return
	}
	for f := s.fresh; f != 0; f &= f - 1 {
		i := bits.TrailingZeros64(f)
		if len(w.spareNodes) < cap(w.spareNodes) {
			w.spareNodes = append(w.spareNodes, s.nodes[i].node)
		}
		s.nodes[i].node = nil
	}
	s.fresh = 0
	w.free = append(w.free, s)
}

// DiscardShell gives back a state Apply returned that nothing holds any
// more, but whose node states and network other states may share (states
// made from it): only its own record is reused.
func (w *World) DiscardShell(s *State) {
	if s == nil || len(w.free) == cap(w.free) {
		return
	}
	s.fresh, s.ownsNet = 0, false
	clear(s.nodes)
	s.net, s.conns, s.ext = nil, nil, nil
	w.free = append(w.free, s)
}

// Pin marks what s shares with k (the node states and network k was
// made with from s, or from a state made from s) as not s's own, so that
// Discard(s) gives back only the rest, and k keeps them. Where k is kept
// and s is not, the search pins s to k rather than give s back as a
// shell only (DiscardShell), whose fresh node states and network, most
// of what a step allocates, would be lost to the collector.
func (w *World) Pin(s, k *State) {
	for f := s.fresh; f != 0; f &= f - 1 {
		i := bits.TrailingZeros64(f)
		if i < len(k.nodes) && ifaceData(s.nodes[i].node) == ifaceData(k.nodes[i].node) {
			s.fresh &^= 1 << uint(i)
		}
	}
	if s.ownsNet && unsafe.SliceData(s.net) == unsafe.SliceData(k.net) {
		s.ownsNet = false
	}
}

// reuse returns a state with room for n node slots, a discarded one if
// there is one; Apply sets every field.
func (w *World) reuse(n int) *State {
	k := len(w.free)
	if k == 0 {
		return newState(n)
	}
	s := w.free[k-1]
	w.free = w.free[:k-1]
	if s.ownsNet {
		// Its network was its own: the next step that changes the
		// network copies into it.
		w.spareNet(s.net[:0])
		s.ownsNet = false
	}
	switch {
	case n <= inlineNodes:
		s.nodes = s.inline[:n:n]
	case cap(s.nodes) >= n:
		s.nodes = s.nodes[:n]
	default:
		s.nodes = make([]slot, n)
	}
	s.fp, s.key, s.keyless, s.fpless, s.fresh = 0, 0, false, false, 0
	return s
}

// Own returns a deep copy of s that Step may change in place.
func (w *World) Own(s *State) *State {
	n := newState(len(s.nodes))
	copy(n.nodes, s.nodes)
	for i := range n.nodes {
		n.nodes[i].node = Copy(n.nodes[i].node)
		n.nodes[i].timers = slices.Clone(n.nodes[i].timers)
	}
	n.net, n.netSum = append(make([]Envelope, 0, len(s.net)+2), s.net...), s.netSum
	n.conns = slices.Clone(s.conns)
	n.calls, n.ext, n.used, n.cut, n.fp, n.key, n.keyless, n.fpless, n.pending = s.calls, s.ext, s.used, s.cut, s.fp, s.key, s.keyless, s.fpless, s.pending
	return n
}

// Step applies ev to s in place, as Apply would to a copy; s must come
// from Own and be used by no one else. Walks use it: they go on from each
// state and never back, so copying would be wasted. Step keeps no
// fingerprints up to date: Seal them before s is hashed, stored or
// compared. After an error s is not to be used.
func (w *World) Step(s *State, ev Event, tape []int) error {
	if w.stopped() {
		return ErrStopped
	}
	w.begin(ev, tape)
	w.netOwn = true
	for i := range w.touched {
		w.touched[i], w.ownTime[i] = true, true
	}
	return w.step(s, ev, tape)
}

// Seal recomputes the fingerprints of a state changed by Step.
func (w *World) Seal(s *State) error {
	for i := range w.touched {
		w.touched[i] = true
	}
	return w.finish(s)
}

// step applies ev to n, a state of the step's own.
func (w *World) step(n *State, ev Event, tape []int) error {
	if ev.Node < 0 || int(ev.Node) >= len(n.nodes) || ev.Peer < 0 || int(ev.Peer) >= len(n.nodes) {
		return fmt.Errorf("%w: %v names a node outside 0..%d", ErrNotEnabled, ev, len(n.nodes)-1)
	}
	if n.ext != nil && n.ext.down.Has(ev.Node) {
		switch ev.Kind {
		case Deliver, Timer, App, Crash:
			return fmt.Errorf("%w: %v: node %d is down", ErrNotEnabled, ev, ev.Node)
		}
	}
	var err error
	switch ev.Kind {
	case Deliver, Drop:
		i := w.findMessage(n, ev)
		if i < 0 {
			return fmt.Errorf("%w: %v: no such message in flight", ErrNotEnabled, ev)
		}
		msg := n.net[i].Msg
		w.last.Msg = msg
		w.removeMessage(n, i)
		if ev.Kind == Drop {
			if w.spec.Transport == Stream || n.used.Drops >= w.spec.Budget.Drops {
				return fmt.Errorf("%w: %v: no drops left", ErrNotEnabled, ev)
			}
			n.used.Drops++
			break
		}
		// The handler gets a copy of msg (invoke makes it).
		err = w.invoke(n, ev.Node, receiveH, ev.Peer, msg, "", nil)
	case Duplicate:
		i := w.findMessage(n, ev)
		if i < 0 || w.spec.Transport == Stream || n.used.Dups >= w.spec.Budget.Dups {
			return fmt.Errorf("%w: %v: no such datagram in flight or no duplications left", ErrNotEnabled, ev)
		}
		n.used.Dups++
		w.last.Msg = n.net[i].Msg
		// The copy goes beside the original, which keeps the network
		// sorted; the two share the message, which no one changes (a
		// handler gets its own copy).
		w.ownNet(n)
		n.net = slices.Insert(n.net, i, n.net[i])
		n.netSum += netTerm(&n.net[i])
	case Timer:
		ts := n.nodes[ev.Node].timers
		j, ok := slices.BinarySearch(ts, ev.Timer)
		if !ok {
			return fmt.Errorf("%w: %v: timer not set", ErrNotEnabled, ev)
		}
		if !n.Periodic(ev.Node, ev.Timer) {
			w.ownTimers(n, ev.Node)
			n.nodes[ev.Node].timers = slices.Delete(n.nodes[ev.Node].timers, j, j+1)
		}
		err = w.invoke(n, ev.Node, timerH, 0, nil, ev.Timer, nil)
	case App:
		if ev.Call < 0 || ev.Call >= len(w.spec.Calls) || w.spec.Calls[ev.Call].To != ev.Node ||
			n.CallMade(ev.Call) || !w.firstPending(n, ev.Call) {
			return fmt.Errorf("%w: %v: not the node's next pending call", ErrNotEnabled, ev)
		}
		n.markCall(ev.Call)
		err = w.invoke(n, ev.Node, appH, 0, nil, "", w.spec.Calls[ev.Call].Call)
	case SocketError:
		// A connection with an end down breaks for free: the crash
		// broke it, and the end up learns it now.
		free := n.downs().Has(ev.Node) || n.downs().Has(ev.Peer)
		if w.spec.Transport != Stream || !free && n.used.Errors >= w.spec.Budget.Errors || !n.hasConn(ev.Node, ev.Peer) {
			return fmt.Errorf("%w: %v: no such connection or no socket errors left", ErrNotEnabled, ev)
		}
		if !free {
			n.used.Errors++
		}
		w.breakConn(n, ev.Node, ev.Peer)
		if !n.downs().Has(ev.Node) {
			err = w.invoke(n, ev.Node, errorH, ev.Peer, nil, "", nil)
		}
		if err == nil && ev.Node != ev.Peer && !n.downs().Has(ev.Peer) {
			err = w.invoke(n, ev.Peer, errorH, ev.Node, nil, "", nil)
		}
	case Partition:
		side, all := ev.Side(), NodeSet(1)<<uint(len(n.nodes)-1)
		if n.cut != 0 || n.used.Partitions >= w.spec.Budget.Partitions || side == 0 || side >= all || ev != PartitionEvent(side) {
			return fmt.Errorf("%w: %v: a partition in force already, none left, or not a side without the highest node", ErrNotEnabled, ev)
		}
		n.used.Partitions++
		n.cut = side
		err = w.cutLinks(n)
	case Heal:
		if n.cut == 0 || ev != (Event{Kind: Heal}) {
			return fmt.Errorf("%w: %v: no partition in force", ErrNotEnabled, ev)
		}
		n.cut = 0
	case Crash:
		if n.used.Crashes >= w.spec.Budget.Crashes {
			return fmt.Errorf("%w: %v: no crashes left", ErrNotEnabled, ev)
		}
		n.used.Crashes++
		w.crash(n, ev.Node)
	case Reset:
		// The reset of a node down is its restart, which the crash
		// paid for.
		id := ev.Node
		if n.downs().Has(id) {
			n.setDown(id, false)
		} else {
			if n.used.Resets >= w.spec.Budget.Resets {
				return fmt.Errorf("%w: %v: no resets left", ErrNotEnabled, ev)
			}
			n.used.Resets++
		}
		fresh, kerr := keepDurable(id, n.nodes[id].node, w.spec.New(id))
		if kerr != nil {
			return kerr
		}
		n.nodes[id] = slot{node: fresh}
		n.clearPeriodic(id)
		w.touched[id] = true
		w.ownTime[id] = true
		var peers []NodeID
		if w.spec.Transport == Stream {
			for _, c := range slices.Clone(n.conns) {
				if c.a == id || c.b == id {
					peer := c.a + c.b - id
					w.breakConn(n, c.a, c.b)
					if peer != id {
						peers = append(peers, peer)
					}
				}
			}
		}
		for _, p := range peers {
			if n.downs().Has(p) {
				continue // it runs no handler
			}
			if err = w.invoke(n, p, errorH, id, nil, "", nil); err != nil {
				break
			}
		}
		if err == nil {
			err = w.invoke(n, id, initH, 0, nil, "", nil)
		}
	default:
		return fmt.Errorf("%w: unknown event kind %d", ErrNotEnabled, ev.Kind)
	}
	if err == nil {
		err = w.refuse(n)
	}
	if err != nil {
		return err
	}
	if w.tapeErr != nil {
		return w.tapeErr
	}
	if w.Strict && len(w.last.Choices) < len(tape) {
		return fmt.Errorf("%w: %v made %d choices but the trace records %d", ErrNotEnabled, ev, len(w.last.Choices), len(tape))
	}
	// Here, not in finish: walks read the state after Step, unsealed.
	return w.monitor(n)
}

// monitor brings the monitors' bits of s, a state a step has just made,
// up to date: pending = (pending || P) && !Q. It does nothing to a world
// without monitors. Running it twice on one state changes nothing.
func (w *World) monitor(s *State) (err error) {
	if len(w.spec.Monitors) == 0 || w.localStep {
		return nil
	}
	i := 0
	defer func() {
		if r := recover(); r != nil {
			err = &MonitorPanic{Monitor: w.spec.Monitors[i].Name, Value: r}
		}
	}()
	for ; i < len(w.spec.Monitors); i++ {
		m := &w.spec.Monitors[i]
		bit := uint32(1) << uint(i)
		on := s.pending&bit != 0 || m.P(s)
		if on && !m.Q(s) {
			s.pending |= bit
		} else {
			s.pending &^= bit
		}
	}
	return nil
}

// A MonitorPanic is a monitor's P or Q that panicked: a bug in the
// property the monitor serves, not in the protocol. Unwrap gives what it
// panicked with when that is an error (properties.Bind makes it a
// *properties.Error), so that callers report it as they report a
// property that panics.
type MonitorPanic struct {
	Monitor string
	Value   any
}

func (e *MonitorPanic) Error() string {
	if err, ok := e.Value.(error); ok {
		return err.Error()
	}
	return fmt.Sprintf("monitor %s panicked: %v", e.Monitor, e.Value)
}

func (e *MonitorPanic) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

func (w *World) begin(ev Event, tape []int) {
	w.tape = tape
	w.from = nil
	w.tapeErr = nil
	w.netOwn = false
	clear(w.touched)
	clear(w.ownTime)
	w.last.Event = ev
	w.last.Msg = nil
	w.last.Sent = w.last.Sent[:0]
	w.last.Choices = w.last.Choices[:0]
	w.last.Bounds = w.last.Bounds[:0]
	w.last.Logs = w.last.Logs[:0]
	w.last.Errors = 0
	w.refused = w.refused[:0]
	w.drawCut = 0
	w.invokes = 0
	w.cache.runs = w.cache.runs[:0]
}

// finish recomputes the fingerprints of the nodes the step touched, then the
// state's.
func (w *World) finish(s *State) (err error) {
	defer func() {
		if r := recover(); r != nil {
			var te *TypeError
			if e, ok := r.(error); ok && errors.As(e, &te) {
				te.locate(w.hashing)
				w.hashing = nil
				err = te
				return
			}
			panic(r)
		}
	}()
	h := &w.h
	for i, t := range w.touched {
		if !t {
			continue
		}
		sl := &s.nodes[i]
		w.hashing = sl.node
		if w.unchanged(s, NodeID(i)) {
			// The handler left the node as it was: the state shares the
			// parent's object and its fingerprints, and the copy goes
			// back for a later step.
			if len(w.spareNodes) < cap(w.spareNodes) {
				w.spareNodes = append(w.spareNodes, sl.node)
			}
			*sl = w.from.nodes[i]
			w.touched[i] = false
			continue
		}
		h.Reset()
		hashSlot(h, s, NodeID(i))
		sl.fp = h.Sum64()
		if w.sym != nil {
			sl.blind = w.sym.blindSlot(s, NodeID(i))
		}
	}
	w.hashing = nil
	if w.NoFingerprints {
		s.fp, s.fpless, s.key, s.keyless = 0, true, 0, true
		return nil
	}
	s.fp, s.fpless = w.stateHash(s), false
	s.key, s.keyless = s.fp, false
	if w.sym != nil {
		if w.NoKeys {
			s.key, s.keyless = 0, true
		} else {
			s.key = w.sym.cachedKey(w, s)
		}
	}
	return nil
}

// unchanged says whether node i of s, a state Apply makes from w.from,
// is byte for byte the parent's node, with the parent's timers: a node
// of plain values (a pointer to a struct without pointers) that the step
// copied and whose handler changed nothing in it, excluded fields
// included. Equal bytes are equal values, hashed alike; the check costs
// a comparison that stops at the first word that differs, where hashing
// costs a pass over the whole node.
func (w *World) unchanged(s *State, i NodeID) bool {
	f := w.from
	// A parent slot with no fingerprint (a state built by hand, as
	// ApplyLocal's) has none to share.
	if f == nil || w.ownTime[i] || s.ext != f.ext || f.nodes[i].fp == 0 {
		return false
	}
	size := w.raw[i]
	a, b := s.nodes[i].node, f.nodes[i].node
	if size == 0 || a == nil || b == nil || ifaceTab(a) != ifaceTab(b) {
		return false
	}
	x, y := ifaceData(a), ifaceData(b)
	if x == nil || y == nil || x == y {
		return false
	}
	return unsafe.String((*byte)(x), size) == unsafe.String((*byte)(y), size)
}

// TouchKey reads the entry of w's key cache where the key of s, a state
// made while NoKeys was set, is looked for, and returns a word of it: a
// prefetch by hand. A caller that makes a batch of states with NoKeys,
// touches their entries one after the other, then asks Key for each,
// has the cache's misses in flight at once, where working each key out
// right after its step waited for its miss alone. It returns 0 without
// symmetry, or for a state with its key.
func (w *World) TouchKey(s *State) uint64 {
	if !s.keyless || s.fpless || w.sym == nil || w.sym.keys == nil {
		return 0
	}
	return w.sym.keySlot(s.fp).key
}

// Symmetric says whether w works out keys (Spec.Symmetry): only then do
// NoKeys and TouchKey save anything.
func (w *World) Symmetric() bool { return w.sym != nil }

// Key returns s's key (see [State.Key]), working it out first for a state
// made while NoKeys was set.
func (w *World) Key(s *State) uint64 {
	w.Fingerprint(s)
	if s.keyless {
		s.key, s.keyless = w.sym.cachedKey(w, s), false
	}
	return s.key
}

// Fingerprint returns s's fingerprint (see [State.Fingerprint]), working
// it out first for a state made while NoFingerprints was set.
func (w *World) Fingerprint(s *State) uint64 {
	if s.fpless {
		s.fp, s.fpless = w.stateHash(s), false
		if w.sym == nil {
			s.key, s.keyless = s.fp, false
		}
	}
	return s.fp
}

// stateHash combines the parts of s's fingerprint: each node's (its
// slot's fingerprint, with its id), the network's and the rest's, without
// a pass over the state's bytes, so that a step pays for what it changed:
// the nodes it touched, and on datagrams the messages it took and sent.
// The nodes' parts are added (each a bijection of the node's fingerprint
// for its id): a sum of independent mixes costs less than a hash of their
// bytes.
func (w *World) stateHash(s *State) uint64 {
	var nodes uint64
	for i := range s.nodes {
		nodes += mix(uint64(i), s.nodes[i].fp)
	}
	x := mix(nodes, uint64(len(s.net))<<32|uint64(len(s.conns)))
	x = mix(x, w.netHash(s))
	for _, c := range s.conns {
		x = mix(x, uint64(c.a)<<32|uint64(uint32(c.b)))
	}
	return w.mixRest(x, s)
}

// mixRest mixes into x what hashRest writes, word by word: a state's
// fingerprint pays a mix a word, where a hash of the words cost a pass of
// the hasher (set up, written, summed) on every step.
func (w *World) mixRest(x uint64, s *State) uint64 {
	x = mix(x, s.calls)
	for j := range w.callWords {
		var y uint64
		if s.ext != nil && j < len(s.ext.more) {
			y = s.ext.more[j]
		}
		x = mix(x, y)
	}
	x = mix(x, uint64(s.used.Resets)<<42|uint64(s.used.Drops)<<21|uint64(s.used.Errors))
	if s.used.Dups != 0 || s.used.Partitions != 0 || s.cut != 0 {
		x = mix(x, uint64(s.used.Dups)<<32|uint64(s.used.Partitions))
		x = mix(x, uint64(s.cut))
	}
	if s.used.Crashes != 0 {
		x = mix(x, uint64(s.used.Crashes)|0x63<<56)
	}
	if len(w.spec.Monitors) > 0 {
		x = mix(x, uint64(s.pending))
	}
	return x
}

// netHash is the fingerprint of s's network: on datagrams the sum that
// the steps keep (the network is a multiset), on streams the messages in
// their order (a queue is a sequence).
func (w *World) netHash(s *State) uint64 {
	if w.spec.Transport != Stream {
		return s.netSum
	}
	var x uint64
	for i := range s.net {
		x = mix(x, netTerm(&s.net[i]))
	}
	return x
}

// hashSlot writes node i's state and timers.
func hashSlot(h *Hasher, s *State, i NodeID) {
	sl := &s.nodes[i]
	h.Value(sl.node)
	h.Uint64(uint64(len(sl.timers)))
	for _, name := range sl.timers {
		h.String(name)
	}
	// Only when there are any, so that nodes without periodic timers
	// hash as they did before there were periodic timers.
	if pt := s.periodicOf(i); len(pt) > 0 {
		h.Uint64(uint64(len(pt)))
		for _, t := range pt {
			h.String(t.name)
		}
	}
	// A node down: with its slot, so that renaming carries it with the
	// node; only then, so that nodes up hash as before there were
	// crashes.
	if s.ext != nil && s.ext.down.Has(i) {
		h.Uint64(downMark)
	}
}

// downMark is what hashSlot writes after the slot of a node down.
const downMark = 0x646f776e // "down"

// hashRest writes what a state holds besides its nodes and network (for
// a state's fingerprint, mixRest mixes the same words): the
// driver's progress, the failures used and the partition in force, its
// nodes renamed by perm (nil: as they are).
func (w *World) hashRest(h *Hasher, s *State, perm []NodeID) {
	h.Uint64(s.calls)
	// A fixed number of words for calls from 64 on, so that a state that
	// has made none of them hashes alike whether or not it has the words.
	for j := range w.callWords {
		var x uint64
		if s.ext != nil && j < len(s.ext.more) {
			x = s.ext.more[j]
		}
		h.Uint64(x)
	}
	h.Uint64(uint64(s.used.Resets)<<42 | uint64(s.used.Drops)<<21 | uint64(s.used.Errors))
	// Only when used, so that states of worlds without these failures
	// hash as they did before there were any.
	if s.used.Dups != 0 || s.used.Partitions != 0 || s.cut != 0 {
		h.Uint64(uint64(s.used.Dups)<<32 | uint64(s.used.Partitions))
		h.Uint64(uint64(renameCut(s.cut, perm, len(s.nodes))))
	}
	if s.used.Crashes != 0 {
		h.Uint64(uint64(s.used.Crashes) | 0x63<<56)
	}
	// Only with monitors, so that other worlds hash as they did before
	// there were monitors (and do no more work). Renaming keeps the bits
	// (see Monitor), so the Key hashes them as they are too.
	if len(w.spec.Monitors) > 0 {
		h.Uint64(uint64(s.pending))
	}
}

func (w *World) findMessage(s *State, ev Event) int {
	if w.spec.Transport != Stream {
		// Datagrams are sorted by (To, From, FP): a binary search, by
		// hand (cmpDatagram through a closure would escape).
		key := Envelope{From: ev.Peer, To: ev.Node, FP: ev.Msg}
		lo, hi := 0, len(s.net)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if cmpDatagram(&s.net[m], &key) < 0 {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo < len(s.net) && cmpDatagram(&s.net[lo], &key) == 0 {
			return lo
		}
		return -1
	}
	for i := range s.net {
		e := &s.net[i]
		if e.To != ev.Node || e.From != ev.Peer {
			continue
		}
		// only the head of the queue may be delivered
		if e.FP == ev.Msg {
			return i
		}
		return -1
	}
	return -1
}

func (w *World) ownNet(s *State) {
	if !w.netOwn {
		// Room for a few sends, so that they do not grow it again; in
		// the network of a discarded state, if it has the room.
		s.net = append(w.netRoom(len(s.net)+2), s.net...)
		s.ownsNet = true
		w.netOwn = true
	}
}

// netRoom returns an empty network with room for n messages: a spare
// one if one has the room, else a new one.
//
// A step that changes the network copies it; the states the search
// discards give theirs back (reuse). With one spare, a third of etcd
// raft's copies found none, the spare taken by the step before or made
// for a smaller network, and made one: a fifth of what its search
// allocated.
func (w *World) netRoom(n int) []Envelope {
	for j := len(w.spareNets) - 1; j >= 0; j-- {
		if buf := w.spareNets[j]; cap(buf) >= n {
			last := len(w.spareNets) - 1
			w.spareNets[j] = w.spareNets[last]
			w.spareNets[last] = nil
			w.spareNets = w.spareNets[:last]
			return buf
		}
	}
	return make([]Envelope, 0, n)
}

// spareNet keeps net, empty, for netRoom: past maxSpareNets, in place of
// the smallest if that is smaller, so that networks too small for the
// steps now under way do not stay.
func (w *World) spareNet(net []Envelope) {
	if len(w.spareNets) < maxSpareNets {
		w.spareNets = append(w.spareNets, net)
		return
	}
	j := 0
	for k, buf := range w.spareNets {
		if cap(buf) < cap(w.spareNets[j]) {
			j = k
		}
	}
	if cap(w.spareNets[j]) < cap(net) {
		w.spareNets[j] = net
	}
}

// maxSpareNets bounds the networks a world keeps for reuse.
const maxSpareNets = 8

func (w *World) removeMessage(s *State, i int) {
	s.netSum -= netTerm(&s.net[i])
	if !w.netOwn {
		// One copy, without the message, rather than a copy and a shift.
		s.net = append(append(w.netRoom(len(s.net)+1), s.net[:i]...), s.net[i+1:]...)
		s.ownsNet, w.netOwn = true, true
		return
	}
	s.net = slices.Delete(s.net, i, i+1)
}

func (w *World) ownTimers(s *State, id NodeID) {
	if !w.ownTime[id] {
		s.nodes[id].timers = slices.Clone(s.nodes[id].timers)
		w.ownTime[id] = true
	}
}

// renameCut returns the side of partition cut (of n nodes) with node i
// renamed perm[i] (nil: none), as the side without the highest node.
func renameCut(cut NodeSet, perm []NodeID, n int) NodeSet {
	if cut == 0 || perm == nil {
		return cut
	}
	var out NodeSet
	for t := uint64(cut); t != 0; t &= t - 1 {
		out = out.Add(perm[bits.TrailingZeros64(t)])
	}
	if out.Has(NodeID(n - 1)) {
		out = NodeSet(1<<uint(n)-1) &^ out
	}
	return out
}

// cutLinks makes the partition just put in force take effect: datagrams
// in flight across it are lost, and connections across it break, what is
// queued on them lost and both ends told (Error), lower end first, as a
// socket error does, in the order of the connections.
func (w *World) cutLinks(s *State) error {
	if w.spec.Transport != Stream {
		if slices.ContainsFunc(s.net, func(e Envelope) bool { return s.Cut(e.From, e.To) }) {
			w.ownNet(s)
			s.net = slices.DeleteFunc(s.net, func(e Envelope) bool { return s.Cut(e.From, e.To) })
			s.netSum = netSumOf(s)
		}
		return nil
	}
	var broken []conn
	for _, c := range s.conns {
		if s.Cut(c.a, c.b) {
			broken = append(broken, c)
		}
	}
	for _, c := range broken {
		w.breakConn(s, c.a, c.b)
	}
	for _, c := range broken {
		// A node down runs no handler.
		if !s.downs().Has(c.a) {
			if err := w.invoke(s, c.a, errorH, c.b, nil, "", nil); err != nil {
				return err
			}
		}
		if !s.downs().Has(c.b) {
			if err := w.invoke(s, c.b, errorH, c.a, nil, "", nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// refuse tells each node that sent across the partition in force during
// the step, on a stream, that the connection failed (Error), once per
// peer in a step, in the order of the sends: what its Error handler
// sends to that peer again is lost without a word, as the connection
// was refused already.
func (w *World) refuse(s *State) error {
	for i := 0; i < len(w.refused); i++ {
		l := w.refused[i]
		if err := w.invoke(s, l.from, errorH, l.to, nil, "", nil); err != nil {
			return err
		}
	}
	return nil
}

// crash stops node id (a Crash): it is down, its timers are cleared, and
// on streams the messages in flight to it are lost (its connections can
// never deliver them); its connections stay, half open, until a socket
// error or its restart breaks them. Its state stays as it stopped: the
// node object is copied only so that its slot, whose fingerprint holds
// the down bit, is the step's own.
func (w *World) crash(s *State, id NodeID) {
	sl := &s.nodes[id]
	if !w.touched[id] {
		sl.node, w.raw[id] = w.copyNode(sl.node)
		w.touched[id] = true
	}
	w.ownTime[id] = true
	sl.timers = nil
	s.clearPeriodic(id)
	s.setDown(id, true)
	if w.spec.Transport == Stream && slices.ContainsFunc(s.net, func(e Envelope) bool { return e.To == id }) {
		w.ownNet(s)
		s.net = slices.DeleteFunc(s.net, func(e Envelope) bool { return e.To == id })
		s.netSum = netSumOf(s)
	}
}

// A link is a sender and a receiver.
type link struct{ from, to NodeID }

// breakConn closes the connection a<->b and loses what is queued on it.
func (w *World) breakConn(s *State, a, b NodeID) {
	if a > b {
		a, b = b, a
	}
	i, ok := slices.BinarySearchFunc(s.conns, conn{a, b}, cmpConn)
	if !ok {
		return
	}
	s.conns = slices.Delete(slices.Clone(s.conns), i, i+1)
	w.ownNet(s)
	s.net = slices.DeleteFunc(s.net, func(e Envelope) bool {
		return (e.From == a && e.To == b) || (e.From == b && e.To == a)
	})
	s.netSum = netSumOf(s)
}

func (w *World) send(s *State, from, to NodeID, msg Message) {
	if to < 0 || int(to) >= len(s.nodes) {
		panic(fmt.Sprintf("Send to node %d: nodes are 0 to %d", to, len(s.nodes)-1))
	}
	if w.observer != nil && w.observer[from] {
		panic(fmt.Sprintf("Send to node %d: node %d is an observer (Spec.Observers), which never sends", to, from))
	}
	// Hashed before it is copied, as a fingerprint must be of the message
	// the handler sent. hashing names it to invoke's recover, should it
	// hold what cannot be hashed.
	w.h.Reset()
	w.hashing = msg
	p := w.h.value(msg)
	w.hashing = nil
	e := Envelope{From: from, To: to, Msg: msg, FP: w.h.Sum64()}
	if p != nil && (p.copier || !p.flat) {
		e.Msg = Copy(msg)
	}
	if w.sym != nil {
		e.bfp = w.sym.blindMessage(msg)
	}
	w.post(s, e)
}

// post puts e, a message a handler of s sent, in s's network: lost if a
// partition cuts its link.
func (w *World) post(s *State, e Envelope) {
	from, to := e.From, e.To
	if s.Cut(from, to) {
		// Lost at the partition; on a stream the sender is told.
		w.last.Sent = append(w.last.Sent, e)
		if w.spec.Transport == Stream && !slices.Contains(w.refused, link{from, to}) {
			w.refused = append(w.refused, link{from, to})
		}
		return
	}
	w.ownNet(s)
	var i int
	if w.spec.Transport == Stream {
		a, b := min(from, to), max(from, to)
		if j, ok := slices.BinarySearchFunc(s.conns, conn{a, b}, cmpConn); !ok {
			// The connections are shared with the state this one came
			// from: a new slice, made once.
			conns := make([]conn, len(s.conns)+1)
			copy(conns, s.conns[:j])
			conns[j] = conn{a, b}
			copy(conns[j+1:], s.conns[j:])
			s.conns = conns
		}
		// after the last message of the same queue
		i = len(s.net)
		for i > 0 && (s.net[i-1].From > from || (s.net[i-1].From == from && s.net[i-1].To > to)) {
			i--
		}
	} else {
		// A binary search by hand: one through a closure would move e to
		// the heap, an allocation a message.
		lo, hi := 0, len(s.net)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if cmpDatagram(&s.net[m], &e) < 0 {
				lo = m + 1
			} else {
				hi = m
			}
		}
		i = lo
	}
	s.net = slices.Insert(s.net, i, e)
	s.netSum += netTerm(&e)
	w.last.Sent = append(w.last.Sent, e)
}

type handler uint8

const (
	initH handler = iota
	receiveH
	timerH
	appH
	errorH
	downH // a layer's Down (see Stack)
)

var handlerNames = [...]string{"Init", "Receive", "Timer", "App", "Error", "Down"}

// invoke runs one handler of node id on a private copy of its state, or
// takes what it does from the step cache.
func (w *World) invoke(s *State, id NodeID, h handler, peer NodeID, msg Message, timer string, call AppCall) (err error) {
	w.invokes++
	if len(w.cache.runs) > 0 {
		w.stepStart(id)
	}
	recording := false
	if w.stepCacheable(s, id, h) {
		if w.stepLookup(s, id, h, peer) {
			return nil
		}
		recording = true
	}
	// The handler gets a copy of the message it receives: one it keeps
	// and changes later must not change the one in flight, which other
	// states share. A message of plain values is its own copy.
	if h == receiveH && msg != nil {
		if p := planOf(typeOf(msg)); p.copier || !p.flat {
			msg = Copy(msg)
		}
	}
	sl := &s.nodes[id]
	c := &w.ctx
	c.s, c.self, c.mark = s, id, layerMark{}
	// Reads of crypto/rand.Reader on this goroutine are this handler's
	// choices until it returns.
	if g := gid.Current(); g != w.drawG || w.draw == nil {
		w.draw, w.drawG = cellOf(g), g
	}
	dc := w.draw
	prevCtx, prevW := dc.ctx, dc.w
	dc.ctx, dc.w, dc.last = c, w, nil
	guarded, ran := false, false
	defer func() {
		dc.done()
		if ran {
			// After done, which may cut the run's last draw.
			w.stepRan()
		}
		dc.ctx, dc.w, dc.last = prevCtx, prevW, nil
		if g := w.Guard; g != nil && guarded {
			g.exit()
		}
		if r := recover(); r != nil {
			if te, ok := r.(*TypeError); ok {
				// A message the handler sent, or else the node.
				if w.hashing != nil {
					te.locate(w.hashing)
				}
				te.locate(sl.node)
				w.hashing = nil
				err = te
				return
			}
			hp := &HandlerPanic{Node: id, Handler: handlerNames[h], Value: r, Stack: string(debug.Stack())}
			if c.mark.layer != "" {
				hp.Layer, hp.Handler = c.mark.layer, handlerNames[c.mark.handler]
			}
			err = hp
		}
	}()
	// Copied here, under the recover: a node New built may hold what
	// cannot be copied.
	if !w.touched[id] {
		sl.node, w.raw[id] = w.copyNode(sl.node)
		w.touched[id] = true
	}
	if g := w.Guard; g != nil {
		g.enter()
		guarded = true
	}
	switch h {
	case initH:
		sl.node.Init(c)
	case receiveH:
		sl.node.Receive(c, peer, msg)
	case timerH:
		sl.node.Timer(c, timer)
	case appH:
		sl.node.App(c, call)
	case errorH:
		w.last.Errors++
		sl.node.Error(c, peer)
	}
	ran = recording
	return nil
}

type nodeCtx struct {
	w    *World
	s    *State
	self NodeID
	// For stacked nodes (see Stack): the layer whose handler is under way,
	// the stack's run with its layers' contexts, reused from step to step,
	// and the timer names made of a layer's name and its own.
	mark       layerMark
	run        stackRun
	timerNames map[layerTimer]string // keys without full
}

func (c *nodeCtx) Self() NodeID { return c.self }
func (c *nodeCtx) Nodes() int   { return len(c.s.nodes) }

func (c *nodeCtx) Send(to NodeID, msg Message) { c.w.send(c.s, c.self, to, msg) }

func (c *nodeCtx) SetTimer(name string) {
	ts := c.s.nodes[c.self].timers
	i, ok := slices.BinarySearch(ts, name)
	if ok {
		return
	}
	c.w.ownTimers(c.s, c.self)
	c.s.nodes[c.self].timers = slices.Insert(c.s.nodes[c.self].timers, i, name)
}

func (c *nodeCtx) SetPeriodic(name string) {
	c.SetTimer(name)
	c.s.setPeriodic(c.self, name, true)
}

func (c *nodeCtx) CancelTimer(name string) {
	ts := c.s.nodes[c.self].timers
	i, ok := slices.BinarySearch(ts, name)
	if !ok {
		return
	}
	c.w.ownTimers(c.s, c.self)
	c.s.nodes[c.self].timers = slices.Delete(c.s.nodes[c.self].timers, i, i+1)
	c.s.setPeriodic(c.self, name, false)
}

func (c *nodeCtx) Choose(n int) int {
	w := c.w
	if n <= 0 {
		panic(fmt.Sprintf("Choose(%d): n must be at least 1", n))
	}
	pos := len(w.last.Choices)
	v := 0
	switch {
	case pos < len(w.tape):
		v = w.tape[pos]
		if v < 0 || v >= n {
			if w.tapeErr == nil {
				w.tapeErr = fmt.Errorf("%w: choice %d is %d, outside [0, %d)", ErrNotEnabled, pos, v, n)
			}
			v = 0
		}
	case w.Strict:
		if w.tapeErr == nil {
			w.tapeErr = fmt.Errorf("%w: the step makes more choices than the trace records", ErrNotEnabled)
		}
	case w.Chooser != nil:
		v = w.Chooser(n)
	}
	// A watchdog may be reading the choices so far (Current): a handler
	// it holds may run on, but not choose, until it is done.
	g := w.Guard
	if g != nil {
		g.mu.Lock()
	}
	w.last.Choices = append(w.last.Choices, v)
	if w.drawCut > 0 {
		n = v + 1 // past a rejected draw: nothing more to try here
	}
	w.last.Bounds = append(w.last.Bounds, n)
	if g != nil {
		g.mu.Unlock()
	}
	return v
}

// cutDraws says that the step's choice i was a draw that crypto/rand.Int
// rejected (see draw.go): every value from the rejected one up leads to a
// value the draw's earlier ones already gave, so the search need try no
// more values of choice i, nor any other value of a choice after it, on
// this run. Their bounds become one past the value each took, which
// NextTape reads as "nothing more to try".
func (w *World) cutDraws(i int) {
	if w.drawCut > 0 && w.drawCut <= i+1 {
		return
	}
	g := w.Guard
	if g != nil {
		g.mu.Lock()
	}
	w.drawCut = i + 1
	for j := i; j < len(w.last.Bounds); j++ {
		w.last.Bounds[j] = w.last.Choices[j] + 1
	}
	if g != nil {
		g.mu.Unlock()
	}
}

// Deliver has no layer above to go to: the node is not a layer of a
// stack, or the top one.
func (c *nodeCtx) Deliver(from NodeID, msg Message) {
	panic(fmt.Sprintf("Deliver from %d: there is no layer above to deliver %s to", from, Dump(msg)))
}

func (c *nodeCtx) Logf(format string, args ...any) {
	if c.w.Record {
		c.w.last.Logs = append(c.w.last.Logs, fmt.Sprintf("%d: ", c.self)+fmt.Sprintf(format, args...))
	}
}

// logf records a line of layer layer of a stacked node: "1 transport: ...".
func (c *nodeCtx) logf(layer, format string, args ...any) {
	if c.w.Record {
		c.w.last.Logs = append(c.w.last.Logs, fmt.Sprintf("%d %s: ", c.self, layer)+fmt.Sprintf(format, args...))
	}
}

// Describe says in words what ev does in s, naming the message it carries,
// and for a stacked node the layer that handles it ("[transport]"; a
// timer's name says its layer).
func (w *World) Describe(s *State, ev Event) string {
	text := w.describe(s, ev)
	if ev.Node >= 0 && int(ev.Node) < len(s.nodes) {
		if st, ok := s.nodes[ev.Node].node.(*Stacked); ok {
			var call AppCall
			if ev.Kind == App && ev.Call >= 0 && ev.Call < len(w.spec.Calls) {
				call = w.spec.Calls[ev.Call].Call
			}
			if l := st.layerFor(ev, call); l != "" {
				text += " [" + l + "]"
			}
		}
	}
	return text
}

func (w *World) describe(s *State, ev Event) string {
	switch ev.Kind {
	case Deliver, Drop, Duplicate:
		for _, e := range s.net {
			if e.From == ev.Peer && e.To == ev.Node && e.FP == ev.Msg {
				return fmt.Sprintf("%s %s %d->%d", ev.Kind, Dump(e.Msg), ev.Peer, ev.Node)
			}
		}
	case App:
		if ev.Call >= 0 && ev.Call < len(w.spec.Calls) {
			return fmt.Sprintf("app %s at %d", Dump(w.spec.Calls[ev.Call].Call), ev.Node)
		}
	case Partition:
		return fmt.Sprintf("partition %v | %v", ev.Side(), NodeSet(1<<uint(len(s.nodes))-1)&^ev.Side())
	case Heal:
		if s.cut != 0 {
			return fmt.Sprintf("heal %v | %v", s.cut, NodeSet(1<<uint(len(s.nodes))-1)&^s.cut)
		}
	}
	return ev.String()
}

// Run applies path p from s, calling each (if not nil) after every step with
// its index, the new state and what the step did. It stops at the first
// error, which it returns with the index of the failing step.
func (w *World) Run(s *State, p Path, each func(i int, s *State, info *StepInfo) error) (*State, error) {
	for i, st := range p {
		next, err := w.Apply(s, st.Event, st.Choices)
		if err != nil {
			return s, &StepError{Index: i, Event: st.Event, Err: err}
		}
		s = next
		if each != nil {
			if err := each(i, s, &w.last); err != nil {
				return s, err
			}
		}
	}
	return s, nil
}

// A StepError is an error at step Index of a path.
type StepError struct {
	Index int
	Event Event
	Err   error
}

func (e *StepError) Error() string { return fmt.Sprintf("step %d (%v): %v", e.Index+1, e.Event, e.Err) }
func (e *StepError) Unwrap() error { return e.Err }

// A Guard tells a watchdog when handlers start and end. Its counter is odd
// while a handler runs.
//
// Each world's goroutine writes its guard's counter twice a step: the
// padding keeps two guards off one cache line (128 bytes, the pair of
// lines a core fetches together), where the two workers' writes would
// take the line from each other at every step (Randtree 5's walks spent
// a fifth of their time on two workers so).
type Guard struct {
	seq  atomic.Uint64
	held atomic.Bool
	mu   sync.Mutex // held by Hold
	_    [128 - 24]byte
}

func (g *Guard) enter() { g.seq.Add(1) }

func (g *Guard) exit() {
	g.seq.Add(1)
	if g.held.Load() {
		// A watchdog is reading what this goroutine wrote before the
		// handler: wait until it is done.
		g.mu.Lock()
		g.mu.Unlock() //nolint:staticcheck // an empty critical section: a wait
	}
}

// Hold runs f while the handler that token (from Stuck) names can neither
// return nor choose, so that f may read what the world's goroutine wrote
// before it called the handler (the path it is exploring) and the choices
// it has made (Current), and reports whether f ran: false when that
// handler has returned already. f must not wait for the world's goroutine.
func (g *Guard) Hold(token uint64, f func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held.Store(true)
	defer g.held.Store(false)
	// exit adds to seq, then loads held; this stores held, then loads seq:
	// either exit sees held and waits, or this sees the handler returned.
	if g.seq.Load() != token {
		return false
	}
	f()
	return true
}

// Stuck reports whether a handler has been running since the last call that
// returned the same token. Call it every tick; it returns the new token.
func (g *Guard) Stuck(last uint64) (token uint64, stuck bool) {
	v := g.seq.Load()
	return v, v%2 == 1 && v == last
}

// Dumps the sent messages of a step in words.
func DescribeSent(sent []Envelope) string {
	var parts []string
	for _, e := range sent {
		parts = append(parts, fmt.Sprintf("%s %d->%d", Dump(e.Msg), e.From, e.To))
	}
	return strings.Join(parts, ", ")
}
