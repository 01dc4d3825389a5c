package host

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/cespare/xxhash/v2"
)

// The run log's chain (format 2). Every line of a node's run log is
// sealed to the line before it:
//
//	{"sum":"<16 hex digits>","seq":K,...the line's fields...}
//
// K is the line's index in the log (the header is 0, the entries from
// 1), and sum is xxhash64 of the sum of line K-1 (8 bytes, big-endian; 0
// before the header) followed by the line's bytes from "seq" to its end.
// So a line deleted, edited or moved is found where it was, by index: a
// hole in the indices is an entry deleted, an index out of its place an
// entry moved, a sum that does not match its line an entry edited. The
// chain is a checksum, not a MAC: it finds a log damaged or cut by hand
// or by a disk, not a forger who rewrites it whole (the cluster key does
// not sign the logs). A line cut short at the end of the log is a
// process killed in the middle of writing it: that line never was, and
// the node cuts it off when it starts again.
//
// The header records what the log can be merged with: the system, the
// node, the configuration (bugs, parameters, nodes), the executable
// (its name and the hash of its bytes), and the run: a random id made
// with the log, which the node's state file carries too.
//
// A log cut at its end (whole lines) leaves no hole. It is found from
// outside: every frame carries the index of the entry of the handler
// that sent it (wire.go), a delivery logs it (Sent), and trace refuses a
// log that ends before an entry a peer delivered a message from; and at
// its start a node refuses a log that ends before the entry its state
// file confirms.
//
// The state file and the log confirm each other (durable.go). A handler
// that changes a durable field takes the next generation G: its entry
// records G (Gen), then the state file is written, atomically, with G,
// the index and sum of the step's last line and the step's lines
// themselves, then a line {"wrote":G} confirms the write in the log;
// only then do its messages leave. A kill at any instant leaves the
// pair in one of three shapes, which the node, started again,
// reconciles the same way each time (reconcile):
//
//   - equal: the state file's G is the last the log records, at the
//     line the file names; the node goes on (and a write not yet
//     confirmed is, by the file).
//   - the log one step ahead: the log's last step records G, no line
//     confirms it, and the state file is of G-1 (or absent, G being 1):
//     the process died between the two writes. That step's state never
//     reached the disk and its messages never left, so it did not
//     happen: the node appends a void line naming the step's lines,
//     which trace leaves out, and starts from G-1, as the simulator's
//     reset after the step before. A write the log confirms is never
//     voided: a state file of G-1 then is one rolled back.
//   - the state file one step ahead: it is of G+1 and its lines follow
//     the log's last line in the chain (the log lost its last step: a
//     disk that kept the later write, a log on another disk); the node
//     appends those lines to the log from the state file, and goes on.
//
// Anything else is refused, in one line: a state file missing while the
// log records a write (deleted), of an older generation (rolled back),
// of another run, node, system or configuration (foreign), further
// ahead, or not at the line it names. Options.Fresh (run --fresh) starts
// the node afresh instead: New's fields, the state file written again,
// and an Init logged as fresh, a new boot that trace does not merge
// with the simulator's reset (which keeps durable fields).

// logFormat is the run log's format: 2 since the chain.
const logFormat = 2

// sumPrefix begins every line of a run log.
const sumPrefix = `{"sum":"`

// sumEnd is where a line's sealed part begins.
const sumEnd = len(sumPrefix) + 16 + 2

// chainSum is the sum of a line whose sealed part is rest, after a line
// whose sum is prev.
func chainSum(prev uint64, rest []byte) uint64 {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], prev)
	d := xxhash.New()
	d.Write(b[:])
	d.Write(rest)
	return d.Sum64()
}

// sealLine returns line, with index seq, as the log's line after one
// whose sum is prev, newline included, and its sum.
func sealLine(prev uint64, seq int, line LogLine) ([]byte, uint64, error) {
	line.Sum, line.Seq = "", seq
	b, err := json.Marshal(line)
	if err != nil {
		return nil, 0, err
	}
	if !bytes.HasPrefix(b, []byte(`{"seq":`)) {
		return nil, 0, fmt.Errorf("a log line begins %.20q", b)
	}
	rest := b[1:]
	sum := chainSum(prev, rest)
	out := make([]byte, 0, sumEnd+len(rest)+1)
	out = append(out, sumPrefix...)
	out = fmt.Appendf(out, "%016x", sum)
	out = append(out, '"', ',')
	out = append(out, rest...)
	return append(out, '\n'), sum, nil
}

