package properties

import (
	"fmt"
	"math/bits"
	"reflect"
	"slices"
	"strings"

	"github.com/livecheck/livecheck/sim"
)

// This file is client histories: a sequential specification (Spec), the
// record a node keeps of its clients' operations (History), and the
// incremental linearizability check that History does as it records.
// Linearizable (linearizable.go) is the property that reads it.

// An Outcome is one way an operation can go from a state of a sequential
// specification: the output it returns and the state it leaves.
type Outcome[S, O comparable] struct {
	Out  O
	Next S
}

// A Spec is a sequential specification of an object that clients share
// (a register, a key-value store): what each operation may return when
// the operations run one at a time. A history of concurrent operations
// is linearizable when each operation can be given a point between its
// invocation and its response such that, run in that order, the spec
// allows every output the history saw.
//
// S, I and O are the spec's states, the operations' inputs and their
// outputs; all are compared with ==, and hashed as node states are (see
// sim.Fingerprint), so they are plain values: numbers, strings, structs
// of them.
type Spec[S, I, O comparable] struct {
	// Name names the spec in reports ("kv", "register"); required.
	Name string
	// Init is the state before any operation (with Key: of each key).
	Init func() S
	// Step lists the ways operation in can go from state: each output it
	// may return, with the state after it. One outcome is a
	// deterministic spec; several are a nondeterministic one (a queue
	// that may return any element); none means in cannot run in state.
	Step func(state S, in I) []Outcome[S, O]
	// Key, when set, partitions the operations: a history is
	// linearizable when the operations on each key are, so each key is
	// checked alone, from Init, which is then one key's state. Nil: one
	// partition.
	Key func(in I) string
}

// model is a Spec with its types erased, for History, which a node
// holds as one type whatever its spec.
type model struct {
	name    string
	init    func() any
	step    func(state, in any) []outcome
	key     func(in any) string
	in, out reflect.Type
}

type outcome struct{ out, next any }

func erase[S, I, O comparable](spec Spec[S, I, O]) *model {
	m := &model{name: spec.Name, in: reflect.TypeFor[I](), out: reflect.TypeFor[O]()}
	m.init = func() any { return spec.Init() }
	m.step = func(state, in any) []outcome {
		os := spec.Step(state.(S), in.(I))
		out := make([]outcome, len(os))
		for i, o := range os {
			out[i] = outcome{o.Out, o.Next}
		}
		return out
	}
	m.key = func(any) string { return "" }
	if spec.Key != nil {
		m.key = func(in any) string { return spec.Key(in.(I)) }
	}
	return m
}

// validate says what is wrong with spec, if anything.
func validate[S, I, O comparable](spec Spec[S, I, O]) error {
	switch {
	case spec.Name == "":
		return fmt.Errorf("a sequential spec needs a Name, for reports")
	case spec.Init == nil || spec.Step == nil:
		return fmt.Errorf("sequential spec %s needs Init and Step", spec.Name)
	}
	return nil
}

// MaxPending is the most operations a History holds pending on one key
// (one bit each in a possibility).
const MaxPending = 64

// MaxPossibilities is the most possibilities (see History) a History
// keeps for one key before it gives up: an error the property reports,
// not a verdict. A protocol's history in a search stays far below it; a
// long recorded history with many operations that never returned can
// reach it.
const MaxPossibilities = 1 << 16

// A History is a record of client operations, kept in a node's state:
// the node's handlers call Invoke when a client starts an operation and
// Return when it gets the response, and the order of those steps is the
// real-time order of the operations. Linearizable reads it.
//
// It checks as it records: it keeps, for each key, the operations
// pending and the possibilities, each a state of the spec with the
// pending operations that may already have taken effect in it (and
// what they returned), that remain after the operations completed so
// far; a Return keeps the possibilities in which the operation can take
// effect with the output it got, and none left is a violation. Only
// that is hashed, so two interleavings that leave the same
// possibilities are one state, and a step costs an update of a few
// possibilities, not a search of the history. The operations recorded
// are kept too, for the violation's message, but not hashed.
//
// All clients whose operations must be ordered against each other are
// recorded in one History, in one node (a client node running several
// sessions, as Jepsen's client process does): two nodes' steps have no
// order that a History could see. Tag the field `livecheck:"durable"`:
// the history is the test's record, which a crash of the client node
// does not erase (its operations then stay pending, as a lost
// response would leave them).
//
//	type clients struct {
//		sim.BaseNode
//		H properties.History `livecheck:"durable"`
//		...
//	}
//	New: func(sim.NodeID) sim.Node { return &clients{H: properties.NewHistory(kvSpec)} }
//	// in App:     c.H.Invoke(session, Get{Key: "x"})
//	// in Receive: c.H.Return(session, Value{V: 1})
//
// A History is a value: copies share what they have not changed since,
// and each update builds what it changes anew, so a node's copy is
// cheap. The zero History has no spec: Invoke on it is an error the
// property reports.
type History struct {
	fp uint64 // the fingerprint of h's possibilities: what a state hashes
	h  *hist  `livecheck:"-"`
}

