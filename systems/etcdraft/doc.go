// Package etcdraft checks go.etcd.io/raft/v3 (v3.7.0) as it is: each node
// is the library's RawNode over its MemoryStorage, with around it the
// Ready loop an application writes, and nothing of raft changed or
// stubbed. What is checked is the library together with that loop: the
// four bugs below are slips in the loop, the kind of mistake an
// application makes, never in raft.
//
// Raft elects a leader per term by majority vote; the leader appends
// proposals to its log and replicates them, and an entry is committed once
// a majority stores it, after which every node applies it in log order.
// Its safety rests on what each node persists before it speaks: its term,
// its vote and its log entries (the HardState and the entries of each
// Ready). raft's doc.go gives the loop: write the HardState and entries
// to stable storage, then send the messages, then apply the committed
// entries, then Advance.
//
// # The adapter
//
// The raft node without its application (its disk, its RawNode, the
// writing and sending of a Ready, the parameters) is rawnode.go, which
// systems/etcdkv shares; Node is one application over it.
//
// Node ids: livecheck's are 0 to n-1, raft's 1 to n (0 is "none"), so
// node i is raft id i+1 and a message to raft id k goes to node k-1.
// Messages travel as Msg, the raftpb.Message's fields as plain values
// (what a transport does anyway), so that the checker copies and hashes
// them as any message.
//
// Durable state: the MemoryStorage is the node's disk, kept across a
// reset; everything else is lost, the RawNode's volatile state and the
// application's state among it. The application's state is the list of
// entries applied (Node.Applied): on a restart raft is built again from
// the storage and hands over again every entry its persisted HardState
// says is committed, and the application applies them again, as a real
// one rebuilds its state from the log. The membership (every node a
// voter) is bootstrapped into the storage on the first start, as its
// initial ConfState, so every restart finds it there.
//
// Time: each node has one timer, "tick", which calls RawNode.Tick and
// sets itself again; the checker fires timers in any order, so a node
// may tick many times while others do not. ElectionTick is the parameter
// election-ticks (2 by default: since ticks fire in any order, what
// matters is that a timeout can be short or long, not its length), and
// the heartbeat every tick. raft draws each election timeout from
// crypto/rand.Reader (rand.Int(rand.Reader, ElectionTick)): while a
// handler runs, the checker answers that read as a choice, so the search
// tries every timeout in [E, 2E), a walk draws one from its seed and a
// trace records it (sim's draw.go). The package's hand-driven tests, which
// run no world, read zeros from it instead.
//
// The driver makes the proposals (the parameter proposals): proposal k
// goes to node (k-1) mod n, which hands it to raft. Raft drops a proposal
// made while no leader is known (ErrProposalDropped, documented): the
// client then tries it again at each tick until raft takes it. A proposal
// raft took can still be lost before it commits (forwarded to a leader
// that fell, appended by a leader replaced before it replicated it): raft
// owes nothing for it, and neither does the client, who was never told it
// succeeded. A node acknowledges a proposal to its client once it has
// applied it, and only then.
//
// Transport: datagrams by default (raft tolerates loss, duplication and
// reordering, and the checker explores them); the parameter transport
// stream makes them streams, as etcd runs raft over TCP, and a broken
// connection is reported to raft (Error: RawNode.ReportUnreachable). The
// same adapter runs for real under `livecheck cluster etcdraft`, over UDP
// or TCP: its whole RawNode crosses the state reports (host's codec
// carries its funcs and its storage reached twice).
//
// PreVote and CheckQuorum are parameters, both on by default: that is how
// etcd runs raft, and so what is worth checking first; either may be
// turned off.
//
// # Properties
//
// one-leader-per-term (safety): no two nodes ever lead one term, at once
// or one after the other. Each node records the terms in which it became
// leader, a history kept across resets, which only the property reads.
//
// applied-agree (safety): each node applies the entries at indexes 1, 2,
// 3, ... and no two nodes apply different entries at one index; since a
// node applies what is committed and rebuilds it from its disk after a
// restart, a committed entry that was lost or replaced shows here.
//
// leader-known (liveness): eventually every node knows one leader in one
// term, and that node leads it.
//
// acked-applied (liveness): every acknowledged proposal is eventually
// applied by every node.
//
// leader-elected and proposal-acked are canaries (reachability).
//
// # Bugs
//
//   - send-before-persist: the loop sends a Ready's messages before its
//     write has landed (an asynchronous write not waited for): the write
//     lands at the node's next event, unless a reset comes first. A
//     follower that acknowledged entries and lost them in a reset is then
//     told by its leader that they are committed: raft's own check stops
//     the node ("tocommit(1) is out of range [lastIndex(0)]. Was the raft
//     log corrupted, truncated, or lost?", the panic etcd shows when its
//     disk lost writes), which the checker reports as no-panic (one
//     reset). A vote sent and then lost the same way is given again in the
//     same term: two leaders of one term, one-leader-per-term.
//   - forget-hardstate: the loop writes the entries but not the HardState.
//     Without a reset nothing shows (raft keeps its term and vote in
//     memory); after one, the node has forgotten its term and vote. The
//     first thing a search finds is raft's own check: the node, back at
//     term 0 with entries of term 1 in its log, refuses a late pre-vote
//     and raft stops it ("term should be set when sending
//     MsgPreVoteResp"), no-panic (one reset); further on, it votes again in
//     a term it voted in and two nodes lead one term,
//     one-leader-per-term.
//   - apply-uncommitted: the loop applies the entries it is asked to
//     append (Ready.Entries) instead of the committed ones
//     (Ready.CommittedEntries). A leader applies its own entry at once;
//     when a new leader replaces it, two nodes have applied different
//     entries at one index: applied-agree, with no failure at all (the
//     checker's timers make a follower campaign while the leader's
//     messages are in flight).
//   - ack-before-apply: the loop acknowledges a proposal once its entry is
//     appended to the node's log (Ready.Entries) rather than once applied.
//     A leader replaced before it replicated the entry loses it, after
//     telling the client it succeeded: acked-applied never holds, with no
//     failure at all.
//
// Symmetry reduction is not declared: a node's raft state names its
// peers by raft ids, which renaming would not touch.
package etcdraft
