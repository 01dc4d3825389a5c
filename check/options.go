package check

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/walk"
)

// Verdict is the outcome of a check.
type Verdict string

const (
	OK                Verdict = "ok"
	SafetyViolation   Verdict = "safety-violation"
	LivenessViolation Verdict = "liveness-violation"
	Inconclusive      Verdict = "inconclusive"
	// PropertyError says a property's own code panicked: a bug in the
	// property, reported with the path to the state it failed on.
	PropertyError Verdict = "property-error"
	// Live marks a trace that reaches a live state: the nearest live path
	// beside a liveness violation.
	Live Verdict = "live"
)

// DivergenceProperty names the built-in liveness property "every handler
// returns": a handler that runs past the time limit is stuck for ever.
const DivergenceProperty = "handlers-return"

// Options say what to check and how hard. Zero values take the defaults.
type Options struct {
	Config protocol.Config
	// Depth bounds the exhaustive search (default: the system's, or 20).
	Depth int
	// MaxStates stops the search after this many distinct states (0: no
	// limit); the result is then not complete.
	MaxStates int
	// MinDepth is the least depth a check cut short by its budget (Time
	// or MaxStates) must complete to pass (0: DefaultMinDepth). A check
	// whose space does not fit its budget searches to the deepest level
	// it can finish, k, walks from there as from a depth bound of k, and
	// passes with "no violation to depth k, complete to depth k" (Result
	// Verdict OK, Cut saying what ended the search, Covered k) when k is
	// at least MinDepth; below it, the result is inconclusive and says
	// so. A violation found is reported whatever the depth. MinDepth
	// cannot pass Depth: MinDepth equal to Depth asks for the whole
	// bound. The command's --min-depth.
	MinDepth int
	// Seed seeds every random choice livecheck makes (default 1).
	Seed int64
	// HandlerTimeout is how long one handler may run before it counts as
	// diverged (default 2s). A handler that runs longer is run again from
	// the initial state, allowed ConfirmTimeout, and reported only if it
	// hangs again.
	HandlerTimeout time.Duration
	// ConfirmTimeout is that second allowance (default
	// ConfirmAllowance(HandlerTimeout)).
	ConfirmTimeout time.Duration
	// Progress, when set, is called now and then during long work.
	Progress func(Progress)
	// Interrupted, when set and true, stops the work early: the result
	// keeps what was found and is inconclusive if nothing was. Every
	// phase asks it every few milliseconds (the search, the walks, the
	// critical search and its dead tests, the replays that confirm a
	// finding, the shortening of its path); a violation whose replay it
	// stopped is not reported, since it was not confirmed.
	Interrupted func() bool
	// Time is the check's time budget (0: DefaultTime, the command's
	// default; NoTimeLimit, or any negative value: none). The exhaustive
	// search may use three quarters of it: past that it ends at the last
	// level it finished, and the walks start from there; the walks, the
	// critical search and its dead tests stop when the budget is spent
	// (the replays that confirm a violation found within it run on). A
	// check whose search the budget cut short passes to the depth it
	// completed, at least MinDepth, if its walks from there end too (see
	// MinDepth); cut short otherwise, it is inconclusive unless it found
	// a violation. Either way it says exactly what it covered. Its results depend on
	// the machine: a test that expects a result bounds the depth and says
	// NoTimeLimit. A split check (Shard) has no budget: 0 means none
	// there, and a positive Time is refused.
	Time time.Duration
	// MaxMemory is the most heap the check may use, in bytes: past it the
	// check ends, inconclusive, with what it found so far (0: the default,
	// DefaultMaxMemory; negative: no limit).
	MaxMemory int64

	// WalkDepth is how far each random walk from the periphery goes before
	// its path counts as a suspect (dmax, default 5000).
	WalkDepth int
	// Walks is the number of walks per probe of the critical-transition
	// search (k, default 8).
	Walks int
	// DeadStates and DeadWalks, when positive, fix the size of every dead
	// test of the check: a search of DeadStates states, then DeadWalks
	// walks (the command's --dead-test N,K), each at most the floor's
	// (critical.DeadStates, critical.DeadWalks); one left 0 is the
	// floor's. Below the floor a dead test calls nothing dead: a path it
	// finds no way back from is a suspect, at most (case C2), and the
	// result is inconclusive. Unset, every dead test is the floor's where
	// the time budget can pay for it, and cut to fit it where it cannot
	// (LiveStats.DeadCut says so, and the --dead-test that runs the same
	// test again).
	DeadStates, DeadWalks int
	// Escalations is how many times a walk depth too short to tell (case
	// C2) is doubled before the result is inconclusive (default 3).
	Escalations int
	// Weights are the walks' event weights when WeightsSet; otherwise the
	// system's, or walk.DefaultWeights.
	Weights    walk.Weights
	WeightsSet bool
	// NoWalks stops after the exhaustive search.
	NoWalks bool
	// StopAtLive ends each walk from the periphery at its first live
	// state, as MaceMC does: safety is then checked on a walk only until
	// it recovers. By default walks go on after recovery as AfterLive
	// says.
	StopAtLive bool
	// AfterLive is how far a walk from the periphery goes on after it
	// first recovers, checking safety: AfterLive times the steps it took
	// to recover, at least AfterLiveMin steps, within WalkDepth in all
	// (default DefaultAfterLive; WalkDepthAfterLive, or any negative
	// value: on to WalkDepth). Each walk's share depends on its own steps
	// alone, so the steps checked do not depend on the number of workers.
	AfterLive int
	// Workers is the number of goroutines of the exhaustive search, of
	// the walks from the periphery, and of local mode's quick checks of
	// its candidates (default: GOMAXPROCS). The result does not depend
	// on it.
	Workers int
	// Mode is "global" (the default: global states, network included,
	// then walks for liveness) or "local" (local model checking of safety
	// properties, every violation verified by a real run).
	Mode string
	// Rounds bounds local mode: local events and repeated deliveries per
	// node on the first path to a state, raised round by round up to this
	// (default 8). A result that the bound cut short is inconclusive.
	Rounds int
	// MaxVerify bounds, in local mode, the steps of the search for real
	// runs to the preliminary violations that the message summaries do
	// not refute (default DefaultMaxVerify). A search that runs out
	// leaves them undecided, and the result inconclusive.
	MaxVerify int
	// Reduce is the reduction of the exhaustive search, "none" or a
	// comma-separated list of: "sleep", which skips transitions that
	// sleep sets show lead only to states found another way at the same
	// depth (the same states, depths, violations and periphery, fewer
	// transitions); "symmetry", which keeps one state of those that are
	// renamings of each other under the system's declared symmetry
	// (sim.Spec.Symmetry; nothing for a system that declares none), so
	// that state counts are of those classes; "observers", which takes
	// the events of the system's observers (sim.Spec.Observers: nodes
	// that never send, the only ones the properties read) only where no
	// other node has one, keeping every violation but not every state
	// (with datagrams, no failures and no leads-to properties; nothing
	// otherwise). Default: DefaultReduce, all three.
	Reduce string
	// Prefix is a path from the initial state (a live prefix, typically):
	// it is replayed once, and the check starts from where it ends.
	// Reported paths include it, so their traces replay on their own.
	// PrefixInit names the initial state it starts from (see Result.Init).
	Prefix     sim.Path
	PrefixInit []int
	// Shard, when its Count is more than 1, makes the check one slice of
	// a check split among Count processes (search.Shard): the search
	// divides the states of its split level among them, and each walks
	// from its own periphery, with seeds of its own (walk i of shard j of
	// n takes the seed of walk i*n+j). Its Index must be in [0, Count).
	// A split check has no time budget: its result must not depend on the
	// machine, so that merged shards mean what the unsplit check would.
	Shard search.Shard
	// Fingerprints keeps the keys of the states the search stored, for
	// Result.Fingerprints: a merge of shards counts their union.
	Fingerprints bool

	// clock, for tests, is the clock the time budget is read on (nil:
	// time.Now), so that a test can spend the budget at a point of its
	// choosing.
	clock func() time.Time
	// stepCost, for tests, is what a simulator step of the critical
	// search costs, in place of what the clock measures (0: measured).
	stepCost time.Duration
}

