// Package properties defines what livecheck checks: safety properties, which
// must hold in every reachable state; liveness properties, which must
// eventually hold; and reachability properties, which some reachable state
// must satisfy (canaries: a check that never reaches the state a safety
// property is about passes without showing anything). All read a typed,
// read-only view of the node states.
//
// # Usage
//
//	oneLeader := properties.Always("one-leader", "at most one node is leader",
//		func(s *sim.State) error {
//			leaders := 0
//			for _, n := range properties.All[*node](s) {
//				if n.Leader { leaders++ }
//			}
//			if leaders > 1 { return fmt.Errorf("%d leaders", leaders) }
//			return nil
//		})
//	elected := properties.Eventually("elected", "one leader, known to all", isElected)
//
// The helpers write the loops: [AlwaysEach] and [EventuallyEach] over every
// node, [AlwaysPairs] over every pair of nodes, [AtMostOne] for "one
// leader", each from a predicate over one node state of one type; on a
// protocol with several node types (a server and its clients) each reads
// the nodes of its type and skips the others:
//
//	oneLeader := properties.AtMostOne("one-leader", "at most one node is leader",
//		func(n *node) bool { return n.Leader })
//
// [LeadsTo] says that whenever P holds, Q holds then or later: every
// request sent is answered, every lease revoked is given back. A bit of
// each state remembers a P that still waits for its Q; a violation names
// the step where P held and Q never did after:
//
//	answered := properties.LeadsTo("answered", "every request is answered",
//		func(s *sim.State) bool { return properties.Node[*client](s, 1).Asked },
//		func(s *sim.State) bool { return properties.Node[*client](s, 1).Answered })
//
// [Sometimes] and [SometimesNode] say a state must be reachable: the check
// reports each as reached (with the fewest steps that reach it) or never
// reached, and livecheck.Test fails on one never reached:
//
//	canary := properties.SometimesNode("someone-leads", "a leader is elected at all",
//		func(n *node) bool { return n.Leader })
package properties

import (
	"fmt"
	"iter"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/livecheck/livecheck/sim"
)

// Kind says whether a property must always hold or eventually hold.
type Kind uint8

const (
	Safety       Kind = iota // must hold in every reachable state
	Liveness                 // must eventually hold, from every reachable state
	Reachability             // must hold in some reachable state (Sometimes)
)

func (k Kind) String() string {
	switch k {
	case Liveness:
		return "liveness"
	case Reachability:
		return "reachability"
	}
	return "safety"
}

