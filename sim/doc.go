// Package sim is livecheck's simulated world: the API a protocol's nodes
// are written against, and the deterministic world that runs them.
//
// A node is a Go value that implements [Node]: handlers for its start
// (Init), a message (Receive), a timer (Timer), a call from the system's
// driver (App) and a broken connection (Error). Handlers act only through
// the [Context]: sends, timers, Choose and log lines are recorded and
// applied when the handler returns, so a node is a pure state machine and
// every state can be copied, fingerprinted and replayed. Fields tagged
// `livecheck:"durable"` survive a reset (see [Node]).
//
// A [World] runs a [Spec] (nodes, transport, driver calls, failure budget):
// [World.Initial] builds the start state, [World.Enabled] lists the events
// possible in a state in a stable order, [World.Apply] applies one to a
// copy, and [World.Run] replays a [Path]. Every source of nondeterminism is
// an [Event] (deliver, timer, app, drop, socket-error, reset) or a Choose
// value recorded in the path. Walks use [World.Own] and [World.Step] to
// change one copy in place.
//
// A node can be built from layers with [Stack]: an application over a
// transport, say. The bottom layer talks to the network, a layer sends
// through the one below it (its [Carrier] Down handler) and hands
// messages up with [Context.Deliver]; each layer has its own timers
// (named "layer/name"), durable fields and log lines, and reports name the
// layer that acted. [LayerOf] reads one layer of a node.
//
// Node states and messages are copied, fingerprinted and dumped by
// reflection, with a plan built once per type ([Copy], [Fingerprint],
// [Dump]); a field tagged `livecheck:"-"` is left out of fingerprints and
// dumps. A type can take over with [StateCopier], [StateHasher] and
// [StateDumper].
//
// State livecheck did not write, a library a node wraps, takes rules per
// type in place of tags its writer cannot add, registered in an init func
// before any plan is built: [SkipType] (not hashed, zero in a copy),
// [ShareType] (shared by copies, not hashed), [SkipFields] (fields left
// out as the tag does), [CustomType] (hand-written copy and hash), and
// their Named forms for types a package does not export. Mutexes,
// protobuf's message state and size cache, *log.Logger and *os.File have
// rules already. A type that can hold one pointer twice, a cycle, a func
// or an interface is copied and hashed through a memo: a copy keeps the
// aliasing, a hash writes a pointer met again as a back-reference, a
// top-level func is hashed by name and shared, and a method value bound
// to an object inside the node is rebound to that object's copy. A
// [TypeError] names the field path and the rule that fixes it.
//
// # Usage
//
//	w, err := sim.NewWorld(sim.Spec{Nodes: 3, New: func(id sim.NodeID) sim.Node { return &myNode{} }})
//	s, err := w.Initial()
//	for _, ev := range w.Enabled(s, nil) {
//		next, err := w.Apply(s, ev, nil)
//		...
//	}
package sim
