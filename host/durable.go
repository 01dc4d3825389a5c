package host

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// Durable fields on disk. After every handler that changed one, the node
// writes all of them to its state file, atomically (a temporary file,
// fsync, rename, fsync of the directory), after the handler's lines in
// its run log and before any message the handler sent leaves: a node
// killed at any point and started again finds them as the last handler
// whose write happened left them, which is what the simulator's reset
// keeps, and its log says which handler that was (chain.go). A restart
// builds the node with Spec.New, loads the fields into it, and runs
// Init.
//
// The file: the line "livecheck-durable 3", then gob's encoding of
// stateFile, each field's value in it in the codec's encoding (codec.go),
// then the CRC-32C of everything before it (4 bytes, big-endian). A file
// that does not read back whole is damaged, and the node refuses to
// start. Version 3 carries the generation, the run and the
// configuration that the run log confirms; a file of an earlier version
// is refused, saying so.

const durableMagic = "livecheck-durable 3\n"

type stateFile struct {
	System string
	Node   int
	// The configuration: a state file of other bugs, parameters or
	// nodes is another system's.
	Nodes  int
	Bugs   []string
	Params map[string]string
	// Run is the run log's run (its header's), "" without a log.
	Run string
	// Gen is the file's generation: one more at each write.
	Gen uint64
	// Head is the index of the last line of the step that wrote the
	// file in the run log, and HeadSum its sum; Record are the step's
	// lines, as the log has them (chain.go). None without a log.
	Head    int
	HeadSum uint64
	Record  [][]byte
	// Calls is how many of the driver's calls to the node it has made
	// (Spec.Calls): a restart does not make them again.
	Calls  int
	Fields []stateField
}

type stateField struct {
	Name string
	Zero bool // the field's zero value: no Data
	Data []byte
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// stateFileName is node id's state file in dir.
func stateFileName(dir string, id sim.NodeID) string {
	return filepath.Join(dir, fmt.Sprintf("node-%d.state", id))
}

// durableFields encodes n's durable fields, and returns them with the
// bytes a write compares with the last (the fields and calls).
func durableFields(n sim.Node, calls int) ([]stateField, []byte, error) {
	var fields []stateField
	for _, d := range sim.DurableFields(n) {
		sf := stateField{Name: d.Name, Zero: d.Value.IsZero()}
		if !sf.Zero {
			if err := registerValue(d.Value); err != nil {
				return nil, nil, fmt.Errorf("durable field %s: %v", d.Name, err)
			}
			var err error
			if sf.Data, err = encodeValue(nil, d.Value); err != nil {
				return nil, nil, fmt.Errorf("durable field %s: %v", d.Name, err)
			}
		}
		fields = append(fields, sf)
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(struct {
		Calls  int
		Fields []stateField
	}{calls, fields}); err != nil {
		return nil, nil, err
	}
	return fields, b.Bytes(), nil
}

// encodeState returns f as a state file.
func encodeState(f *stateFile) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(durableMagic)
	if err := gob.NewEncoder(&b).Encode(f); err != nil {
		return nil, err
	}
	return binary.BigEndian.AppendUint32(b.Bytes(), crc32.Checksum(b.Bytes(), castagnoli)), nil
}

// errDamaged says a state file does not read back whole.
var errDamaged = errors.New("damaged")

// decodeState reads a state file, and checks that it is node h.Node's of
// h's system and configuration.
func decodeState(b []byte, h *LogHeader) (*stateFile, error) {
	body, ok := checkCRC(b)
	if ok && !bytes.HasPrefix(body, []byte(durableMagic)) {
		if v, found := strings.CutPrefix(string(body[:min(len(body), 32)]), "livecheck-durable "); found {
			v, _, _ = strings.Cut(v, "\n")
			return nil, fmt.Errorf("of version %s, written by an earlier livecheck, with no generation for the run log to confirm it by", v)
		}
	}
	if !ok || !bytes.HasPrefix(body, []byte(durableMagic)) {
		return nil, fmt.Errorf("%w (its checksum or header is wrong)", errDamaged)
	}
	var f stateFile
	if err := gob.NewDecoder(bytes.NewReader(body[len(durableMagic):])).Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %v", errDamaged, err)
	}
	if f.System != h.System || f.Node != h.Node {
		return nil, fmt.Errorf("node %d's of system %s, not node %d's of %s", f.Node, f.System, h.Node, h.System)
	}
	fh := LogHeader{Config: protocol.Config{Nodes: f.Nodes, Bugs: f.Bugs, Params: f.Params}}
	if why := configDiffers(&fh, &LogHeader{Config: protocol.Config{Nodes: h.Config.Nodes, Bugs: h.Config.Bugs, Params: h.Config.Params}}); why != "" {
		return nil, fmt.Errorf("of another configuration: it %s", why)
	}
	return &f, nil
}