// A Property is a named predicate over states. Its name is a flag-safe
// identifier: it appears in --property, reports and JSON.
type Property struct {
	Name string
	Kind Kind
	Doc  string

	// Check returns nil or an error that explains the violation (safety).
	Check func(s *sim.State) error
	// Live says whether the property holds (liveness).
	Live func(s *sim.State) bool
	// Reach says whether s is a state the property asks for
	// (reachability).
	Reach func(s *sim.State) bool

	// Filter, when set, says which node states can take part in a violation
	// of a safety property; local model checking never combines the others.
	Filter func(id sim.NodeID, n sim.Node) bool
	// Pair, when set, is the pairwise form of a safety property: a violation
	// between two node states. Local model checking then checks pairs only.
	Pair func(a, b sim.Node) error

	// P and Q, set by LeadsTo, are the two sides of a leads-to property:
	// whenever P holds, Q holds then or later. Bind gives the property a
	// monitor of the world, whose bit its Live reads.
	P, Q func(s *sim.State) bool
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// Always returns a safety property.
func Always(name, doc string, check func(s *sim.State) error) Property {
	mustName(name)
	return Property{Name: name, Kind: Safety, Doc: doc, Check: check}
}

// Eventually returns a liveness property.
func Eventually(name, doc string, live func(s *sim.State) bool) Property {
	mustName(name)
	return Property{Name: name, Kind: Liveness, Doc: doc, Live: live}
}

// Sometimes returns a reachability property: some state the check reaches
// must satisfy reach. It is never a violation; the check reports whether it
// was reached, and how soon, so that a check that passes only because it
// never got near the interesting states shows it.
func Sometimes(name, doc string, reach func(s *sim.State) bool) Property {
	mustName(name)
	return Property{Name: name, Kind: Reachability, Doc: doc, Reach: reach}
}

// LeadsTo returns a liveness property: whenever P holds, Q holds then or
// later. A world remembers along each path whether a P-state still waits
// for its Q-state, in a bit of the state (a sim.Monitor, see Bind); the
// property is live where no P-state waits, so that a path stuck with P
// unanswered is a liveness violation, found by the walks and the
// critical-transition search like any other.
//
// livecheck's pipeline binds it; a world built by hand needs Bind, and
// the property's Live panics until bound (a property error that says so).
// The value holds no binding of its own: one LeadsTo value may serve any
// number of systems.
func LeadsTo(name, doc string, p, q func(s *sim.State) bool) Property {
	mustName(name)
	return Property{Name: name, Kind: Liveness, Doc: doc, P: p, Q: q,
		Live: func(*sim.State) bool {
			panic(fmt.Sprintf("leads-to property %s is not bound to a monitor of the world: see properties.Bind", name))
		}}
}

// IsLeadsTo says whether p is a leads-to property (LeadsTo).
func (p *Property) IsLeadsTo() bool { return p.P != nil || p.Q != nil }

// Bind gives each leads-to property of props a monitor of spec, appended
// to spec.Monitors, and returns props with each such property's Live
// reading its monitor's bit. props itself is not changed (the caller's
// slice may be shared), and the properties without P and Q are as they
// were. A property's P or Q that panics makes the step fail with a
// *sim.MonitorPanic that wraps an *Error, as a property that panics.
func Bind(spec *sim.Spec, props []Property) []Property {
	out := slices.Clone(props)
	for i := range out {
		p := &out[i]
		if !p.IsLeadsTo() {
			continue
		}
		bit := len(spec.Monitors)
		spec.Monitors = append(spec.Monitors, sim.Monitor{Name: p.Name, P: guard(p.Name, p.P), Q: guard(p.Name, p.Q)})
		p.Live = func(s *sim.State) bool { return !s.Pending(bit) }
	}
	return out
}

// guard makes f's panic an *Error of the property named name.
func guard(name string, f func(*sim.State) bool) func(*sim.State) bool {
	return func(s *sim.State) bool {
		defer func() {
			if r := recover(); r != nil {
				panic(&Error{Property: name, Value: r})
			}
		}()
		return f(s)
	}
}

func mustName(name string) {
	if !nameRE.MatchString(name) {
		panic(fmt.Sprintf("property name %q must be lowercase letters, digits and dashes, starting with a letter", name))
	}
}

// Validate says what is wrong with a list of properties, if anything.
func Validate(props []Property) error {
	seen := map[string]bool{}
	for _, p := range props {
		if !nameRE.MatchString(p.Name) {
			return fmt.Errorf("property name %q must be lowercase letters, digits and dashes", p.Name)
		}
		if seen[p.Name] {
			return fmt.Errorf("two properties are named %q", p.Name)
		}
		seen[p.Name] = true
		if p.Kind == Safety && p.Check == nil {
			return fmt.Errorf("safety property %q has no Check function", p.Name)
		}
		if p.Kind == Liveness && p.Live == nil {
			return fmt.Errorf("liveness property %q has no Live function", p.Name)
		}
		if p.IsLeadsTo() && (p.Kind != Liveness || p.P == nil || p.Q == nil) {
			return fmt.Errorf("leads-to property %q needs both P and Q, and the liveness kind", p.Name)
		}
		if p.Kind == Reachability && p.Reach == nil {
			return fmt.Errorf("reachability property %q has no Reach function", p.Name)
		}
		if p.Kind > Reachability {
			return fmt.Errorf("property %q has unknown kind %d", p.Name, p.Kind)
		}
	}
	return nil
}

// Error is a property whose own code panicked. It is not a finding about
// the protocol but a bug in the property, reported as such with the path
// to the state it was evaluated on.
type Error struct {
	Property string
	Value    any // what the property panicked with
}

func (e *Error) Error() string {
	return fmt.Sprintf("property %s panicked: %v", e.Property, e.Value)
}

// CheckSafety evaluates a safety property. A property that panics returns
// an *Error.
func (p *Property) CheckSafety(s *sim.State) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Property: p.Name, Value: r}
		}
	}()
	return p.Check(s)
}