// hist is a History's content, never changed once built.
type hist struct {
	m     *model
	parts []*part // by key
	// bad is the violation: the message, empty while linearizable;
	// nl the same as data.
	bad string
	nl  *NotLinearizable
	// err is a wrong use of the History, or MaxPossibilities passed:
	// no verdict. wide says it is the latter (or MaxPending): the log
	// goes on, for the check after the fact (CheckAfter).
	err  string
	wide bool
	// events counts Invoke and Return calls; log is the operations, the
	// last first. Neither is hashed.
	events int
	log    *entry
}

// entry is one event in the log: an invocation (call 0) or a response
// (call the index of its invocation). Events count from 1. An Abandon
// is in the log too (abandon, at the events before it), not counted
// among the events: a HistoryRecord replays it.
type entry struct {
	prev    *entry
	at      int
	call    int
	client  int
	key     string
	v       any // the input, or the output
	abandon bool
}

// part is the pending operations and possibilities of one key.
type part struct {
	key     string
	pending []pend   // in canonical order (cmpPend)
	poss    []config // in canonical order (by fp), no two equal
	fp      uint64
}

// pend is an operation pending. An orphan's client started another
// operation before it returned: it may still take effect, but will not
// return.
type pend struct {
	client int
	orphan bool
	in     any
	fp     uint64 // of client, orphan and in
	call   int    // its invocation among the events (not hashed)
}

// config is one possibility: a state of the spec, and the pending
// operations (bit i: pending[i]) that have taken effect in it, with
// their outputs (outs[i]; nil for an orphan, whose output no one sees).
type config struct {
	state any
	lin   uint64
	outs  []any
	fp    uint64
}

// NewHistory returns an empty History of spec's operations. A spec
// without a Name, Init or Step gives a History whose first use is an
// error the property reports.
func NewHistory[S, I, O comparable](spec Spec[S, I, O]) History {
	h := &hist{}
	if err := validate(spec); err != nil {
		h.err = err.Error()
	} else {
		h.m = erase(spec)
		specs.Store(spec.Name, h.m)
	}
	return h.value()
}

// value wraps h, with its fingerprint.
func (h *hist) value() History {
	fp := uint64(len(h.parts))
	for _, p := range h.parts {
		fp = mix(fp, p.fp)
	}
	if h.bad != "" {
		fp = mix(fp, 1)
	}
	if h.err != "" {
		fp = mix(fp, 2)
	}
	if h.wide {
		fp = mix(fp, uint64(h.events)) // its log goes on
	}
	return History{fp: fp, h: h}
}

// clone returns a shallow copy of h to change.
func (h *hist) clone() *hist {
	c := *h
	c.parts = slices.Clone(h.parts)
	return &c
}

// Spec returns the name of the History's spec ("" for the zero History).
func (x History) Spec() string {
	if x.h == nil || x.h.m == nil {
		return ""
	}
	return x.h.m.name
}

// Violation returns why the operations recorded are not linearizable,
// naming the operations that cannot be ordered; "" while they are.
// NotLinearizable says the same as data.
func (x History) Violation() string {
	if x.h == nil {
		return ""
	}
	return x.h.bad
}

// Events returns the number of events recorded: Invoke and Return
// calls, an Op's Call and Return count among them. A report puts each
// on the step that recorded it by watching the number grow.
func (x History) Events() int {
	if x.h == nil {
		return 0
	}
	return x.h.events
}

