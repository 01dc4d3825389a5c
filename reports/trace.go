// Package reports holds what livecheck writes for people and programs:
// trace files, and the text and tables of a report.
//
// A trace file is versioned JSON: the system, its configuration, the seed,
// the property that failed and the path, as events and the values each
// step's Choose calls returned. `livecheck replay` re-executes it.
package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"

	"github.com/livecheck/livecheck/sim"
)

// TraceVersion is the version of the trace format this package writes.
// It reads this version and the ones before it: a file without a version
// (version 0) is read as version 1, which it is. A file of a newer version
// is refused with an error that names its version.
//
// In every version, steps count from 1: the i-th element of Steps is step
// i, the state after step i is the state it leads to, and the state after
// step 0 is the initial state; Critical.Step and LiveStep count so.
//
// Version 2 adds Init, the choices of the first Init calls that pick the
// initial state. A trace without them is written as version 1, byte for
// byte as before, so that only a file a version-1 reader cannot replay is
// refused by it, for its version.
//
// Version 3 adds the failures duplicate (a datagram copied; its budget is
// Budget.Dups) and partition (a cut between two sets of nodes, a step
// with the nodes of its side in Cut) with its heal (budget
// Budget.Partitions). A trace whose budget allows none of them is written
// as version 1 or 2, as before.
//
// Version 4 adds the fingerprints a real run's nodes logged (livecheck
// trace): InitFP, each node's state after its first Init, and each
// step's FP, the state of the step's node after it, which replay
// compares with the simulator's; and Critical.Slip, for people. A trace
// with neither is written as before.
//
// Version 5 adds the failure crash (a node's process stops, and the
// node is down until its reset restarts it; budget Budget.Crashes), a
// step of kind "crash" with its node. A trace whose budget allows no
// crash and whose path takes none is written as before.
//
// Version 6 adds, for people, the rest of what the check's report said
// of the critical step: Critical.Odds, the recovery odds, and
// Critical.SlipUnfinished and OddsUnfinished, why the report has no slip
// or no odds. A trace with none of them is written as before.
const TraceVersion = 6

// A Trace is the content of a trace file.
type Trace struct {
	Format   string            `json:"format"` // always "livecheck-trace"
	Version  int               `json:"version"`
	System   string            `json:"system"`
	Nodes    int               `json:"nodes"`
	Bugs     []string          `json:"bugs"`
	Params   map[string]string `json:"params,omitempty"`
	Budget   Budget            `json:"budget"`
	Seed     int64             `json:"seed"`
	Result   string            `json:"result"`             // "safety-violation", "liveness-violation"
	Property string            `json:"property,omitempty"` // the property violated
	Message  string            `json:"message,omitempty"`  // what the property said
	// PrefixLength is the length of the live prefix the check started
	// after; the steps include it.
	PrefixLength int `json:"prefix_length,omitempty"`
	// Critical is the critical transition of a liveness violation.
	Critical *TraceCritical `json:"critical,omitempty"`
	// DeadTest is the test that found no way back to a live state from
	// the last state of a liveness violation; replay runs it again.
	DeadTest *TraceDeadTest `json:"dead_test,omitempty"`
	// Init is the values the Choose calls of the nodes' first Init calls
	// returned, node 0's first: the initial state the steps start from
	// (empty where the system has one).
	Init []int `json:"init,omitempty"`
	// InitFP is, for a real run's trace, each node's state fingerprint
	// after its first Init, as the node logged it (16 hex digits; empty
	// for a node that logged none).
	InitFP []string    `json:"init_fp,omitempty"`
	Steps  []TraceStep `json:"steps"`
}

// TraceCritical records where a dead path became dead, and the file of its
// nearest live path. It is for people; replay checks the path itself.
type TraceCritical struct {
	Case      string `json:"case"`
	Step      int    `json:"step"`
	Event     string `json:"event"`
	Node      int    `json:"node"`
	LiveStep  int    `json:"live_step"`
	LiveTrace string `json:"live_trace,omitempty"`
	// Slip is the step that took away what would have let the path
	// recover (version 4), as the check's report gives it.
	Slip *Slip `json:"slip,omitempty"`
	// Odds are the recovery odds the report gave, and SlipUnfinished and
	// OddsUnfinished why it gave no slip or no odds (version 6).
	Odds           *Odds  `json:"odds,omitempty"`
	SlipUnfinished string `json:"slip_unfinished,omitempty"`
	OddsUnfinished string `json:"odds_unfinished,omitempty"`
}

