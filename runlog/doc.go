// Package runlog is what happens to a real run afterwards, once host's
// nodes have written their run logs: the logs read and checked to be of
// one run ([ReadDir]), put in one causal order ([Merge]) and replayed
// in the simulator by the checker's replay ([Replay]), naming a node
// whose state differs from its log and a safety property the run
// broke, and making the run's trace file; consistent snapshots built
// from the logs ([BuildSnapshot]; [TakeSnapshot] for the command line's
// cluster, [SnapshotCluster] for one in this process); and live checks
// from them ([CheckLive]: `livecheck cluster --check-every`).
//
// It imports host and check; host, the node's side, imports neither,
// so a node carries the system and its transport, not the checker.
//
// # Usage
//
//	logs, err := runlog.ReadDir(dir) // node-*.log, as `cluster --data DIR` writes them
//	...
//	m, err := runlog.Merge(logs)
//	...
//	rr, err := runlog.Replay(m, &lock.System)
//	// rr.Divergence: a handler that depends on something outside its state;
//	// rr.Violation: a safety property the run broke; rr.Trace: the run's trace.
//
// `livecheck trace`, `snapshot` and `cluster` are these, for the
// command line.
package runlog