// Err returns a wrong use of the History (an input of the wrong type, a
// Return without an Invoke, the zero History) or a history too wide to
// check (MaxPossibilities): no verdict. "" when there is none.
func (x History) Err() string {
	switch {
	case x.h == nil:
		return ""
	case x.h.m == nil && x.h.err == "":
		return "the History has no spec: build it with properties.NewHistory"
	}
	return x.h.err
}

// Pending returns the number of operations invoked that have not
// returned, orphans included.
func (x History) Pending() int {
	if x.h == nil {
		return 0
	}
	n := 0
	for _, p := range x.h.parts {
		n += len(p.pending)
	}
	return n
}

// Possibilities returns the number of possibilities kept, over every key:
// what the history costs a state.
func (x History) Possibilities() int {
	if x.h == nil {
		return 0
	}
	n := 0
	for _, p := range x.h.parts {
		n += len(p.poss)
	}
	return n
}

// An Op is one operation of a History, as Ops returns it.
type Op struct {
	Client int
	Key    string
	Input  any
	// Output is what it returned; nil while pending.
	Output any
	// Call and Return are the positions of its invocation and its
	// response among the History's events, from 1; Return is 0 for an
	// operation that has not returned.
	Call, Return int
}

func (o Op) String() string {
	if o.Return == 0 {
		return fmt.Sprintf("client %d: %v pending (from %d)", o.Client, o.Input, o.Call)
	}
	return fmt.Sprintf("client %d: %v -> %v (%d-%d)", o.Client, o.Input, o.Output, o.Call, o.Return)
}

// Ops returns the operations recorded, in the order of their
// invocations: what an after-the-fact checker (porcupine) takes.
func (x History) Ops() []Op {
	if x.h == nil {
		return nil
	}
	return x.h.log.ops()
}

// ops returns the operations of the log l, in the order of their
// invocations.
func (l *entry) ops() []Op {
	var out []Op
	ret := map[int]*entry{}
	for e := l; e != nil; e = e.prev {
		if e.abandon {
			continue
		}
		if e.call != 0 {
			ret[e.call] = e
			continue
		}
		o := Op{Client: e.client, Key: e.key, Input: e.v, Call: e.at}
		if r := ret[e.at]; r != nil {
			o.Output, o.Return = r.v, r.at
		}
		out = append(out, o)
	}
	slices.Reverse(out)
	return out
}

// String is the History in a dump: its pending operations and the
// possibilities per key.
func (x History) String() string {
	switch {
	case x.h == nil:
		return "history{}"
	case x.h.bad != "":
		return "history{not linearizable}"
	case x.Err() != "":
		return "history{error}"
	}
	var b strings.Builder
	b.WriteString("history{")
	for i, p := range x.h.parts {
		if i > 0 {
			b.WriteByte(' ')
		}
		if p.key != "" {
			fmt.Fprintf(&b, "%s:", p.key)
		}
		b.WriteByte('[')
		for j, q := range p.pending {
			if j > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "c%d:%v", q.client, q.in)
			if q.orphan {
				b.WriteString("(orphan)")
			}
		}
		fmt.Fprintf(&b, "] %d possible", len(p.poss))
	}
	b.WriteByte('}')
	return b.String()
}

