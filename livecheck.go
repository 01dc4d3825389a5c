// Package livecheck checks implementations of distributed systems for
// safety and liveness bugs. A protocol's nodes are plain Go state machines
// (see package sim); livecheck runs them in a deterministic simulated world,
// explores the orderings of messages, timers and failures, and reports each
// violation with a trace that replays.
//
// # Usage
//
// Describe the protocol as a [System] and call [Check]:
//
//	res, err := livecheck.Check(&mySystem, livecheck.Options{Depth: 12})
//	if err != nil { ... }           // bad configuration or a failure of the tool
//	if res.Verdict != livecheck.OK { // a violation, with res.Path
//	}
//
// [Main] gives a program the livecheck command (list, check, prefix,
// replay) for its own systems; cmd/livecheck is Main with the bundled
// ones. [Test] runs a check inside a Go test.
//
// # Step numbers
//
// Step 0 is the initial state; step i is the i-th event of a path (1-based),
// and "the state after step i" the state it leads to. [ReplayStep].Step,
// [Critical].Step and LiveStep, the reports' and trace files' step fields
// all count so.
package livecheck

import (
	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// What a protocol declares (package protocol).
type (
	// A System is a protocol livecheck can check; see [protocol.System].
	System = protocol.System
	// A Bug is a named, injectable slip in a system's code.
	Bug = protocol.Bug
	// Needs is the configuration a bug needs to show.
	Needs = protocol.Needs
	// A Param is a system's own setting.
	Param = protocol.Param
	// A PropertyDoc names and describes one property of a system.
	PropertyDoc = protocol.PropertyDoc
	// Config is one configuration of a system.
	Config = protocol.Config
	// A Model is a system built for one configuration.
	Model = protocol.Model
	// A Setting is one setting of a configuration that a bug's needs supplied.
	Setting = protocol.Setting
	// Timing is how long a timer waits when the nodes run for real.
	Timing = protocol.Timing
)

// None, in a budget field of a Config, says "none of this failure".
const None = protocol.None

// NoFailures is the budget of a Config that allows no failure of any kind.
var NoFailures = protocol.NoFailures

// Counts returns a Config's budget as counts of failures, None as 0.
func Counts(b sim.Budget) sim.Budget { return protocol.Counts(b) }

// Docs returns the names, kinds and docs of properties, for System.Properties.
var Docs = protocol.Docs

// What a check takes and gives (package check).
type (
	// Options say what to check and how hard; zero values take the defaults.
	Options = check.Options
	// Progress is what a running check reports, for Options.Progress.
	Progress = check.Progress
	// Verdict is the outcome of a check.
	Verdict = check.Verdict
	// Result is what a check found, and what it covered.
	Result = check.Result
	// Critical is the critical transition of a liveness violation.
	Critical = check.Critical
	// Slip is the step of a dead path that took away what would have let
	// it recover (Critical.Slip).
	Slip = check.Slip
	// Odds are the recovery odds along a dead path (Critical.Odds).
	Odds = check.Odds
	// Sometimes is how a reachability property fared.
	Sometimes = check.Sometimes
	// Waiting is a leads-to property's state never answered.
	Waiting = check.Waiting
	// Replayed is what replaying a path gave.
	Replayed = check.Replayed
	// ReplayStep is one step of a replayed path.
	ReplayStep = check.ReplayStep
	// NoReplayError says where and why a path does not replay.
	NoReplayError = check.NoReplayError
	// PrefixOptions say how to find live prefixes.
	PrefixOptions = check.PrefixOptions
	// A LivePrefix is a path that makes the system live.
	LivePrefix = check.LivePrefix
)

// The verdicts.
const (
	OK                = check.OK
	SafetyViolation   = check.SafetyViolation
	LivenessViolation = check.LivenessViolation
	Inconclusive      = check.Inconclusive
	PropertyError     = check.PropertyError
	Live              = check.Live
)

// DivergenceProperty names the built-in liveness property "every handler
// returns".
const DivergenceProperty = check.DivergenceProperty

// The time budget of a check (Options.Time): DefaultTime when the options
// give none, as the command's --time; NoTimeLimit for none (--time 0).
const (
	DefaultTime = check.DefaultTime
	NoTimeLimit = check.NoTimeLimit
)

// Errors a check or a replay wraps.
var (
	ErrNoReplay = check.ErrNoReplay
	ErrPrefix   = check.ErrPrefix
)