// TraceDeadTest records a dead test: a breadth-first search of up to
// States distinct states, then Walks walks of WalkDepth steps, walk j
// seeded from Seed and j, with the walk weights.
type TraceDeadTest struct {
	States    int    `json:"search_states"`
	Walks     int    `json:"walks"`
	WalkDepth int    `json:"walk_depth"`
	Seed      uint64 `json:"seed"`
	Weights   string `json:"weights,omitempty"`
}

// Budget is the failure budget of a trace's configuration. The failures
// added after version 2 are left out when 0, so that a trace without
// them is written as before.
type Budget struct {
	Resets int `json:"resets"`
	Drops  int `json:"drops"`
	Errors int `json:"errors"`
	Dups   int `json:"dups,omitempty"`
	// Partitions: see sim.Budget.
	Partitions int `json:"partitions,omitempty"`
	// Crashes: see sim.Budget (version 5).
	Crashes int `json:"crashes,omitempty"`
}

// newer says whether b allows a failure that version 2 does not know.
func (b Budget) newer() bool { return b.Dups != 0 || b.Partitions != 0 }

// crashes says whether t's budget allows crashes or its path takes one:
// version 5.
func (t *Trace) crashes() bool {
	if t.Budget.Crashes != 0 {
		return true
	}
	for _, st := range t.Steps {
		if st.Kind == "crash" {
			return true
		}
	}
	return false
}

// A TraceStep is one event of a path, by content, with its choices.
type TraceStep struct {
	Kind  string `json:"kind"`
	Node  int    `json:"node"`
	Peer  *int   `json:"peer,omitempty"`
	Timer string `json:"timer,omitempty"`
	Call  *int   `json:"call,omitempty"`
	Msg   string `json:"msg,omitempty"` // fingerprint of the message, 16 hex digits
	// Cut is a partition's side: the nodes it cuts off from the others
	// (never the highest node).
	Cut     []int `json:"cut,omitempty"`
	Choices []int `json:"choices,omitempty"`
	// FP is, in a real run's trace, the fingerprint of the step's node's
	// state after the step as the node logged it (16 hex digits), which
	// replay compares with the simulator's.
	FP string `json:"fp,omitempty"`
	// Text says what the step did in words; it is for people and is not
	// read back.
	Text string `json:"text,omitempty"`
}

const traceFormat = "livecheck-trace"

// FromPath converts a path to trace steps. describe, when not nil, gives
// each step's text.
func FromPath(p sim.Path, describe func(i int) string) []TraceStep {
	out := make([]TraceStep, len(p))
	for i, st := range p {
		ev := st.Event
		ts := TraceStep{Kind: ev.Kind.String(), Node: int(ev.Node), Choices: st.Choices}
		switch ev.Kind {
		case sim.Deliver, sim.Drop, sim.Duplicate:
			peer := int(ev.Peer)
			ts.Peer = &peer
			ts.Msg = fmt.Sprintf("%016x", ev.Msg)
		case sim.SocketError:
			peer := int(ev.Peer)
			ts.Peer = &peer
		case sim.Timer:
			ts.Timer = ev.Timer
		case sim.App:
			c := ev.Call
			ts.Call = &c
		case sim.Partition:
			for t := ev.Side(); t != 0; t &= t - 1 {
				id := bits.TrailingZeros64(uint64(t))
				ts.Cut = append(ts.Cut, id)
			}
		}
		if describe != nil {
			ts.Text = describe(i)
		}
		out[i] = ts
	}
	return out
}