// IsLive evaluates a liveness property. A property that panics panics
// again with an *Error, for the search or walk under way to report with
// its path (their callers have no error to return).
func (p *Property) IsLive(s *sim.State) bool {
	defer func() {
		if r := recover(); r != nil {
			panic(&Error{Property: p.Name, Value: r})
		}
	}()
	return p.Live(s)
}

// IsReached evaluates a reachability property; a property that panics
// panics again with an *Error, as IsLive does.
func (p *Property) IsReached(s *sim.State) bool {
	defer func() {
		if r := recover(); r != nil {
			panic(&Error{Property: p.Name, Value: r})
		}
	}()
	return p.Reach(s)
}

// The helpers below take the system's node type T (a pointer to its
// struct, or an interface that several node types implement) and read
// the nodes that are a T, or have a layer that is (sim.Stack); the
// others are skipped, their ids kept: on a primary-backup protocol
// AtMostOne[*Backup] is about the backups alone. A state in which no node
// is a T is a property error that names the nodes' types: the property
// would hold vacuously, which is almost always a T that names the wrong
// type (leave such a property out of the configurations that have no node
// of its type: Build gets the configuration). Local model checking, which
// hands Filter and Pair one node state at a time, skips the others in the
// same way.

// AlwaysEach returns a safety property that holds where check holds for
// every node that is a T. A violation names the first node that fails,
// "node 2: " and check's error.
func AlwaysEach[T sim.Node](name, doc string, check func(n T) error) Property {
	return Always(name, doc, func(s *sim.State) error {
		for i, n := range All[T](s) {
			if err := check(n); err != nil {
				return fmt.Errorf("node %d: %w", i, err)
			}
		}
		return nil
	})
}

// AlwaysPairs returns a safety property that holds where check holds for
// every pair of distinct nodes that are a T, a the one with the lower id.
// A violation names the first pair that fails, "nodes 0 and 2: " and
// check's error. Local model checking checks it on pairs of node states
// alone (its Pair form), without building whole system states.
func AlwaysPairs[T sim.Node](name, doc string, check func(a, b T) error) Property {
	p := Always(name, doc, func(s *sim.State) error {
		for i, a := range All[T](s) {
			for j := int(i) + 1; j < s.N(); j++ {
				b, ok := lookup[T](s.Node(sim.NodeID(j)))
				if !ok {
					continue
				}
				if err := check(a, b); err != nil {
					return fmt.Errorf("nodes %d and %d: %w", i, j, err)
				}
			}
		}
		return nil
	})
	p.Pair = func(a, b sim.Node) error {
		ta, oka := lookup[T](a)
		tb, okb := lookup[T](b)
		if !oka || !okb {
			return nil
		}
		return check(ta, tb)
	}
	return p
}