// Invoke records that client starts operation in. A client has one
// operation at a time: if its last one has not returned, that one stays
// pending for ever (it may still take effect, as a request whose
// response was lost). A client is any number the node chooses, a
// session's index say.
func (x *History) Invoke(client int, in any) {
	h := x.h
	switch {
	case h == nil || h.m == nil:
		x.fail("Invoke on a History without a spec: build it with properties.NewHistory")
		return
	case h.bad != "" || h.err != "" && !h.wide:
		return // the verdict is in
	case !typeIs(in, h.m.in):
		x.fail(fmt.Sprintf("client %d invoked %v, a %T, but spec %s takes a %v", client, in, in, h.m.name, h.m.in))
		return
	}
	key, err := guarded(func() string { return h.m.key(in) })
	if err != "" {
		x.fail(fmt.Sprintf("spec %s's Key panicked on %v: %s", h.m.name, in, err))
		return
	}
	h = h.clone()
	h.events++
	h.log = &entry{prev: h.log, at: h.events, client: client, key: key, v: in}
	if h.wide {
		*x = h.value()
		return
	}
	h.abandon(client)
	i, found := slices.BinarySearchFunc(h.parts, key, func(p *part, k string) int { return strings.Compare(p.key, k) })
	var p *part
	if found {
		p = h.parts[i].clone()
	} else {
		init, err := guarded(h.m.init)
		if err != "" {
			x.fail(fmt.Sprintf("spec %s's Init panicked: %s", h.m.name, err))
			return
		}
		p = &part{key: key, poss: []config{{state: init}}}
		h.parts = slices.Insert(h.parts, i, nil)
	}
	if len(p.pending) >= MaxPending {
		h.tooWide(fmt.Sprintf("more than %d operations pending on one key", MaxPending))
		*x = h.value()
		return
	}
	p.pending = append(p.pending, pend{client: client, in: in, fp: pendFP(client, false, in), call: h.events})
	for k := range p.poss {
		if p.poss[k].outs != nil {
			p.poss[k].outs = append(slices.Clone(p.poss[k].outs), nil)
		}
	}
	p.canonical()
	h.parts[i] = p
	*x = h.value()
}

// Abandon records that client gives up on its operation, if one is
// pending (a timeout): it stays pending for ever, an orphan that may
// still take effect, or never, and will not return. Invoke does it for a
// client whose last operation has not returned.
func (x *History) Abandon(client int) {
	h := x.h
	if h == nil || h.m == nil || h.bad != "" || h.err != "" && !h.wide {
		return
	}
	h = h.clone()
	if h.wide && h.log.pendingOf(client) != nil || !h.wide && h.abandon(client) {
		h.log = &entry{prev: h.log, at: h.events, client: client, abandon: true}
		*x = h.value()
	}
}

// abandon makes client's pending operation an orphan, in h, a clone
// being built; it says whether there was one.
func (h *hist) abandon(client int) bool {
	for i, p := range h.parts {
		for j, q := range p.pending {
			if q.client != client || q.orphan {
				continue
			}
			np := p.clone()
			np.pending[j].orphan = true
			np.pending[j].fp = pendFP(client, true, q.in)
			for k := range np.poss {
				if np.poss[k].lin&(1<<uint(j)) != 0 {
					np.poss[k].outs = slices.Clone(np.poss[k].outs)
					np.poss[k].outs[j] = nil
				}
			}
			np.canonical()
			h.parts[i] = np
			return true
		}
	}
	return false
}

// Return records that client's operation returned out. Where no
// possibility lets it, the History is not linearizable from here on
// (Violation); a client with no operation pending is an error (Err).
func (x *History) Return(client int, out any) {
	h := x.h
	switch {
	case h == nil || h.m == nil:
		x.fail("Return on a History without a spec: build it with properties.NewHistory")
		return
	case h.bad != "" || h.err != "" && !h.wide:
		return
	case !typeIs(out, h.m.out):
		x.fail(fmt.Sprintf("client %d returned %v, a %T, but spec %s's outputs are %v", client, out, out, h.m.name, h.m.out))
		return
	}
	if h.wide {
		if call := h.log.pendingOf(client); call != nil {
			h = h.clone()
			h.events++
			h.log = &entry{prev: h.log, at: h.events, call: call.at, client: client, key: call.key, v: out}
			*x = h.value()
		}
		return
	}
	pi, j := -1, -1
	for i, p := range h.parts {
		for k, q := range p.pending {
			if q.client == client && !q.orphan {
				pi, j = i, k
			}
		}
	}
	if pi < 0 {
		x.fail(fmt.Sprintf("client %d returned %v with no operation pending", client, out))
		return
	}
	h = h.clone()
	h.events++
	p := h.parts[pi]
	op := p.pending[j]
	h.log = &entry{prev: h.log, at: h.events, call: op.call, client: client, key: p.key, v: out}
	next, err, wide := p.after(h.m, j, out)
	switch {
	case wide:
		h.tooWide(err)
		*x = h.value()
		return
	case err != "":
		x.fail(err)
		return
	case len(next) == 0:
		h.nl = h.violation(p, j)
		h.bad = h.nl.String()
		*x = h.value()
		return
	}
	np := &part{key: p.key, pending: slices.Delete(slices.Clone(p.pending), j, j+1), poss: next}
	np.canonical()
	if len(np.pending) == 0 && len(np.poss) == 1 && np.isInit(h.m) {
		h.parts = slices.Delete(h.parts, pi, pi+1) // as if never touched
	} else {
		h.parts[pi] = np
	}
	*x = h.value()
}

