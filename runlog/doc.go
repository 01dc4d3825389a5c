// Package runlog is what happens to a real run afterwards: the nodes'
// run logs put in one causal order (Merge) and replayed in the
// simulator by the checker's replay (Replay), naming a node whose state
// differs from its log and a safety property the run broke, and making
// the run's trace file; consistent snapshots built from the logs
// (BuildSnapshot, TakeSnapshot for the command line's cluster,
// SnapshotCluster for one in this process); and live checks from them
// (CheckLive: `livecheck cluster --check-every`).
//
// It imports host and check; host, the node's side, imports neither.
package runlog