// load loads f's fields into n, a node as New built it.
func (f *stateFile) load(n sim.Node) error {
	byName := map[string]stateField{}
	for _, sf := range f.Fields {
		byName[sf.Name] = sf
	}
	for _, d := range sim.DurableFields(n) {
		sf, ok := byName[d.Name]
		if !ok {
			continue // a field added since: New's value
		}
		d.Value.Set(reflect.Zero(d.Value.Type()))
		if sf.Zero {
			continue
		}
		if err := decodeValue(sf.Data, d.Value); err != nil {
			return fmt.Errorf("durable field %s does not read back: %v", d.Name, err)
		}
	}
	return nil
}

func checkCRC(b []byte) ([]byte, bool) {
	if len(b) < 4 {
		return nil, false
	}
	body, sum := b[:len(b)-4], b[len(b)-4:]
	return body, crc32.Checksum(body, castagnoli) == binary.BigEndian.Uint32(sum)
}

// readState reads node h.Node's state file in dir, if there is one (nil
// if not), refusing one that is damaged, of an earlier version, or of
// another node, system or configuration.
func readState(dir string, h *LogHeader) (*stateFile, error) {
	name := stateFileName(dir, sim.NodeID(h.Node))
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	f, err := decodeState(b, h)
	if err != nil {
		return nil, fmt.Errorf("node %d refuses to start: its state file %s is %v; %s", h.Node, name, err, afresh)
	}
	return f, nil
}

// afresh says how to start a node that refuses its state file.
const afresh = "start it afresh (run --fresh, Options.Fresh) to begin again without what it kept"

// removeTemps removes the temporary files a write of node id's state
// file left in dir when its process was killed before the rename.
func removeTemps(dir string, id sim.NodeID) {
	tmps, _ := filepath.Glob(stateFileName(dir, id) + ".tmp*")
	for _, t := range tmps {
		os.Remove(t)
	}
}

// A plan is what a node appends to its run log at its start to
// reconcile it with its state file (chain.go): a void line for the
// log's last step, or the state file's record of a step the log lacks.
type plan struct {
	voidFrom, voidTo int // voidFrom > 0: void lines voidFrom to voidTo
	restore          [][]byte
}