// openLine splits a line (without its newline) into its sum and its
// sealed part; false if it is no line of a chained log.
func openLine(raw []byte) (uint64, []byte, bool) {
	if len(raw) <= sumEnd || !bytes.HasPrefix(raw, []byte(sumPrefix)) || raw[sumEnd-2] != '"' || raw[sumEnd-1] != ',' {
		return 0, nil, false
	}
	sum, err := strconv.ParseUint(string(raw[len(sumPrefix):sumEnd-2]), 16, 64)
	if err != nil {
		return 0, nil, false
	}
	return sum, raw[sumEnd:], true
}

// A VoidMark is a line of a run log: the lines From to To (indices) are
// a step whose state file write did not happen (the node was killed
// between its log and its state file): it did not happen, and trace
// leaves them out. The node writes it when it starts again.
type VoidMark struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// A chainLine is one whole line of a run log as read back.
type chainLine struct {
	LogLine
	sum uint64
	raw []byte // with its newline
}

// A chainLog is a run log read back whole and its chain checked.
type chainLog struct {
	name   string
	header *LogHeader
	lines  []chainLine // header first; line i has index i
	whole  int64       // the bytes of its whole lines: after them, a line cut short
	void   map[int]bool
}

// A LogDamage says where a run log's chain breaks: the node, the file,
// the entry (its index: the header is 0), and how.
type LogDamage struct {
	Node  int // -1: the header does not say
	File  string
	Entry int
	What  string
}

func (d *LogDamage) Error() string {
	who := "the run log"
	if d.Node >= 0 {
		who = fmt.Sprintf("node %d's run log", d.Node)
	}
	return fmt.Sprintf("%s %s: entry %d %s", who, d.File, d.Entry, d.What)
}

// errOldLog says a log is of format 1, before the chain.
var errOldLog = errors.New("written by an earlier livecheck (run log format 1, without the chain that format 2 confirms entries by): trace reads format 2; run the nodes again with this one")

// readChain reads a run log and checks its chain: a line deleted,
// edited or moved is a *LogDamage naming it. A line cut short at the
// end (no newline) is left out.
func readChain(b []byte, name string) (*chainLog, error) {
	c := &chainLog{name: name, void: map[int]bool{}}
	size := len(b)
	node := -1
	damage := func(i int, format string, args ...any) error {
		return &LogDamage{Node: node, File: name, Entry: i, What: fmt.Sprintf(format, args...)}
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break // cut short by a kill
		}
		raw := b[:i+1]
		b = b[i+1:]
		c.whole += int64(len(raw))
		k := len(c.lines)
		sum, _, ok := openLine(raw[:len(raw)-1])
		var l LogLine
		jerr := json.Unmarshal(raw, &l)
		if k == 0 {
			switch {
			case jerr == nil && l.Header != nil && (!ok || l.Header.Format < logFormat):
				return nil, fmt.Errorf("%s is %w", name, errOldLog)
			case !ok || jerr != nil || l.Header == nil:
				return nil, fmt.Errorf("%s: no header line: not a run log", name)
			case l.Header.Format > logFormat:
				return nil, fmt.Errorf("%s is of run log format %d, from a later livecheck: this one reads format %d", name, l.Header.Format, logFormat)
			}
			node = l.Header.Node
			c.header = l.Header
		}
		switch {
		case !ok || jerr != nil:
			return nil, damage(k, "is not a line of a run log: edited or damaged")
		case k > 0 && l.Header != nil:
			return nil, damage(k, "is a second header: another log was appended")
		}
		c.lines = append(c.lines, chainLine{LogLine: l, sum: sum, raw: raw})
	}
	if len(c.lines) == 0 && size > 0 {
		return nil, fmt.Errorf("%s: no header line: not a run log", name)
	}
	if len(c.lines) == 0 {
		return nil, fmt.Errorf("%s: empty: not a run log", name)
	}
	// The indices first: a hole, or an index out of its place, names the
	// entry deleted or moved better than the sum that breaks with it.
	for i, l := range c.lines {
		if l.Seq == i {
			continue
		}
		at := -1
		for j := i + 1; j < len(c.lines); j++ {
			if c.lines[j].Seq == i {
				at = j
				break
			}
		}
		switch {
		case l.Seq < i:
			return nil, damage(l.Seq, "comes twice: a copy of it follows entry %d", c.lines[i-1].Seq)
		case at == i+1:
			return nil, damage(l.Seq, "is out of its place: it comes before entry %d (moved)", i)
		case at > i:
			return nil, damage(i, "is out of its place: it comes after entry %d (moved)", c.lines[at-1].Seq)
		case l.Seq == i+1:
			return nil, damage(i, "is missing: deleted (entry %d follows entry %d)", l.Seq, i-1)
		default:
			return nil, damage(i, "is missing, to entry %d: deleted (entry %d follows entry %d)", l.Seq-1, l.Seq, i-1)
		}
	}
	var prev uint64
	for i, l := range c.lines {
		_, rest, _ := openLine(l.raw[:len(l.raw)-1])
		if chainSum(prev, rest) != l.sum {
			if i == 0 {
				return nil, damage(0, "(its header) was edited: its sum does not match it")
			}
			return nil, damage(i, "was edited: its sum does not match it")
		}
		prev = l.sum
		if v := l.Void; v != nil {
			if v.From < 1 || v.To < v.From || v.To >= i {
				return nil, damage(i, "voids entries %d to %d, which it cannot", v.From, v.To)
			}
			for j := v.From; j <= v.To; j++ {
				c.void[j] = true
			}
		}
	}
	return c, nil
}

