// Package host runs the nodes of a livecheck system for real: the same
// Go values, the same handlers, that the checker checked, each node with
// its own address, over UDP (datagram systems) or TCP (stream systems),
// with real timers and durable fields on disk.
//
// A node's handlers run one at a time, as in the simulator, against a
// Context that does for real what the simulator's does: Send encodes the
// message (see the wire format in wire.go) and it leaves once the
// handler has returned and the node's durable fields are on disk;
// SetTimer, SetPeriodic and CancelTimer arm real timers, for the
// durations the model declares (protocol.Model.Timers, with jitter;
// protocol.DefaultTiming otherwise); Choose draws from a source seeded
// with Options.Seed and the node's id, and logs the draw. A node built
// from layers (sim.Stack) runs through the same layer code as in the
// checker. A handler that panics stops its node, logged with its event;
// the other nodes run on. Malformed and oversized frames, and frames
// from addresses that are no peer's or without the cluster key's MAC
// (Options.Key), are dropped and counted (Stats), never a crash. The
// messages cross in the host's own encoding (codec.go), every field of
// them, with no codec per protocol.
//
// Every frame travels on a channel (channel.go): a datagram session or
// a TCP connection, each opened by a handshake in which the receiver
// draws a fresh nonce, and the cluster key's MAC covers the frame, its
// sender, its receiver, the channel's nonces and its sequence number.
// So a frame is taken once, by its receiver, on its channel: one
// recorded on the network and sent again, to its receiver or another
// node, on a new connection, or after either end started again (a new
// incarnation), is refused, logged and counted (Stats.Replayed,
// Stats.Misdirected); datagrams have a replay window of the last
// replayWindow sequence numbers. Control frames from the command line
// are bound to their node and taken once too. The channel
// authenticates; it does not hide what crosses (no confidentiality),
// nor stop an attacker from dropping or delaying frames. Without a key
// a node runs only with every peer on loopback, and says so in its log.
//
// Fields tagged `livecheck:"durable"` are written atomically to a state
// file per node (Options.Data) after each handler that changed them; a
// node started again loads them and runs Init, as the simulator's reset
// does, and a damaged state file makes it refuse to start.
//
// With Options.RunLog each node logs every handler it runs, with its
// choices, its state's fingerprint and a Lamport clock: runlog.Merge puts the
// nodes' logs in one causal order, a path of the simulator, and
// runlog.Replay runs it there, naming a node whose state differs from
// its log (a handler that depends on something outside its state) and a
// safety property the run broke, and makes a trace file of the run.
//
// host is the node's side alone: it imports no package of the checker
// (TestHostImportsNoChecker), so a node carries the system and the
// transport, not the search. What happens to a run afterwards (replay,
// snapshots built from the logs, live checks from them) is package
// runlog's.
//
// # Usage
//
// [Start] runs one node (`livecheck run`); [StartCluster] runs every
// node of a system in one process on loopback, for tests and trying a
// system out, and [Cluster.State] with [Status] says which properties
// hold now. `livecheck run`, `cluster` and `trace` are these, for the
// command line.
//
//	c, err := host.StartCluster(&lock.System, protocol.Config{Nodes: 3}, host.ClusterOptions{Data: dir})
//	...
//	defer c.Stop()
//	live := c.Holds(c.State())
package host