// reconcile compares node id's state file st (nil: none) with its run
// log c (nil: a new log), by the rules in chain.go, and says what to
// append to the log; an error, in one line, if the node must refuse to
// start.
func reconcile(id sim.NodeID, st *stateFile, stName string, c *chainLog, logName string) (plan, error) {
	refuse := func(format string, args ...any) (plan, error) {
		return plan{}, fmt.Errorf("node %d refuses to start: %s; %s", id, fmt.Sprintf(format, args...), afresh)
	}
	if c == nil {
		if st == nil {
			return plan{}, nil
		}
		return refuse("its state file %s (generation %d) has no run log to confirm it: %s is new (the run's log is elsewhere, or was deleted)", stName, st.Gen, logName)
	}
	gen, at, ahead := c.lastGen()
	void := plan{voidFrom: at, voidTo: c.last()}
	headOK := func() bool {
		return st.Head > 0 && st.Head <= c.last() && !c.void[st.Head] && c.lines[st.Head].sum == st.HeadSum
	}
	switch {
	case st == nil && gen == 0:
		return plan{}, nil
	case st == nil && gen == 1 && ahead:
		return void, nil // the first write did not happen
	case st == nil:
		return refuse("its state file %s is missing, but its run log %s says it wrote generation %d (entry %d): deleted or lost", stName, logName, gen, at)
	case st.Run != c.header.Run:
		return refuse("its state file %s is of another run (%s) than its run log %s (%s)", stName, st.Run, logName, c.header.Run)
	case st.Gen == gen && gen > 0 && st.Head > c.last():
		return refuse("its run log %s ends at entry %d, before entry %d that its state file %s confirms: the log was cut short", logName, c.last(), st.Head, stName)
	case st.Gen == gen && gen > 0 && !headOK():
		return refuse("its state file %s confirms entry %d of its run log %s, which is not the entry there", stName, st.Head, logName)
	case st.Gen == gen && gen > 0:
		return plan{}, nil
	case st.Gen+1 == gen && ahead && headOK():
		return void, nil // the log is one step ahead
	case st.Gen == gen+1 && c.follows(st):
		return plan{restore: st.Record}, nil // the state file is one step ahead
	case st.Gen < gen:
		return refuse("its state file %s is of generation %d, older than the %d its run log %s records (entry %d): rolled back", stName, st.Gen, gen, logName, at)
	}
	return refuse("its state file %s is of generation %d, ahead of its run log %s, which records %d (entry %d): the log lost entries, or the file is another's", stName, st.Gen, logName, gen, at)
}

// lastGen is the last state file generation the log records (0: none),
// the index of its entry, and whether the log may be one step ahead of
// the state file: that entry's step ends the log (nothing but the
// step's faults after it), and no line confirms its write.
func (c *chainLog) lastGen() (gen uint64, at int, ahead bool) {
	for i := c.last(); i > 0; i-- {
		if l := c.lines[i]; !c.void[i] && l.Void == nil && l.Wrote == 0 && l.Gen > 0 {
			gen, at = l.Gen, i
			break
		}
	}
	if at == 0 {
		return 0, 0, false
	}
	e := c.lines[at]
	for _, l := range c.lines[at+1:] {
		if l.Header != nil || l.Snap != nil || l.Void != nil || l.Wrote > 0 || l.Kind != "drop" && l.Kind != "duplicate" || l.Clock != e.Clock || l.Boot != e.Boot {
			return gen, at, false
		}
	}
	return gen, at, true
}

// follows says whether st's record of its step is the log's next lines:
// they follow its last line in the chain, and end at the line st names.
func (c *chainLog) follows(st *stateFile) bool {
	if len(st.Record) == 0 {
		return false
	}
	prev, seq := c.lines[c.last()].sum, c.last()+1
	for _, raw := range st.Record {
		if len(raw) == 0 || raw[len(raw)-1] != '\n' {
			return false
		}
		sum, rest, ok := openLine(raw[:len(raw)-1])
		var l LogLine
		if !ok || chainSum(prev, rest) != sum || json.Unmarshal(raw, &l) != nil || l.Seq != seq || l.Header != nil {
			return false
		}
		prev, seq = sum, seq+1
	}
	return seq-1 == st.Head && prev == st.HeadSum
}