// tooWide records, in h, a clone being built, that the history is too
// wide for the incremental check: no verdict from it from here on, but
// the log goes on for CheckAfter.
func (h *hist) tooWide(msg string) {
	h.err, h.wide, h.parts = msg, true, nil
}

// pendingOf returns the invocation of client's operation pending in the
// log l, if its last is: not returned, not abandoned.
func (l *entry) pendingOf(client int) *entry {
	for e := l; e != nil; e = e.prev {
		switch {
		case e.client != client:
		case e.abandon || e.call != 0:
			return nil
		default:
			return e
		}
	}
	return nil
}

// fail records a wrong use: no verdict from here on.
func (x *History) fail(msg string) {
	h := &hist{}
	if x.h != nil {
		h = x.h.clone()
	}
	if h.err == "" {
		h.err = msg
	}
	*x = h.value()
}

// after returns the possibilities once pending[j] returned out: from
// each, the pending operations not yet in it take effect in every order
// that ends with j (the others wait for a later Return: they may take
// effect later), keeping the ways j returns out; j then leaves the
// possibilities.
func (p *part) after(m *model, j int, out any) (_ []config, err string, wide bool) {
	var res []config
	orphans := p.orphans()
	// The possibilities explored, by their fingerprint without orphans:
	// one that took more orphans into effect than another, all else
	// equal, can do nothing the other cannot (see dominates).
	seen := map[uint64][]config{}
	explored := 0
	done := map[uint64][]config{} // results, by fp
	var visit func(c config) bool
	visit = func(c config) bool {
		core := c.core(orphans)
		for _, d := range seen[core] {
			if d.dominates(c, orphans) {
				return true
			}
		}
		if explored++; explored > MaxPossibilities {
			err, wide = fmt.Sprintf("more than %d possibilities on key %q: the history is too wide to check", MaxPossibilities, p.key), true
			return false
		}
		seen[core] = append(seen[core], c)
		if c.lin&(1<<uint(j)) != 0 {
			if c.outs[j] == out {
				r := c.without(j)
				if !inSet(done, r) {
					add(done, r)
					res = append(res, r)
				}
			}
			return true
		}
		for i := range p.pending {
			if c.lin&(1<<uint(i)) != 0 {
				continue
			}
			os, e := guardedStep(m, c.state, p.pending[i].in)
			if e != "" {
				err = e
				return false
			}
			for _, o := range os {
				if i == j && o.out != out {
					continue
				}
				n := c.with(i, len(p.pending), o, p.pending[i].orphan)
				if !visit(n) {
					return false
				}
			}
		}
		return true
	}
	for _, c := range p.poss {
		if !visit(c) {
			return nil, err, wide
		}
	}
	return res, err, false
}

// with is c once pending operation i (of n) took effect as o.
func (c config) with(i, n int, o outcome, orphan bool) config {
	outs := c.outs
	if outs == nil {
		outs = make([]any, n)
	} else {
		outs = slices.Clone(outs)
	}
	if !orphan {
		outs[i] = o.out
	}
	r := config{state: o.next, lin: c.lin | 1<<uint(i), outs: outs}
	r.fp = r.hash()
	return r
}

// without is c with pending operation j gone: its bit and output out.
func (c config) without(j int) config {
	low := c.lin & (1<<uint(j) - 1)
	r := config{state: c.state, lin: low | c.lin>>uint(j+1)<<uint(j)}
	if r.lin != 0 {
		r.outs = slices.Delete(slices.Clone(c.outs), j, j+1)
	}
	r.fp = r.hash()
	return r
}

// hash is c's fingerprint: its state, and the operations in it with
// their outputs. outs beyond the bits set play no part.
func (c config) hash() uint64 {
	fp := mix(fpOf(c.state), c.lin)
	for l := c.lin; l != 0; l &= l - 1 {
		i := bits.TrailingZeros64(l)
		fp = mix(fp, fpOf(c.outs[i]))
	}
	return fp
}