// AtMostOne returns a safety property that holds where at most one node
// that is a T satisfies pred: one leader, one lock holder. A violation
// names the nodes that do, "nodes 0 and 2 at once". Local model checking
// checks it on pairs of node states that satisfy pred.
func AtMostOne[T sim.Node](name, doc string, pred func(n T) bool) Property {
	p := Always(name, doc, func(s *sim.State) error {
		var which []int
		for i, n := range All[T](s) {
			if pred(n) {
				which = append(which, int(i))
			}
		}
		if len(which) < 2 {
			return nil
		}
		return fmt.Errorf("nodes %s at once", joinIDs(which))
	})
	holds := func(n sim.Node) bool {
		t, ok := lookup[T](n)
		return ok && pred(t)
	}
	p.Filter = func(_ sim.NodeID, n sim.Node) bool { return holds(n) }
	p.Pair = func(a, b sim.Node) error {
		if holds(a) && holds(b) {
			return fmt.Errorf("two nodes at once")
		}
		return nil
	}
	return p
}

// EventuallyEach returns a liveness property that holds where live holds
// for every node that is a T: every node has joined, learned the value,
// ...
func EventuallyEach[T sim.Node](name, doc string, live func(n T) bool) Property {
	return Eventually(name, doc, func(s *sim.State) bool {
		for _, n := range All[T](s) {
			if !live(n) {
				return false
			}
		}
		return true
	})
}

// SometimesNode returns a reachability property reached where some node
// that is a T satisfies reach: some node became leader, held the lock, ...
func SometimesNode[T sim.Node](name, doc string, reach func(n T) bool) Property {
	return Sometimes(name, doc, func(s *sim.State) bool {
		for _, n := range All[T](s) {
			if reach(n) {
				return true
			}
		}
		return false
	})
}

// PointerLoop follows a pointer from every node (a parent, a successor)
// and returns the first loop it finds, as "1 -> 2 -> 1", or "". next gives
// node id's pointer, and false where the walk stops (no pointer, or a root
// that points at itself).
func PointerLoop(s *sim.State, next func(id sim.NodeID) (sim.NodeID, bool)) string {
	// One chain for every start, on the stack while it is short: a walk
	// checks the property at every step (it was a fifth of what the
	// walks of Overcast 4 allocated).
	var buf [16]sim.NodeID
	for i := range s.N() {
		chain := append(buf[:0], sim.NodeID(i))
		for cur := sim.NodeID(i); ; {
			p, ok := next(cur)
			if !ok {
				break
			}
			chain = append(chain, p)
			if slices.Contains(chain[:len(chain)-1], p) {
				parts := make([]string, len(chain))
				for k, id := range chain {
					parts[k] = strconv.Itoa(int(id))
				}
				return strings.Join(parts, " -> ")
			}
			cur = p
		}
	}
	return ""
}

// joinIDs writes ids as "0 and 2" or "0, 1 and 2".
func joinIDs(ids []int) string {
	var b strings.Builder
	for k, id := range ids {
		switch {
		case k == 0:
		case k == len(ids)-1:
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(id))
	}
	return b.String()
}

// lookup returns n as T: the node itself, or for a node built from
// layers (sim.Stack) its layer that is a T.
func lookup[T sim.Node](n sim.Node) (T, bool) {
	if t, ok := n.(T); ok {
		return t, true
	}
	return sim.LayerOf[T](n)
}

// Nodes returns every node state as T, indexed by id, for a property to
// read them typed. T is the system's node type, the pointer its New
// returns. A node that is not a T cannot be left out of a slice indexed
// by id, so it panics with a message that says what to write instead:
// All, which yields the nodes that are a T with their ids (a property
// that panics is reported as a bug in the property, not in the
// protocol). The states are shared: a property reads them and never
// changes them. It makes a slice at every call: a property the walks ask
// at every step reads the nodes with All, or by id with Node, which make
// none (the ring's, RandTree's and Overcast's liveness properties
// allocated half of what their walks did through Nodes).
func Nodes[T sim.Node](s *sim.State) []T {
	out := make([]T, s.N())
	for i := range out {
		n, ok := lookup[T](s.Node(sim.NodeID(i)))
		if !ok {
			var zero T
			panic(fmt.Sprintf("node %d %s: properties.Nodes wants every node to be one; for the nodes that are, write for id, n := range properties.All[%T](s)",
				i, notA[T](s.Node(sim.NodeID(i))), zero))
		}
		out[i] = n
	}
	return out
}