// Path converts trace steps back to a path. The error names the first step
// that is malformed.
func Path(steps []TraceStep) (sim.Path, error) {
	p := make(sim.Path, len(steps))
	for i, ts := range steps {
		bad := func(format string, args ...any) error {
			return fmt.Errorf("step %d: %s", i+1, fmt.Sprintf(format, args...))
		}
		k, err := sim.ParseKind(ts.Kind)
		if err != nil {
			return nil, bad("%v", err)
		}
		ev := sim.Event{Kind: k, Node: sim.NodeID(ts.Node)}
		if ts.Node < 0 {
			return nil, bad("node %d is negative", ts.Node)
		}
		switch k {
		case sim.Deliver, sim.Drop, sim.Duplicate, sim.SocketError:
			if ts.Peer == nil || *ts.Peer < 0 {
				return nil, bad("a %s step needs a peer node", ts.Kind)
			}
			ev.Peer = sim.NodeID(*ts.Peer)
			if k != sim.SocketError {
				fp, err := strconv.ParseUint(ts.Msg, 16, 64)
				if err != nil || len(ts.Msg) != 16 {
					return nil, bad("msg %q is not a 16-digit hex fingerprint", ts.Msg)
				}
				ev.Msg = fp
			}
		case sim.Timer:
			if ts.Timer == "" {
				return nil, bad("a timer step needs the timer's name")
			}
			ev.Timer = ts.Timer
		case sim.App:
			if ts.Call == nil || *ts.Call < 0 {
				return nil, bad("an app step needs the index of the driver's call")
			}
			ev.Call = *ts.Call
		case sim.Partition:
			var side sim.NodeSet
			for _, id := range ts.Cut {
				if id < 0 || id >= sim.MaxPartitionNodes-1 || side.Has(sim.NodeID(id)) {
					return nil, bad("a partition's cut lists node %d: nodes are 0 to %d, each once", id, sim.MaxPartitionNodes-2)
				}
				side = side.Add(sim.NodeID(id))
			}
			if side == 0 {
				return nil, bad("a partition step needs the nodes of its side (cut)")
			}
			ev = sim.PartitionEvent(side)
		case sim.Heal:
			ev = sim.Event{Kind: sim.Heal}
		}
		for _, c := range ts.Choices {
			if c < 0 {
				return nil, bad("choice %d is negative", c)
			}
		}
		p[i] = sim.Step{Event: ev, Choices: ts.Choices}
	}
	return p, nil
}

// Write writes t as indented JSON.
func (t *Trace) Write(w io.Writer) error {
	t.Stamp()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(t)
}

// Stamp sets the trace's format and version, as Write does: for a trace
// kept inside another file (a shard's result).
func (t *Trace) Stamp() {
	t.Format, t.Version = traceFormat, TraceVersion
	switch {
	case t.Critical != nil && (t.Critical.Odds != nil || t.Critical.SlipUnfinished != "" || t.Critical.OddsUnfinished != ""):
	case t.crashes():
		t.Version = 5
	case t.HasFingerprints(), t.Critical != nil && t.Critical.Slip != nil:
		t.Version = 4
	case t.Budget.newer():
		t.Version = 3
	case len(t.Init) > 0:
		t.Version = 2
	default:
		t.Version = 1
	}
}

// ReadTrace reads and checks a trace. The error says what is wrong with it.
func ReadTrace(r io.Reader) (*Trace, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	// The version first, leniently: a newer file may have fields this
	// version does not know, and must be refused for its version, not
	// for them.
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err == nil && head.Format == traceFormat {
		switch {
		case head.Version > TraceVersion:
			return nil, fmt.Errorf("trace format version %d is not supported (this livecheck reads versions up to %d; replay it with a newer one)", head.Version, TraceVersion)
		case head.Version < 0:
			return nil, fmt.Errorf("trace format version %d is not a version", head.Version)
		}
	}
	var t Trace
	if err := DecodeJSON(data, &t, "trace file"); err != nil {
		return nil, err
	}
	if t.Version == 0 {
		t.Version = 1 // written before the field was required
	}
	switch {
	case t.Format != traceFormat:
		return nil, fmt.Errorf("not a livecheck trace file (format %q, want %q)", t.Format, traceFormat)
	case t.System == "":
		return nil, fmt.Errorf("the trace names no system")
	case t.Nodes < 1:
		return nil, fmt.Errorf("the trace has %d nodes; at least 1 is needed", t.Nodes)
	case t.Budget.Resets < 0 || t.Budget.Drops < 0 || t.Budget.Errors < 0 || t.Budget.Dups < 0 || t.Budget.Partitions < 0 || t.Budget.Crashes < 0:
		return nil, fmt.Errorf("the trace has a negative failure budget")
	}
	if _, err := Path(t.Steps); err != nil {
		return nil, fmt.Errorf("the trace's path is malformed: %v", err)
	}
	for i, c := range t.Init {
		if c < 0 {
			return nil, fmt.Errorf("the trace's init choice %d is %d: choices are not negative", i, c)
		}
	}
	for i, fp := range t.InitFP {
		if fp != "" && !hexFP(fp) {
			return nil, fmt.Errorf("the trace's init_fp %d is %q, not a 16-digit hex fingerprint", i, fp)
		}
	}
	for i, st := range t.Steps {
		if st.FP != "" && !hexFP(st.FP) {
			return nil, fmt.Errorf("the trace's step %d has fp %q, not a 16-digit hex fingerprint", i+1, st.FP)
		}
	}
	return &t, nil
}

