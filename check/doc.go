// Package check runs a check of a protocol.System, one file per phase,
// read top to bottom: the options and their defaults (options.go), the run
// (run.go: the exhaustive search and the pipeline that follows it), the
// liveness phase (liveness.go: walks from the periphery and the critical
// search), the dead test (deadtest.go), shortening a dead path
// (shorten.go), its slip and recovery odds (slip.go), reachability tallies (reached.go), the watchdog that turns
// a stuck handler into a finding (watchdog.go), local mode (local.go),
// replay (replay.go), live prefixes (prefixes.go) and the report types
// (result.go, report.go).
//
// The front door, package livecheck, wraps it; the command and
// livecheck.Test call nothing else to check.
package check
