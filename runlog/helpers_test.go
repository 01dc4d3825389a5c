package runlog_test

import (
	"github.com/livecheck/livecheck/internal/hosttest"
	"github.com/livecheck/livecheck/internal/runtest"
)

// The helpers runlog's tests share with host's (internal/hosttest,
// internal/runtest): systems run for real, their logs read afterwards.
type pinger = hosttest.Pinger

var (
	pingers       = hosttest.Pingers
	streamPingers = hosttest.StreamPingers
	buildPingers  = hosttest.BuildPingers
	waitFor       = hosttest.WaitFor
	start         = runtest.Start
	startSystem   = runtest.StartSystem
	startPingers  = runtest.StartPingers
	got           = runtest.Got
	morePings     = runtest.MorePings
	mergeDir      = runtest.MergeDir
	replayDir     = runtest.ReplayDir
)