// Progress is a snapshot of a running check.
type Progress struct {
	Phase     string
	Stats     search.Stats
	Walks     int // walks done (phase "walks")
	Periphery int // walks to do
	// Suspect is the length of the path whose critical transition is
	// searched for (phase "critical").
	Suspect int
}

// DefaultDepthFor is the search depth when the options give none.
func (o *Options) DefaultDepthFor(sys *protocol.System) int {
	if len(o.Prefix) > 0 && sys.PrefixDepth > 0 {
		return sys.PrefixDepth
	}
	if sys.DefaultDepth > 0 {
		return sys.DefaultDepth
	}
	return DefaultDepth
}

func (o *Options) Fill(sys *protocol.System) {
	if o.Depth <= 0 {
		o.Depth = o.DefaultDepthFor(sys)
	}
	if o.MinDepth == 0 {
		o.MinDepth = DefaultMinDepth
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.HandlerTimeout <= 0 {
		o.HandlerTimeout = DefaultHandlerTimeout
	}
	if o.ConfirmTimeout <= 0 {
		o.ConfirmTimeout = ConfirmAllowance(o.HandlerTimeout)
	}
	if o.WalkDepth <= 0 {
		o.WalkDepth = DefaultWalkDepth
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Walks <= 0 {
		o.Walks = DefaultWalks
	}
	if o.Rounds <= 0 {
		o.Rounds = DefaultRounds
	}
	if o.MaxVerify <= 0 {
		o.MaxVerify = DefaultMaxVerify
	}
	if o.Mode == "" {
		o.Mode = "global"
	}
	if o.Reduce == "" {
		o.Reduce = DefaultReduce
	}
	if o.MaxMemory == 0 {
		o.MaxMemory = DefaultMaxMemory()
	} else if o.MaxMemory < 0 {
		o.MaxMemory = 0
	}
	switch {
	case o.Time < 0:
		o.Time = NoTimeLimit
	case o.Time == 0 && (o.Shard.Count != 0 || o.Shard.Index != 0):
		o.Time = NoTimeLimit // a shard's result must not depend on the machine
	case o.Time == 0:
		o.Time = DefaultTime
	}
	if o.AfterLive == 0 {
		o.AfterLive = DefaultAfterLive
	} else if o.AfterLive < 0 {
		o.AfterLive = WalkDepthAfterLive
	}
	if o.Escalations < 0 {
		o.Escalations = 0
	} else if o.Escalations == 0 {
		o.Escalations = DefaultEscalations
	}
}

// The defaults of Options, shared by the CLI's flags: a zero field in
// Options and a flag not given mean the same.
const (
	DefaultDepth = 20 // when the system gives none
	// DefaultMinDepth: a check cut short by its budget passes only if it
	// completed at least the first level (no violation within 0 steps
	// says nothing of what the protocol does).
	DefaultMinDepth       = 1
	DefaultTime           = 60 * time.Second
	DefaultHandlerTimeout = 2 * time.Second
	DefaultWalkDepth      = 5000
	DefaultWalks          = 8
	DefaultEscalations    = 3
	DefaultRounds         = 8
	DefaultMaxVerify      = 2_000_000
	DefaultPrefixSteps    = 100000
	// DefaultAfterLive: a walk checks safety after it recovers for twice
	// the steps it took to recover, so that the walks cost about three
	// times what walks that stop at recovery do, not the hundredfold of
	// walks on to WalkDepth (a correct ring recovers in about 50 steps).
	DefaultAfterLive = 2
	// AfterLiveMin is the fewest steps a walk goes on after it recovers
	// (within WalkDepth), however fast it recovered.
	AfterLiveMin = 32
)

// WalkDepthAfterLive, as Options.AfterLive, sends every walk from the
// periphery on to WalkDepth after it recovers, checking safety all the
// way (the command's --after-live -1).
const WalkDepthAfterLive = -1

// afterLive is what Walker.AfterLive is for Options.AfterLive a (filled
// in): nil, on to the walk depth, for WalkDepthAfterLive.
func afterLive(a int) func(liveAt int) int {
	if a < 0 {
		return nil
	}
	return func(liveAt int) int { return max(a*liveAt, AfterLiveMin) }
}

// NoTimeLimit, as Options.Time, says the check has no time budget: it
// ends at its depth bound, its state limit or its memory budget,
// whatever time that takes. The command's --time 0 means it.
const NoTimeLimit time.Duration = -1

// DefaultReduce is the reduction of the exhaustive search when none is
// given: every one that is sound for the system.
const DefaultReduce = "sleep,symmetry,observers"

// Reductions is what Options.Reduce asks for.
type Reductions struct {
	Sleep, Symmetry, Observers bool
}

// ParseReduce reads a reduction: "none", or a comma-separated list of
// "sleep", "symmetry" and "observers".
func ParseReduce(s string) (Reductions, error) {
	var r Reductions
	if s == "none" {
		return r, nil
	}
	for _, name := range strings.Split(s, ",") {
		switch strings.TrimSpace(name) {
		case "sleep":
			r.Sleep = true
		case "symmetry":
			r.Symmetry = true
		case "observers":
			r.Observers = true
		default:
			return r, fmt.Errorf("unknown reduction %q (valid: a comma-separated list of sleep, symmetry and observers, or none)", s)
		}
	}
	return r, nil
}

// ValidReduce says what is wrong with a reduction, if anything: the CLI
// checks its flag with it.
func ValidReduce(s string) error {
	_, err := ParseReduce(s)
	return err
}