// last is the index of the log's last line.
func (c *chainLog) last() int { return len(c.lines) - 1 }

// entries are the log's entries and snapshot marks, those a void line
// voids left out.
func (c *chainLog) entries() ([]LogEntry, []SnapMark) {
	var out []LogEntry
	var snaps []SnapMark
	for i, l := range c.lines[1:] {
		switch {
		case c.void[i+1] || l.Void != nil:
		case l.Wrote > 0:
		case l.Snap != nil:
			m := *l.Snap
			m.At = len(out)
			snaps = append(snaps, m)
		default:
			e := l.LogEntry
			e.Line = i + 1
			out = append(out, e)
		}
	}
	return out, snaps
}

// The executable's identity: its name and the hash of its bytes.
var exeOnce struct {
	sync.Once
	id string
}

// exeID is what the run log's header records of the executable.
func exeID() string {
	exeOnce.Do(func() {
		exeOnce.id = "unknown"
		name, err := os.Executable()
		if err != nil {
			return
		}
		f, err := os.Open(name)
		if err != nil {
			return
		}
		defer f.Close()
		d := xxhash.New()
		if _, err := io.Copy(d, f); err != nil {
			return
		}
		exeOnce.id = fmt.Sprintf("%s %016x", filepath.Base(name), d.Sum64())
	})
	return exeOnce.id
}

// newRunID is a new run's id, for the header of a new log.
func newRunID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// runLog is a node's open log.
type runLog struct {
	mu   sync.Mutex
	f    *os.File
	next int    // the next line's index
	sum  uint64 // the last line's sum
	// crash, a test hook, is the node's crash point check (Options.crash).
	crash func(point string) bool
}

// Crash points: the boundaries between a handler's writes, where a
// test kills the node (Options.crash) as a kill -9 there would.
const (
	crashLog      = "log"       // the handler ran; nothing written
	crashLogTorn  = "log-torn"  // half the step's first line written
	crashLogged   = "logged"    // its lines written, not its state file
	crashStateTmp = "state-tmp" // its state file's temporary file written, not renamed
	crashState    = "state"     // its state file written, not confirmed in the log
	crashWrote    = "wrote"     // the write confirmed in the log, nothing sent
	crashSentHalf = "sent-half" // one of its messages sent, not the others
	crashSent     = "sent"      // all sent
)