// core is c's fingerprint without the orphans (bits orphans): its state
// and the other operations in it, with their outputs.
func (c config) core(orphans uint64) uint64 {
	lin := c.lin &^ orphans
	fp := mix(fpOf(c.state), lin)
	for l := lin; l != 0; l &= l - 1 {
		i := bits.TrailingZeros64(l)
		fp = mix(fp, fpOf(c.outs[i]))
	}
	return fp
}

// dominates says whether c makes d redundant: the same state and the
// same operations in effect with the same outputs, but for orphans (bits
// orphans), of which d has every one c has and maybe more. An orphan
// never returns, so it need never take effect: whatever d can still do,
// c can do by never taking into effect the orphans d took.
func (c config) dominates(d config, orphans uint64) bool {
	if c.state != d.state || c.lin&^orphans != d.lin&^orphans || c.lin&orphans&^d.lin != 0 {
		return false
	}
	for l := c.lin &^ orphans; l != 0; l &= l - 1 {
		if i := bits.TrailingZeros64(l); c.outs[i] != d.outs[i] {
			return false
		}
	}
	return true
}

// orphans is the bits of p's orphans.
func (p *part) orphans() uint64 {
	var m uint64
	for i := range p.pending {
		if p.pending[i].orphan {
			m |= 1 << uint(i)
		}
	}
	return m
}

// same says whether c and d are one possibility.
func (c config) same(d config) bool {
	if c.fp != d.fp || c.lin != d.lin || c.state != d.state {
		return false
	}
	for l := c.lin; l != 0; l &= l - 1 {
		if i := bits.TrailingZeros64(l); c.outs[i] != d.outs[i] {
			return false
		}
	}
	return true
}

func inSet(set map[uint64][]config, c config) bool {
	for _, d := range set[c.fp] {
		if c.same(d) {
			return true
		}
	}
	return false
}

func add(set map[uint64][]config, c config) { set[c.fp] = append(set[c.fp], c) }

// clone returns a copy of p whose slices may be changed.
func (p *part) clone() *part {
	return &part{key: p.key, pending: slices.Clone(p.pending), poss: slices.Clone(p.poss)}
}

// canonical sorts p's pending operations (renumbering the possibilities'
// bits to match) and its possibilities, drops duplicates, and works out
// the fingerprints: equal contents, equal forms.
func (p *part) canonical() {
	n := len(p.pending)
	perm := make([]int, n) // perm[new] = old
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int { return cmpPend(&p.pending[a], &p.pending[b]) })
	moved := false
	for i, o := range perm {
		moved = moved || i != o
	}
	if moved {
		old := p.pending
		p.pending = make([]pend, n)
		for i, o := range perm {
			p.pending[i] = old[o]
		}
	}
	for k := range p.poss {
		c := &p.poss[k]
		if moved && c.lin != 0 {
			var lin uint64
			outs := make([]any, n)
			for i, o := range perm {
				if c.lin&(1<<uint(o)) != 0 {
					lin |= 1 << uint(i)
					outs[i] = c.outs[o]
				}
			}
			c.lin, c.outs = lin, outs
		}
		c.fp = c.hash()
	}
	slices.SortFunc(p.poss, func(a, b config) int {
		switch {
		case a.fp < b.fp:
			return -1
		case a.fp > b.fp:
			return 1
		}
		return 0
	})
	p.poss = slices.CompactFunc(p.poss, func(a, b config) bool { return a.same(b) })
	if p.prune() {
		p.canonical() // fewer pending: the bits and fingerprints changed
		return
	}
	// Equal fingerprints that are not the same possibility (a collision)
	// are left side by side, in the order the step made them.
	fp := mix(fpOf(p.key), uint64(n))
	for i := range p.pending {
		fp = mix(fp, p.pending[i].fp)
	}
	for i := range p.poss {
		fp = mix(fp, p.poss[i].fp)
	}
	p.fp = fp
}