// writeAtomic replaces file name with b: a temporary file beside it,
// fsync, rename, fsync of the directory. beforeRename, if set, runs
// with the temporary file written (a test's crash point): an error
// leaves it there, as a kill would.
func writeAtomic(name string, b []byte, beforeRename func() error) error {
	dir := filepath.Dir(name)
	tmp, err := os.CreateTemp(dir, filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && beforeRename != nil {
		if err := beforeRename(); err != nil {
			return err
		}
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	d.Close()
	return err
}

// openDisk loads the node's state file and opens its run log at its
// start, reconciled with each other (chain.go), or refuses them in one
// line; hadState says a state file was loaded.
func (n *Node) openDisk(cfg protocol.Config) (hadState bool, err error) {
	o := &n.opts
	n.cfg = cfg
	h := LogHeader{Format: logFormat, System: n.sys.Name, Node: int(n.id), Config: cfg, Exe: exeID(),
		Stream: n.model.Spec.Transport == sim.Stream, Addr: o.Peers[o.ID]}
	if o.exe != "" {
		h.Exe = o.exe
	}
	var c *chainLog
	if o.RunLog != "" {
		if c, err = readOwnLog(o.RunLog, h); err != nil {
			return false, err
		}
	}
	var st *stateFile
	if o.Data != "" {
		removeTemps(o.Data, n.id)
		if !o.Fresh {
			if st, err = readState(o.Data, &h); err != nil {
				return false, err
			}
		}
	}
	var pl plan
	if o.RunLog != "" && o.Data != "" && !o.Fresh {
		if pl, err = reconcile(n.id, st, stateFileName(o.Data, n.id), c, o.RunLog); err != nil {
			return false, err
		}
	}
	if st != nil {
		if err := st.load(n.node); err != nil {
			return false, fmt.Errorf("node %d refuses to start: its state file %s: %v; %s", n.id, stateFileName(o.Data, n.id), err, afresh)
		}
		if _, n.durable, err = durableFields(n.node, st.Calls); err != nil {
			return false, err
		}
		n.calls, n.stGen, n.runID = st.Calls, st.Gen, st.Run
	}
	if o.RunLog == "" {
		return st != nil, nil
	}
	f, err := os.OpenFile(o.RunLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return false, err
	}
	l := &runLog{f: f}
	var whole int64
	if c != nil {
		whole = c.whole
		l.next, l.sum = len(c.lines), c.lines[c.last()].sum
		h.Run = c.header.Run
		if o.Fresh {
			n.stGen, _, _ = c.lastGen()
		}
	}
	// A line cut short at the end (a process killed while it wrote it)
	// never was: cut it off, so that the next line starts a line.
	if err := f.Truncate(whole); err != nil {
		f.Close()
		return false, err
	}
	if c == nil {
		h.Run = newRunID()
		if _, err := l.write(LogLine{Header: &h}); err != nil {
			f.Close()
			return false, err
		}
	}
	// The lines that happened: a voided step's Init did not start a
	// boot (its clock is counted all the same: clocks only grow).
	var lines []LogLine
	if c != nil {
		for i, cl := range c.lines {
			if c.void[i] || pl.voidFrom > 0 && i >= pl.voidFrom && i <= pl.voidTo {
				n.clock = max(n.clock, cl.Clock)
				continue
			}
			lines = append(lines, cl.LogLine)
		}
	}
	if pl.restore != nil {
		for _, raw := range pl.restore {
			var ll LogLine
			json.Unmarshal(raw, &ll)
			lines = append(lines, ll)
		}
	}
	stepBoot := 0
	for _, ll := range lines {
		n.clock = max(n.clock, ll.Clock)
		switch {
		case ll.Snap != nil:
			n.epoch = max(n.epoch, ll.Snap.Epoch)
			n.clock = max(n.clock, ll.Snap.Clock)
		case ll.Kind != "":
			n.boot = max(n.boot, ll.Boot+1)
			stepBoot = ll.Boot
			if ll.FP != "" {
				n.lastFP = ll.FP
			}
		}
	}
	mark := LogEntry{Node: int(n.id), Boot: stepBoot}
	switch {
	case pl.voidFrom > 0:
		n.logf("its run log's entries %d to %d are void: the process died before their state file write", pl.voidFrom, pl.voidTo)
		_, err = l.write(LogLine{Void: &VoidMark{From: pl.voidFrom, To: pl.voidTo}, LogEntry: mark})
	case pl.restore != nil:
		n.logf("its run log lacked entries %d to %d, which its state file confirms: written again from it", l.next, l.next+len(pl.restore)-1)
		if err = l.appendRaw(pl.restore); err == nil {
			_, err = l.write(LogLine{Wrote: st.Gen, LogEntry: mark})
		}
	}
	if err != nil {
		f.Close()
		return false, fmt.Errorf("its run log cannot be written: %v", err)
	}
	n.epochA.Store(n.epoch)
	l.crash = o.crash
	n.rlog, n.runID = l, h.Run
	return st != nil, nil
}
