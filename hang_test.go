package livecheck_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// firstBlocks makes onCount2 block on its first call until a later call:
// a handler held up far past the timeout in the check (as a busy machine
// may hold one), that returns when it is run again. No timing decides
// anything: the first call returns only once the handler has been run a
// second time, which only the confirmation does.
func firstBlocks(t *testing.T) *atomic.Int64 {
	gate := make(chan struct{})
	var once sync.Once
	var calls atomic.Int64
	onCount2 = func() {
		if calls.Add(1) == 1 {
			<-gate
			return
		}
		once.Do(func() { close(gate) })
	}
	t.Cleanup(func() { once.Do(func() { close(gate) }) })
	return &calls
}

func TestSlowHandlerIsRunAgain(t *testing.T) {
	cfg, prefixes, err := livecheck.Prefixes(counterSystem(""), livecheck.PrefixOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The prefix ends once node 1 has heard count 2, before it is live.
	prefix := prefixes[0].Path
	for k := range prefix {
		rep, err := livecheck.Replay(counterSystem(""), cfg, prefix[:k+1], 0)
		if err != nil {
			t.Fatal(err)
		}
		if properties.Node[*counter](rep.Final, 1).Heard == 2 {
			prefix = prefix[:k+1]
			break
		}
	}
	for _, tc := range []struct {
		name string
		opts livecheck.Options
		want livecheck.Verdict
	}{
		{"search", livecheck.Options{Depth: 10}, livecheck.OK},
		// The search stops before count 2 arrives: a walk delivers it.
		{"walk", livecheck.Options{Depth: 2, Workers: 1}, livecheck.OK},
		// The prefix delivers count 2 before the check starts.
		{"prefix", livecheck.Options{Prefix: prefix, Depth: 4}, livecheck.OK},
		{"local", livecheck.Options{Mode: "local"}, livecheck.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := firstBlocks(t)
			opts := tc.opts
			opts.HandlerTimeout = 5 * time.Millisecond
			res, err := livecheck.Check(counterSystem("hook"), opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tc.want || res.Property != "" {
				t.Fatalf("%s %q: %s, want %s", res.Verdict, res.Property, res.Message, tc.want)
			}
			if calls.Load() < 2 {
				t.Fatalf("the handler ran %d times: it was not run again", calls.Load())
			}
		})
	}
}

func TestStuckOnlyInTheCheck(t *testing.T) {
	// The first call blocks until the test ends; a second returns: the
	// handler is not deterministic, and the check says so once the first
	// has run past the confirmation's allowance too.
	gate := make(chan struct{})
	t.Cleanup(func() { close(gate) })
	var calls atomic.Int64
	onCount2 = func() {
		if calls.Add(1) == 1 {
			<-gate
		}
	}
	_, err := livecheck.Check(counterSystem("hook"), livecheck.Options{Depth: 10, HandlerTimeout: 5 * time.Millisecond, ConfirmTimeout: 50 * time.Millisecond})
	var nd *sim.NondeterminismError
	if !errors.As(err, &nd) {
		t.Fatalf("Check: %v, want a NondeterminismError", err)
	}
	want := "the handler is not deterministic (map iteration, time, rand, goroutines, shared memory?): node 1's Receive, at step 3 (deliver count{N:2} 0->1), ran for more than 50ms in the check but returned when run again"
	if err.Error() != want {
		t.Fatalf("error\n%s\nwant\n%s", err, want)
	}
}

func TestLocalHangIsInconclusive(t *testing.T) {
	release.Store(false)
	defer release.Store(true)
	res, err := livecheck.Check(counterSystem("loop"), livecheck.Options{Mode: "local", HandlerTimeout: 5 * time.Millisecond, ConfirmTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	want := "a handler did not return within 5ms on deliver count{N:2} 0->1, nor within 50ms when run again, in a node state local mode reached; local mode cannot tell whether a real run reaches it (run --mode global for a trace)"
	if res.Verdict != livecheck.Inconclusive || res.Property != livecheck.DivergenceProperty || res.Message != want {
		t.Fatalf("%s %q: %s\nwant inconclusive %q: %s", res.Verdict, res.Property, res.Message, livecheck.DivergenceProperty, want)
	}
}

// An interrupt reaches a hang's confirmation: a handler that blocks in
// the check and again when run again ends the check as interrupted once
// the user stops it, not after the confirmation's allowance (30 s here)
// with the hang it would then report. The interrupt comes only once the
// handler has been run a second time, that is, during the confirmation.
func TestInterruptReachesHangConfirmation(t *testing.T) {
	for _, mode := range []string{"global", "local"} {
		t.Run(mode, func(t *testing.T) {
			gate := make(chan struct{})
			t.Cleanup(func() { close(gate) })
			var calls atomic.Int64
			onCount2 = func() {
				calls.Add(1)
				<-gate
			}
			res, err := livecheck.Check(counterSystem("hook"), livecheck.Options{Mode: mode, Depth: 10,
				HandlerTimeout: 5 * time.Millisecond, ConfirmTimeout: 30 * time.Second,
				Interrupted: func() bool { return calls.Load() >= 2 }})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != livecheck.Inconclusive || !res.Interrupted || res.Property != "" {
				t.Fatalf("%s %q (interrupted %v): %s; want inconclusive, interrupted", res.Verdict, res.Property, res.Interrupted, res.Message)
			}
			if calls.Load() < 2 {
				t.Fatalf("the handler ran %d times: it was not run again", calls.Load())
			}
		})
	}
}