// CrashPoints are the crash points, in the order a handler meets them.
var CrashPoints = []string{crashLog, crashLogTorn, crashLogged, crashStateTmp, crashState, crashWrote, crashSentHalf, crashSent}

// errCrash is a crash point's: the node dies there (Options.crash).
var errCrash = errors.New("crashed at a crash point (a test's kill)")

// write appends line and hands it to the system (a killed process
// loses nothing written); it returns the line as written.
func (l *runLog) write(line LogLine) ([]byte, error) {
	raws, err := l.writeLines([]LogLine{line})
	if err != nil {
		return nil, err
	}
	return raws[0], nil
}

// writeLines appends a step's lines, in one write.
func (l *runLog) writeLines(lines []LogLine) ([][]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var all []byte
	raws := make([][]byte, len(lines))
	next, sum := l.next, l.sum
	for i, line := range lines {
		raw, s, err := sealLine(sum, next, line)
		if err != nil {
			return nil, err
		}
		raws[i] = raw
		all = append(all, raw...)
		next, sum = next+1, s
	}
	if l.crash != nil && l.crash(crashLogTorn) {
		// Killed in the middle of the write: half its first line.
		l.f.Write(raws[0][:len(raws[0])/2])
		return nil, errCrash
	}
	if _, err := l.f.Write(all); err != nil {
		return nil, err
	}
	l.next, l.sum = next, sum
	return raws, nil
}

// appendRaw appends lines read back from elsewhere (a state file's
// record), which follow the log's last line in the chain.
func (l *runLog) appendRaw(raws [][]byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, raw := range raws {
		sum, _, _ := openLine(raw[:len(raw)-1])
		if _, err := l.f.Write(raw); err != nil {
			return err
		}
		l.next, l.sum = l.next+1, sum
	}
	return nil
}

// nextSeq is the index the next line will have.
func (l *runLog) nextSeq() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next
}

func (l *runLog) close() { l.f.Close() }

// readOwnLog reads node h.Node's run log at name, if there is one, at
// the node's start: a log whose chain breaks, or of another system,
// node, configuration or executable, is refused. Nil: no log yet.
func readOwnLog(name string, h LogHeader) (*chainLog, error) {
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if bytes.IndexByte(b, '\n') < 0 {
		return nil, nil // empty, or its header cut short by a kill
	}
	c, err := readChain(b, name)
	if err != nil {
		return nil, fmt.Errorf("node %d refuses to start: %v", h.Node, err)
	}
	if why := c.header.Differs(&h); why != "" {
		return nil, fmt.Errorf("node %d refuses to start: its run log %s %s: give it another --log (Options.RunLog)", h.Node, name, why)
	}
	return c, nil
}

// Differs says how header a differs from b in what must be the same
// for a node to go on with its log, and for logs to merge: system, node
// count, configuration, executable, and (for one node's log) the node;
// "" if it does not. runlog checks a run's logs with it too.
func (a *LogHeader) Differs(b *LogHeader) string {
	switch {
	case a.System != b.System:
		return fmt.Sprintf("is of system %s, not %s", a.System, b.System)
	case a.Node != b.Node:
		return fmt.Sprintf("is node %d's, not node %d's", a.Node, b.Node)
	}
	if why := configDiffers(a, b); why != "" {
		return why
	}
	if a.Exe != b.Exe {
		return fmt.Sprintf("was written by another executable (%s, not %s)", a.Exe, b.Exe)
	}
	return ""
}

// configDiffers says how two headers' configurations differ, "" if they
// do not: the nodes, the bugs, the parameters.
func configDiffers(a, b *LogHeader) string {
	ca, cb := a.Config, b.Config
	switch {
	case ca.Nodes != cb.Nodes:
		return fmt.Sprintf("is of %d nodes, not %d", ca.Nodes, cb.Nodes)
	case fmt.Sprint(nonNil(ca.Bugs)) != fmt.Sprint(nonNil(cb.Bugs)):
		return fmt.Sprintf("is of bugs %v, not %v", nonNil(ca.Bugs), nonNil(cb.Bugs))
	case fmt.Sprint(ca.Params) != fmt.Sprint(cb.Params):
		return fmt.Sprintf("is of parameters %v, not %v", ca.Params, cb.Params)
	}
	return ""
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
