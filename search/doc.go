// Package search explores a system's behaviours exhaustively within bounds.
//
// [Global] is bounded depth-first search over global states (node states,
// network, timers, failures used) with a visited set of fingerprints. It
// checks the safety properties on every new state, ends a path at a live
// state reached after one that was not, and returns the first violation,
// the periphery (the states at the depth bound that are not live) and
// statistics.
//
// [Local] is local model checking (LMC): per-node state sets, one growing
// set of every message sent, system states built only to check the safety
// properties (pruned by their Filter and Pair forms), and every preliminary
// violation verified by finding a real run that reaches it, replayed in the
// global simulator, before it is reported.
//
// # Usage
//
//	res, err := search.Global(world, search.Options{Depth: 12, Properties: props})
//	lres, err := search.Local(world, search.LocalOptions{Properties: props})
package search
