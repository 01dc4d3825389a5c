package reports

import (
	"time"

	"github.com/livecheck/livecheck/coverage"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// A Check is the report of one check: what `livecheck check --json`
// prints, and what its text and livecheck.Test's failures are written
// from. Fields tagged json:"-" are for the text only.
type Check struct {
	// Schema names the version of this JSON (CheckSchema), described by
	// docs/check.schema.json.
	Schema string `json:"schema"`
	Result string `json:"result"`
	System string `json:"system"`
	// Symmetry is the groups of interchangeable nodes the search reduced
	// by: its counts are of classes of states renamings of each other.
	Symmetry [][]sim.NodeID    `json:"symmetry,omitempty"`
	Bugs     []string          `json:"bugs"`
	Nodes    int               `json:"nodes"`
	Params   map[string]string `json:"params,omitempty"`
	Budget   sim.Budget        `json:"budget"`
	Seed     int64             `json:"seed"`
	Depth    int               `json:"depth"`
	Property string            `json:"property,omitempty"`
	// PropertyDoc says what the violated property means (the system's
	// words; several joined by "; ").
	PropertyDoc string `json:"property_doc,omitempty"`
	Message     string `json:"message,omitempty"`
	// History, for a violation of properties.Linearizable, is the client
	// history that shows it: the operations that cannot be ordered, on
	// the steps of the path.
	History *History `json:"history,omitempty"`
	Trace   string   `json:"trace,omitempty"`
	PathLen int      `json:"path_length,omitempty"`
	// Init is the choices of the first Init calls that give the initial
	// state the path starts from (none where there is one).
	Init      []int `json:"init,omitempty"`
	Complete  bool  `json:"complete"`
	Exhausted bool  `json:"exhausted"`
	// Covered is the depth the search finished: every state within it
	// was explored; Cut says what ended the search before its bound.
	Covered int    `json:"covered_depth"`
	Cut     string `json:"cut,omitempty"`
	// Interrupted: stopped by a signal; MemoryLimit: by --max-memory.
	Interrupted bool      `json:"interrupted,omitempty"`
	MemoryLimit bool      `json:"memory_limit,omitempty"`
	MaxMemory   int64     `json:"max_memory_bytes,omitempty"`
	PeakMemory  int64     `json:"peak_memory_bytes,omitempty"`
	Stats       Stats     `json:"stats"`
	Mode        string    `json:"mode"`
	Prefix      *Prefix   `json:"prefix,omitempty"`
	Local       *Local    `json:"local,omitempty"`
	Liveness    *Liveness `json:"liveness,omitempty"`
	Critical    *Critical `json:"critical,omitempty"`
	// FromBugs are the settings taken from the bugs' needs; BugWarnings
	// say where the settings given cannot show a bug.
	FromBugs    []Setting `json:"from_bugs,omitempty"`
	BugWarnings []string  `json:"bug_warnings,omitempty"`
	// Sometimes are the reachability properties, reached or not.
	Sometimes []Sometimes `json:"sometimes"`
	// Coverage counts the handlers the check ran (nil in local mode).
	Coverage *Coverage `json:"coverage,omitempty"`
	// Merge says how `livecheck merge` combined the shards of a split
	// check into this report (nil for a check's own report).
	Merge *Merge `json:"merge,omitempty"`
	// Phases are where the check's time went, phase by phase in the order
	// they first ran; their wall times add up to TimeMS, the check's.
	Phases []Phase `json:"phases,omitempty"`
	TimeMS float64 `json:"time_ms,omitempty"`

	// PrefixLen is the length of the live prefix the check started
	// after (Prefix is set only when it came from a file).
	PrefixLen int `json:"-"`
	// Steps are the violation's path in words.
	Steps []Step `json:"-"`
	// ReplayCommand and LiveReplayCommand replay Trace and the nearest
	// live path: `livecheck replay FILE`, or a go test command.
	ReplayCommand, LiveReplayCommand string `json:"-"`
	// Shortened is the dead path without the steps before the critical
	// one that do not matter (nil: none removed).
	Shortened *Shortened `json:"shortened,omitempty"`
	// Tail summarizes the steps of a dead path past those the text
	// shows; AllSteps shows every step instead (--steps all).
	Tail     *Tail `json:"tail,omitempty"`
	AllSteps bool  `json:"-"`
	// Graph draws the steps around the critical step as an event graph.
	Graph bool `json:"-"`
}

// CheckSchema is the version of a Check's JSON. A change that removes or
// renames a key, or changes what one means, makes a new version; a new
// key does not.
const CheckSchema = "livecheck/check/v1"

// Sometimes is one reachability property: whether the check reached it,
// and at which step (from the initial state; -1 when never reached).
type Sometimes struct {
	Name    string `json:"name"`
	Reached bool   `json:"reached"`
	Step    int    `json:"step"`
	// By says what reached it: "search" (Step is then the fewest steps
	// to it) or "walk" (the first walk's path to it).
	By string `json:"by,omitempty"`
	// NotEvaluated: local mode builds no global state to evaluate it on.
	NotEvaluated bool `json:"not_evaluated,omitempty"`
}

// Coverage counts the handlers run by the exhaustive search's
// transitions, and by the walks from the periphery (nil: no walks).
type Coverage struct {
	Search coverage.Summary  `json:"search"`
	Walks  *coverage.Summary `json:"walks,omitempty"`
}

// A Setting is one setting of a configuration that a bug's needs supplied.
type Setting = protocol.Setting

// Stats are the exhaustive search's figures.
type Stats struct {
	States      int64 `json:"states"`
	Transitions int64 `json:"transitions"`
	// Slept: transitions that sleep sets spared (--reduce sleep).
	Slept int64 `json:"slept"`
	// Postponed: observer events left out where other nodes' events were
	// taken (--reduce observers); not 0 means the states are those of the
	// reduced search, and depths count its steps.
	Postponed int64 `json:"postponed,omitempty"`
	// ProvisoRerun: the reduced graph of observer postponement had a
	// cycle of postponing states, and the search ran again, taking every
	// event in each state one of whose steps goes back; the figures are
	// the second search's.
	ProvisoRerun bool `json:"proviso_rerun,omitempty"`
	MaxDepth     int  `json:"max_depth"`
	// Beyond: for a search cut short within a level, the states of the
	// next depth it found there from BeyondFrom of those at the covered
	// depth (States counts them).
	Beyond     int64 `json:"beyond,omitempty"`
	BeyondFrom int64 `json:"beyond_from,omitempty"`
	Periphery  int   `json:"periphery"`
	LiveStates int64 `json:"live_states"`
	ElapsedMS  int64 `json:"elapsed_ms"`
	// CollisionChance is TLC's estimate of the chance that a fingerprint
	// collision hid a state (0 in local mode).
	CollisionChance float64       `json:"collision_chance"`
	Elapsed         time.Duration `json:"-"`
}

// Critical is the critical transition of a liveness violation.
type Critical struct {
	Step      int      `json:"step"`       // counted after the prefix, if any
	TraceStep int      `json:"trace_step"` // counted from the initial state
	Case      string   `json:"case"`
	Event     string   `json:"event"`
	Kind      string   `json:"kind"`
	Node      int      `json:"node"`
	Timer     string   `json:"timer,omitempty"`
	LiveStep  int      `json:"live_step"` // counted after the prefix, if any
	LiveTrace string   `json:"live_trace,omitempty"`
	Dinit     int      `json:"dinit"`
	WalkDepth int      `json:"walk_depth"`
	Tried     []string `json:"tried,omitempty"`
	Probes    int      `json:"probes"`
	// SearchSteps are the steps of the dead path (after the prefix) the
	// exhaustive search took, WalkSteps those of the walk from there (0:
	// the search reached a state where nothing can happen).
	SearchSteps int `json:"search_steps,omitempty"`
	WalkSteps   int `json:"walk_steps,omitempty"`
	// Dead is the evidence that the state after the critical step is
	// dead, Alive how the state before it recovers, End the evidence that
	// the path's last state is dead (what replay tests again).
	// Overturned counts steps the cheaper probes called dead and the dead
	// test did not.
	Dead       *Evidence `json:"dead,omitempty"`
	Alive      *Evidence `json:"alive,omitempty"`
	End        *Evidence `json:"end,omitempty"`
	Overturned int       `json:"overturned"`
	// Diff names the nodes whose states differ after the parting step on
	// the dead and the live path.
	Diff []Diff `json:"diff,omitempty"`

	// Before and After are the node states just before and after the
	// critical step on the dead path, LiveAfter after the live path's own
	// step there; LiveEvent is that step, LivePathLen the live path's
	// length.
	Before, After, LiveAfter []string `json:"-"`
	LiveEvent                string   `json:"-"`
	LivePathLen              int      `json:"-"`
	// BeforeNet, AfterNet and LiveAfterNet are the messages in flight
	// then ("Msg from->to", sorted).
	BeforeNet, AfterNet, LiveAfterNet []string `json:"-"`

	// Changes are the nodes the critical step changes, field by field,
	// and Network the messages it takes out of flight (Only1: the one it
	// consumed) and puts in (Only2); LiveChanges and LiveNetwork how the
	// state after it differs from the live path's there (Only1: the dead
	// path's). Explain fills them in.
	Changes     []NodeDiff `json:"changes,omitempty"`
	Network     *NetDiff   `json:"network,omitempty"`
	LiveChanges []NodeDiff `json:"live_changes,omitempty"`
	LiveNetwork *NetDiff   `json:"live_network,omitempty"`

	// Tested are the probes and dead tests of the search, in the order
	// run (html.go).
	Tested []Tested `json:"tested,omitempty"`
	// Slip is the step that took away what would have let the path
	// recover, or says none was found (nil: the search for it did not
	// finish, and SlipUnfinished says why).
	Slip           *Slip  `json:"slip,omitempty"`
	SlipUnfinished string `json:"slip_unfinished,omitempty"`
	// Odds are the recovery odds along the path before the critical
	// step (nil: not worked out, and OddsUnfinished says why).
	Odds           *Odds  `json:"odds,omitempty"`
	OddsUnfinished string `json:"odds_unfinished,omitempty"`
}

// Shortened is the dead path with the steps before its critical step
// that do not matter removed: Kept of Before steps are left, and Steps
// are the shortened path's, numbered as in the trace.
type Shortened struct {
	Before int    `json:"before"`
	Kept   int    `json:"kept"`
	Steps  []Step `json:"-"`
}

// Evidence is what a test from one state saw: a breadth-first search,
// then walks.
type Evidence struct {
	Step int  `json:"step"` // the state after this step of the trace
	Live bool `json:"live"` // a live state was reached
	// By says how: "live" (the state itself), "search" or "walk"; in
	// StepsToLive steps.
	By           string `json:"by,omitempty"`
	StepsToLive  int    `json:"steps_to_live,omitempty"`
	SearchDepth  int    `json:"search_depth"`    // every state within this many steps searched
	SearchStates int    `json:"search_states"`   // distinct states searched
	SearchAll    bool   `json:"search_all"`      // every reachable state searched
	Stuck        bool   `json:"stuck,omitempty"` // no event can happen in the state
	Walks        int    `json:"walks"`           // walks run
	Recovered    int    `json:"recovered"`       // of which reached a live state
	WalkDepth    int    `json:"walk_depth"`
}

// A Diff is a node whose state differs on the dead and the live path.
type Diff struct {
	Node int    `json:"node"`
	Dead string `json:"dead"`
	Live string `json:"live"`
}

// Liveness are the figures of the walks and the critical-transition search.
type Liveness struct {
	WalkDepth int `json:"walk_depth"`
	// SafetyToLive says safety was checked on walks only until they
	// recovered (--stop-at-live).
	SafetyToLive bool `json:"safety_until_live,omitempty"`
	// Otherwise each walk went on after it first recovered, checking
	// safety, for AfterLive times the steps it took to recover, at least
	// AfterLiveMin steps, within WalkDepth (AfterLive -1: on to
	// WalkDepth). AfterLiveSteps of the WalkSteps came after recovery, in
	// AfterLiveWalks walks.
	AfterLive      int   `json:"after_live,omitempty"`
	AfterLiveMin   int   `json:"after_live_min,omitempty"`
	AfterLiveSteps int64 `json:"after_live_steps"`
	AfterLiveWalks int   `json:"after_live_walks"`
	// FoundAfterLive, for a safety violation a walk found after it had
	// recovered, is how many steps after.
	FoundAfterLive int   `json:"found_after_live,omitempty"`
	Walks          int   `json:"walks"`
	WalkSteps      int64 `json:"walk_steps"`
	Suspects       int   `json:"suspects"`
	Cleared        int   `json:"cleared"`
	// WalksCut says the time budget ran out during the walks, with
	// nothing found: Walks of the Stats.Periphery states were walked from.
	WalksCut bool `json:"walks_cut,omitempty"`
	// DeadTestCut, when set, is the size of the check's dead tests,
	// below the floor of every dead test: they called nothing dead.
	DeadTestCut *DeadTestCut `json:"dead_test_cut,omitempty"`
	ElapsedMS   int64        `json:"elapsed_ms"`
	Weights     string       `json:"weights"`
	K           int          `json:"k"`
	CriticalMS  float64      `json:"critical_ms"`

	Elapsed, CriticalTime time.Duration `json:"-"`
}

// DeadTestCut is the size of a check's dead tests below the floor: as
// --dead-test asked (Fixed), or cut to fit the time budget, a step then
// costing StepNS and LeftMS of the budget left. Flag runs the same test.
type DeadTestCut struct {
	SearchStates int     `json:"search_states"`
	Walks        int     `json:"walks"`
	Fixed        bool    `json:"fixed,omitempty"`
	StepNS       float64 `json:"step_ns,omitempty"`
	LeftMS       int64   `json:"left_ms,omitempty"`
	Flag         string  `json:"flag"`
}

// Local are local mode's figures.
type Local struct {
	NodeStates    []int   `json:"node_states"`
	Messages      int     `json:"messages"`
	Transitions   int64   `json:"transitions"`
	SystemStates  int64   `json:"system_states"`
	Pairs         int64   `json:"pairs"`
	Preliminary   int64   `json:"preliminary_violations"`
	Verifications int64   `json:"verifications"`
	Sequences     int64   `json:"sequences"`
	Unsound       int64   `json:"unsound"`
	Rounds        int     `json:"rounds"`
	ExploreMS     float64 `json:"explore_ms"`
	CombineMS     float64 `json:"combine_ms"`
	VerifyMS      float64 `json:"verify_ms"`

	TotalNodeStates int           `json:"-"`
	Elapsed         time.Duration `json:"-"`
}

// Prefix names the prefix file a check started from.
type Prefix struct {
	File   string `json:"file"`
	Length int    `json:"length"`
}

// A Step is one step of a path in words. Steps are numbered from 1: step
// i is the i-th event, and "the state after step i" the state it leads
// to; the state after step 0 is the initial state.
type Step struct {
	Step      int      `json:"step"`
	Kind      string   `json:"kind"`
	Node      int      `json:"node"`
	Peer      int      `json:"-"`     // the sender of a delivery or a drop, the other end of a socket error
	Event     string   `json:"event"` // the event, with the message it carries
	Sent      []string `json:"sent,omitempty"`
	Logs      []string `json:"-"`
	Violation string   `json:"violation,omitempty"`
	// State is the fingerprint of the state after the step (0: not
	// known), for counting the distinct states of a dead path's tail.
	State uint64 `json:"-"`
}

// Merge is what `livecheck merge` adds to a check's report: how the
// shards of a split check were combined.
type Merge struct {
	Shards     int      `json:"shards"`
	Files      []string `json:"files"`
	SplitDepth int      `json:"split_depth"`
	// StatesSum adds up the shards' counts of states; StatesUnion, when
	// UnionExact (every shard saved its fingerprints), counts the
	// distinct ones among them, which the report's states then are.
	StatesSum   int64 `json:"states_sum"`
	StatesUnion int64 `json:"states_union,omitempty"`
	UnionExact  bool  `json:"union_exact"`
	// PerShard is what each shard found, in the order given.
	PerShard []MergeShard `json:"per_shard"`
	// Violations is the shortest violation of each property, the one
	// the report shows first.
	Violations []MergeViolation `json:"violations"`
	// Problem says why the shards do not make one check, if they do not.
	Problem string `json:"problem,omitempty"`
}

// MergeShard is one shard's result in a merge.
type MergeShard struct {
	Shard      int    `json:"shard"`
	File       string `json:"file"`
	Result     string `json:"result"`
	States     int64  `json:"states"`
	Foreign    int64  `json:"foreign_states"`
	Periphery  int    `json:"periphery"`
	Walks      int    `json:"walks"`
	Complete   bool   `json:"complete"`
	Covered    int    `json:"covered_depth"`
	SplitDepth int    `json:"split_depth"`
	Property   string `json:"property,omitempty"`
	PathLen    int    `json:"path_length,omitempty"`
}

// MergeViolation is the shortest violation of one property among the
// shards: the shard that found it, and its trace's file name.
type MergeViolation struct {
	Result   string `json:"result"`
	Property string `json:"property"`
	Shard    int    `json:"shard"`
	PathLen  int    `json:"path_length"`
	Trace    string `json:"trace"`
}

// A Phase is the time one phase of a check took (check.Phase): its wall
// time, the CPU time the process used meanwhile, on every core (0 where
// the system does not say), and their ratio, the cores it kept busy on
// average; SerialMS is the part of its wall time that ran, by design, on
// fewer goroutines than workers (the search's merges of its levels).
type Phase struct {
	Name     string  `json:"name"`
	WallMS   float64 `json:"wall_ms"`
	CPUMS    float64 `json:"cpu_ms"`
	Cores    float64 `json:"cores"`
	SerialMS float64 `json:"serial_ms,omitempty"`
}