// HasFingerprints says whether t carries a real run's fingerprints
// (version 4).
func (t *Trace) HasFingerprints() bool {
	if len(t.InitFP) > 0 {
		return true
	}
	for _, st := range t.Steps {
		if st.FP != "" {
			return true
		}
	}
	return false
}

// hexFP says whether s is 16 hex digits.
func hexFP(s string) bool {
	_, err := strconv.ParseUint(s, 16, 64)
	return err == nil && len(s) == 16
}

// DecodeJSON decodes data into v as the readers of livecheck's files do:
// one JSON value with no field v lacks, and nothing after it but white
// space. The error says what is wrong, naming the file's kind (what:
// "trace file").
func DecodeJSON(data []byte, v any, what string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return fmt.Errorf("not a valid %s (malformed or truncated JSON: %v)", what, err)
		}
		return fmt.Errorf("not a valid %s: %v", what, err)
	}
	// Decoder.More misses a stray ] or }: look at the rest itself.
	if rest := bytes.Trim(data[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return fmt.Errorf("not a valid %s: %s of data after the JSON object", what, Count(len(rest), "byte"))
	}
	return nil
}

// ReadTraceFile reads and checks the trace file at path.
func ReadTraceFile(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := ReadTrace(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// WriteFileAtomic writes a file through a temporary file in the same
// directory and a rename, so a reader never sees half of it; the directory
// is made if needed.
func WriteFileAtomic(path string, write func(w io.Writer) error) error {
	return WriteFilesAtomic([]string{path}, []func(io.Writer) error{write})
}

// WriteFilesAtomic writes files that belong together (a dead trace and
// the nearest live path it names) as WriteFileAtomic writes one, all or
// none: every one is written to a temporary file first, and renamed only
// once all are on disk, so that a full disk leaves no half of the set.
// write[i] writes paths[i]. Should a rename fail, the files renamed before
// it that did not exist before are removed again.
func WriteFilesAtomic(paths []string, write []func(w io.Writer) error) (err error) {
	var tmps []string
	defer func() {
		for _, tmp := range tmps {
			if tmp != "" {
				os.Remove(tmp)
			}
		}
	}()
	for i, path := range paths {
		dir := filepath.Dir(path)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
		if err != nil {
			return err
		}
		tmps = append(tmps, f.Name())
		// Readable by others, as a file os.Create makes (CreateTemp's
		// are the owner's only).
		err = f.Chmod(0o644)
		if err == nil {
			err = write[i](f)
		}
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	var made []string // renamed, and new
	for i, path := range paths {
		_, statErr := os.Lstat(path)
		if err := os.Rename(tmps[i], path); err != nil {
			for _, m := range made {
				os.Remove(m)
			}
			return err
		}
		tmps[i] = ""
		if errors.Is(statErr, os.ErrNotExist) {
			made = append(made, path)
		}
	}
	return nil
}

// TraceName returns a file name for a trace: the system, the property and
// a short hash of the path and the initial state it starts from, so the
// same finding always gets the same name.
func TraceName(system, property string, init []int, p sim.Path) string {
	if property == "" {
		property = "trace"
	}
	return fmt.Sprintf("%s-%s-%s.json", system, property, PathHash(init, p))
}

// PathHash is the short hash of a path that names its trace files: 8 hex
// digits. The choices of the first Init calls (init) count where there
// are any: two paths alike from two initial states are two traces.
func PathHash(init []int, p sim.Path) string {
	h := p.Hash()
	if len(init) > 0 {
		var x sim.Hasher
		x.Uint64(h)
		for _, c := range init {
			x.Int(c)
		}
		h = x.Sum64()
	}
	return fmt.Sprintf("%08x", uint32(h))
}