// All yields the id and state, as T, of every node that is a T (or has a
// layer that is), in id order, and skips the others: on a protocol with
// two node types each property reads the type it is about. It makes no
// slice: a property evaluated on every state of a large search allocates
// nothing with it. A state where no node is a T panics with the nodes'
// types (see the helpers' note above AlwaysEach).
//
//	for id, n := range properties.All[*node](s) { ... }
//
// Write the predicate as a function of its own, or a literal at the top
// of a function, not a literal inside another literal: Go (1.26) inlines
// the outer one where it is called, var P = func() Property {...}() into
// the package's init, and compiles a copy of the inner literal in which
// the loop's body escapes to the heap, several objects every call.
// (Paxos's agreement did: half the objects its search allocated.)
func All[T sim.Node](s *sim.State) iter.Seq2[sim.NodeID, T] {
	return func(yield func(sim.NodeID, T) bool) {
		found := false
		for i := range s.N() {
			n, ok := lookup[T](s.Node(sim.NodeID(i)))
			if !ok {
				continue
			}
			found = true
			if !yield(sim.NodeID(i), n) {
				return
			}
		}
		if !found && s.N() > 0 {
			panic(noneIs[T](s))
		}
	}
}

// Node returns node i's state as T: the node itself, or for a node built
// from layers (sim.Stack) its layer that is a T. It panics where node i
// is neither.
func Node[T sim.Node](s *sim.State, i sim.NodeID) T {
	n, ok := lookup[T](s.Node(i))
	if !ok {
		panic(fmt.Sprintf("node %d %s", i, notA[T](s.Node(i))))
	}
	return n
}

// notA says that n is not a T, and what it is.
func notA[T sim.Node](n sim.Node) string {
	var zero T
	if _, ok := n.(*sim.Stacked); !ok {
		return fmt.Sprintf("is a %T, not a %T", n, zero)
	}
	return fmt.Sprintf("has no layer that is a %T: its layers are %s", zero, layers(n))
}

// noneIs says that no node of s is a T, and what they are.
func noneIs[T sim.Node](s *sim.State) string {
	var zero T
	var kinds []string
	ids := map[string][]int{}
	for i := range s.N() {
		k := fmt.Sprintf("a %T", s.Node(sim.NodeID(i)))
		if _, ok := s.Node(sim.NodeID(i)).(*sim.Stacked); ok {
			k = "a stack of " + layers(s.Node(sim.NodeID(i)))
		}
		if ids[k] == nil {
			kinds = append(kinds, k)
		}
		ids[k] = append(ids[k], i)
	}
	for j, k := range kinds {
		if len(ids[k]) == 1 {
			kinds[j] = fmt.Sprintf("node %d is %s", ids[k][0], k)
		} else {
			kinds[j] = fmt.Sprintf("nodes %s are each %s", joinIDs(ids[k]), k)
		}
	}
	return fmt.Sprintf("no node is a %T or has a layer that is (%s): the property would hold vacuously: give it the type of the nodes it is about, or leave it out of configurations that have none", zero, strings.Join(kinds, "; "))
}

// layers names the layers of a stacked node: "net (*carrier), log (*replica)".
func layers(n sim.Node) string {
	st := n.(*sim.Stacked)
	var ls []string
	for i := range st.Len() {
		name, l := st.Layer(i)
		ls = append(ls, fmt.Sprintf("%s (%T)", name, l))
	}
	return strings.Join(ls, ", ")
}

// Names returns the names of props.
func Names(props []Property) []string {
	out := make([]string, len(props))
	for i, p := range props {
		out[i] = p.Name
	}
	return out
}
