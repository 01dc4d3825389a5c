package host

import (
	"io"
	"os"

	"github.com/livecheck/livecheck/protocol"
)

// Run logs. With Options.RunLog a node appends a line of JSON to its
// log for each handler it ran: the event, the values its Choose calls
// returned, and its state's fingerprint after it, with a Lamport clock
// that orders the lines of all the nodes' logs consistently with cause
// and effect (a message's delivery comes after the handler that sent it:
// each frame carries its sender's clock). A log is written before the
// handler's messages leave, so a node killed at any point has logged
// every message it sent.
//
// runlog.Merge puts the nodes' logs in one order, as a path of the simulator:
// the nodes' first Init calls make the initial state, a later Init (the
// process started again) is a reset, a delivery names its message by
// fingerprint. runlog.Replay runs that path in the simulator and compares each
// node's fingerprint after each step with the one the node logged: a
// difference means the handler depends on something outside its state
// and its inputs (a clock, a global, real randomness), the finding the
// checker reports as nondeterminism. Broken connections (streams) are
// merged where the nemesis of Cluster made them (a break, a restart, a
// partition: partition.go) and where a killed process started again
// (back.go: its peers' Error steps at the clock of its Init, one
// Reset); an Error told after Options.SuspectFor has no step of the
// simulator (runlog.Merged.Stop).

// A LogLine is one line of a run log: the header (first line) or an
// entry. Sum and Seq seal it into the log's chain (chain.go).
type LogLine struct {
	Sum    string     `json:"sum,omitempty"`
	Seq    int        `json:"seq"`
	Header *LogHeader `json:"header,omitempty"`
	// Snap marks where the node recorded a snapshot (snapshot.go): the
	// entries before it are its part of the cut.
	Snap *SnapMark `json:"snap,omitempty"`
	// Void says a step's lines did not happen (chain.go).
	Void *VoidMark `json:"void,omitempty"`
	// Wrote confirms the write of the state file of this generation,
	// after it (chain.go).
	Wrote uint64 `json:"wrote,omitempty"`
	LogEntry
}

// LogHeader says whose log it is, and what it can be merged with.
type LogHeader struct {
	// Format is the log's format (chain.go): 2.
	Format int             `json:"format"`
	System string          `json:"system"`
	Node   int             `json:"node"`
	Config protocol.Config `json:"config"`
	// Exe is the executable that wrote it: its name and the hash of its
	// bytes.
	Exe string `json:"exe"`
	// Run is the log's run, a random id its node's state file carries.
	Run string `json:"run"`
	// Stream says the system's transport is streams.
	Stream bool `json:"stream,omitempty"`
	// Addr is the node's address, where `livecheck snapshot` asks it.
	Addr string `json:"addr,omitempty"`
}

// A LogEntry is one handler a node ran.
type LogEntry struct {
	Node  int    `json:"node"`
	Boot  int    `json:"boot"` // how many times the node started before this one (0: its first run)
	Clock uint64 `json:"clock,omitempty"`
	// Kind is init, deliver, timer, app or error; or drop or duplicate,
	// a fault the nemesis applied to a datagram the node sent to Peer,
	// or socket-error, its Error step when the nemesis broke its
	// connection to Peer, or reset-error, its Error step when the
	// nemesis restarted Peer (nemesis.go); or, on streams (partition.go),
	// partition-error, its Error step when a partition broke its
	// connection to Peer, refuse-error, its Error step for a send to Peer
	// across a partition, partition (the side in Side) or heal.
	Kind  string `json:"kind,omitempty"`
	Peer  int    `json:"peer,omitempty"`
	Msg   string `json:"msg,omitempty"` // a delivered message's fingerprint
	Timer string `json:"timer,omitempty"`
	// Call is the index of the driver's call in Spec.Calls, made by the
	// node or from Go (Node.NextCall, or Node.Call with the value of the
	// node's next one); -1 for any other call made from Go (Node.Call),
	// which no path can name.
	Call    int   `json:"call,omitempty"`
	Choices []int `json:"choices,omitempty"`
	// Epoch is a delivered message's sender's snapshot epoch: a
	// delivery after the node recorded snapshot E of a message sent
	// before its sender did (Epoch < E) was in flight in snapshot E.
	Epoch uint64 `json:"epoch,omitempty"`
	FP    string `json:"fp,omitempty"` // the node state's fingerprint after the handler
	// Reset marks the Init of a node of a stream system that the nemesis
	// restarted (Cluster.Restart): its peers' Error steps for it are
	// the reset-error entries at its clock.
	Reset bool `json:"reset,omitempty"`
	// Side is a partition's side without the highest node, and Parent a
	// refuse-error's handler that sent across: the index of the
	// handler in the node's part of the step (partition.go).
	Side   []int `json:"side,omitempty"`
	Parent int   `json:"parent,omitempty"`
	// Gen is the state file's generation the handler wrote (0: it
	// wrote none; chain.go).
	Gen uint64 `json:"gen,omitempty"`
	// Sent is a delivered message's sender's log entry: that of the
	// handler that sent it (0: the sender keeps no log).
	Sent int `json:"sent,omitempty"`
	// Fresh marks the Init of a node started afresh (Options.Fresh),
	// without the durable fields it kept.
	Fresh bool `json:"fresh,omitempty"`
	// Line is the entry's index in its log, as read back.
	Line int `json:"-"`
}

// ReadRunLog reads a run log: its header and its entries. A log whose
// chain breaks (an entry deleted, edited or moved) is an error naming
// the entry (*LogDamage).
func ReadRunLog(r io.Reader) (*LogHeader, []LogEntry, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	c, err := readChain(b, "(run log)")
	if err != nil {
		return nil, nil, err
	}
	es, _ := c.entries()
	return c.header, es, nil
}

// A RunLogFile is a run log as read from a file.
type RunLogFile struct {
	Name    string
	Header  *LogHeader
	Entries []LogEntry
	Snaps   []SnapMark // the snapshots the node recorded, each with its place (At)
	// Last is the index of its last line (chain.go): a peer's delivery
	// of a message sent in a later entry says the log was cut short.
	Last int
}

// ReadRunLogFile reads the run log in file name, and checks its chain:
// an entry deleted, edited or moved is an error naming the node, the
// file and the entry (*LogDamage).
func ReadRunLogFile(name string) (*RunLogFile, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	c, err := readChain(b, name)
	if err != nil {
		return nil, err
	}
	es, snaps := c.entries()
	return &RunLogFile{Name: name, Header: c.header, Entries: es, Snaps: snaps, Last: c.last()}, nil
}