// prune drops the possibilities that another dominates, and the orphans
// that have taken effect in every possibility (nothing is left to decide
// about them), keeping the order of the rest. It says whether it dropped
// an orphan.
func (p *part) prune() bool {
	orphans := p.orphans()
	if orphans == 0 {
		return false
	}
	byCore := map[uint64][]int{}
	for k := range p.poss {
		core := p.poss[k].core(orphans)
		byCore[core] = append(byCore[core], k)
	}
	drop := make([]bool, len(p.poss))
	for _, ks := range byCore {
		for _, a := range ks {
			for _, b := range ks {
				// Of two equal ones (never both here: poss has no
				// duplicates) neither is dropped.
				if a != b && !drop[a] && p.poss[a].dominates(p.poss[b], orphans) && !p.poss[b].dominates(p.poss[a], orphans) {
					drop[b] = true
				}
			}
		}
	}
	k := 0
	for i := range p.poss {
		if !drop[i] {
			p.poss[k] = p.poss[i]
			k++
		}
	}
	p.poss = p.poss[:k]
	all := orphans
	for _, c := range p.poss {
		all &= c.lin
	}
	dropped := all != 0
	for all != 0 {
		i := 63 - bits.LeadingZeros64(all) // from the top: lower bits stay put
		all &^= 1 << uint(i)
		p.pending = slices.Delete(p.pending, i, i+1)
		for k := range p.poss {
			p.poss[k] = p.poss[k].without(i)
		}
	}
	return dropped
}

// isInit says whether p's one possibility is the spec's initial state.
func (p *part) isInit(m *model) bool {
	init, err := guarded(m.init)
	return err == "" && p.poss[0].lin == 0 && p.poss[0].state == init
}

func cmpPend(a, b *pend) int {
	switch {
	case a.client != b.client:
		return a.client - b.client
	case a.orphan != b.orphan:
		if a.orphan {
			return 1
		}
		return -1
	case a.fp < b.fp:
		return -1
	case a.fp > b.fp:
		return 1
	}
	return 0
}

func pendFP(client int, orphan bool, in any) uint64 {
	o := uint64(0)
	if orphan {
		o = 1
	}
	return mix(mix(uint64(client), o), fpOf(in))
}

// violation says why pending[j] cannot return what its response, the
// last event of h's log, says: the operation, the operations on its key
// before it and beside it, and the states the spec can be in.
func (h *hist) violation(p *part, j int) *NotLinearizable {
	op := p.pending[j]
	nl := &NotLinearizable{Spec: h.m.name, Key: p.key, Prefix: h.events - 1}
	for _, o := range h.log.ops() {
		switch {
		case o.Key != p.key:
		case o.Call == op.call:
			nl.Op = o
		case o.Return != 0 && o.Return < op.call:
			nl.Before = append(nl.Before, o)
		default:
			nl.Concurrent = append(nl.Concurrent, o)
		}
	}
	seen := map[any]bool{}
	for _, c := range p.poss {
		if !seen[c.state] {
			seen[c.state] = true
			nl.States = append(nl.States, fmt.Sprint(c.state))
		}
	}
	slices.Sort(nl.States)
	return nl
}

// typeIs says whether v's dynamic type is t (or, t an interface,
// implements it).
func typeIs(v any, t reflect.Type) bool {
	if v == nil {
		return t.Kind() == reflect.Interface
	}
	vt := reflect.TypeOf(v)
	if t.Kind() == reflect.Interface {
		return vt.Implements(t)
	}
	return vt == t
}

// guarded runs f, and returns what it panicked with, if it did.
func guarded[T any](f func() T) (v T, err string) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Sprint(r)
		}
	}()
	return f(), ""
}

// guardedStep runs the spec's Step on state and in.
func guardedStep(m *model, state, in any) ([]outcome, string) {
	os, err := guarded(func() []outcome { return m.step(state, in) })
	if err != "" {
		return nil, fmt.Sprintf("spec %s's Step panicked on %v from state %v: %s", m.name, in, state, err)
	}
	return os, ""
}

// fpOf fingerprints a value of the spec: plain kinds directly, the others
// as node states are.
func fpOf(v any) uint64 {
	switch x := v.(type) {
	case nil:
		return 0x6e696c
	case int:
		return mix(1, uint64(x))
	case bool:
		if x {
			return mix(2, 1)
		}
		return mix(2, 0)
	case string:
		return mix(3, sim.Fingerprint(x))
	}
	return mix(4, sim.Fingerprint(v))
}

// mix combines two 64-bit values (splitmix64's finalizer over both).
func mix(a, b uint64) uint64 {
	z := a*0x9e3779b97f4a7c15 ^ b
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
