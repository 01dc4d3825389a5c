package shard

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/livecheck/livecheck/reports"

	"github.com/livecheck/livecheck/sim"
)

// ShardSchema is the version of a shard file's JSON (ShardFile).
const ShardSchema = "livecheck/shard/v1"

// A ShardFile is what `livecheck check --shard i/n --out FILE` writes: one
// slice of a split check, for `livecheck merge`. Everything in it but
// Timing is the same for the same inputs, whatever the machine or the
// number of workers.
type File struct {
	Schema string `json:"schema"`
	// Shard is this slice's index, Shards how many there are.
	Shard  int `json:"shard"`
	Shards int `json:"shards"`
	// SplitDepth is the level where the search divided its states among
	// the shards (-1: it ended before, and every shard searched the
	// same); ForeignStates the states of that level left to the others.
	SplitDepth    int      `json:"split_depth"`
	ForeignStates int64    `json:"foreign_states"`
	Identity      Identity `json:"identity"`
	Config        Config   `json:"config"`
	// Report is the shard's report, as `check --json` prints it, with its
	// times and memory figures moved to Timing and no trace file names.
	Report *reports.Check `json:"report"`
	// Violations holds the violation the shard found, if any, with its
	// traces.
	Violations []Violation `json:"violations"`
	// Fingerprints names the side file that holds the keys of every
	// state the shard stored (check --save-fingerprints), if written.
	Fingerprints *FingerprintRef `json:"fingerprints,omitempty"`
	Timing       Timing          `json:"timing"`
}

// Identity says which build checked what: shards merge only when
// all of it is the same.
type Identity struct {
	// Module, Version and Revision are the build's main module, its
	// version and VCS revision (Modified: with uncommitted changes), Go
	// the toolchain, as debug.ReadBuildInfo gives them.
	Module   string `json:"module"`
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	// ConfigHash is the SHA-256 of Config as JSON; SystemHash that of the
	// system's name, doc, properties and bugs (names and docs).
	ConfigHash string `json:"config_sha256"`
	SystemHash string `json:"system_sha256"`
	// Executable is the SHA-256 of the program that ran the shard: two
	// builds the fields above cannot tell apart (no VCS revision: go
	// run, -buildvcs=false, a build outside git) are two executables.
	Executable string `json:"executable_sha256"`
}

// Config is a split check's configuration, with every default
// filled in: what each shard must share (not the shard's index, nor the
// workers, nor the memory limit).
type Config struct {
	System         string            `json:"system"`
	Nodes          int               `json:"nodes"`
	Bugs           []string          `json:"bugs"`
	Params         map[string]string `json:"params,omitempty"`
	Budget         sim.Budget        `json:"budget"`
	Seed           int64             `json:"seed"`
	Depth          int               `json:"depth"`
	MaxStates      int               `json:"max_states"`
	Reduce         string            `json:"reduce"`
	WalkDepth      int               `json:"walk_depth"`
	Walks          int               `json:"walks"`
	Escalations    int               `json:"escalations"`
	Weights        string            `json:"weights"`
	NoWalks        bool              `json:"no_walks"`
	StopAtLive     bool              `json:"stop_at_live"`
	AfterLive      int               `json:"after_live"`
	HandlerTimeout string            `json:"handler_timeout"`
	// Prefix is the SHA-256 of the live prefix the check started after
	// (its initial state and path), or empty.
	Prefix string `json:"prefix,omitempty"`
	// Shards and SplitDepth are --shard's n and --split-depth (0: the
	// level chosen from the level sizes).
	Shards     int `json:"shards"`
	SplitDepth int `json:"split_depth_flag"`
}

// A ShardViolation is a violation a shard found, with its trace (in the
// trace file format) and, for a liveness violation with a critical step,
// the nearest live path's; TraceName and LiveTraceName are the file
// names check would have given them.
type Violation struct {
	Result        string         `json:"result"`
	Property      string         `json:"property"`
	Message       string         `json:"message"`
	PathLen       int            `json:"path_length"`
	Trace         *reports.Trace `json:"trace"`
	TraceName     string         `json:"trace_name"`
	LiveTrace     *reports.Trace `json:"live_trace,omitempty"`
	LiveTraceName string         `json:"live_trace_name,omitempty"`
}

// A FingerprintRef names a fingerprint file (WriteFingerprints) beside
// the shard file, with its count of keys and its SHA-256.
type FingerprintRef struct {
	File   string `json:"file"`
	Count  int64  `json:"count"`
	SHA256 string `json:"sha256"`
}

// Timing holds what depends on the machine: times and memory.
type Timing struct {
	SearchMS   int64 `json:"search_ms"`
	WalksMS    int64 `json:"walks_ms"`
	CriticalMS int64 `json:"critical_ms"`
	TotalMS    int64 `json:"total_ms"`
	Workers    int   `json:"workers"`
	MaxMemory  int64 `json:"max_memory_bytes,omitempty"`
	PeakMemory int64 `json:"peak_memory_bytes,omitempty"`
}

// Times moves the times and memory figures of a check's report into
// a ShardTiming, leaving the report the same for the same inputs.
func Times(c *reports.Check) Timing {
	t := Timing{SearchMS: c.Stats.ElapsedMS, MaxMemory: c.MaxMemory, PeakMemory: c.PeakMemory}
	c.Stats.ElapsedMS, c.Stats.Elapsed, c.MaxMemory, c.PeakMemory = 0, 0, 0, 0
	c.Phases, c.TimeMS = nil, 0 // the phases' times are the machine's: the totals above say them
	if l := c.Liveness; l != nil {
		t.WalksMS, t.CriticalMS = l.ElapsedMS, int64(l.CriticalMS)
		l.ElapsedMS, l.CriticalMS, l.Elapsed, l.CriticalTime = 0, 0, 0, 0
	}
	return t
}

// Write writes the shard file as indented JSON.
func (f *File) Write(w io.Writer) error {
	f.Schema = ShardSchema
	for _, v := range f.Violations {
		v.Trace.Stamp()
		if v.LiveTrace != nil {
			v.LiveTrace.Stamp()
		}
	}
	return reports.WriteJSON(w, f)
}

// ReadFile reads and checks a shard file; the error says what is
// wrong with it.
func ReadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f File
	if err := reports.DecodeJSON(data, &f, "shard file"); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	bad := func(format string, args ...any) (*File, error) {
		return nil, fmt.Errorf("%s: not a valid shard file: %s", path, fmt.Sprintf(format, args...))
	}
	switch {
	case f.Schema != ShardSchema:
		return bad("schema %q, want %q (written by `check --shard I/N --out FILE`)", f.Schema, ShardSchema)
	case f.Shards < 1 || f.Shard < 0 || f.Shard >= f.Shards:
		return bad("shard %d/%d: the index must be at least 0 and less than the count", f.Shard, f.Shards)
	case f.Report == nil:
		return bad("it holds no report")
	case f.Config.System == "" || f.Report.System != f.Config.System:
		return bad("its report is of system %q, its configuration of %q", f.Report.System, f.Config.System)
	case f.Identity.ConfigHash == "" || f.Identity.SystemHash == "":
		return bad("it has no identity")
	case f.Identity.Executable == "":
		return bad("its identity has no executable_sha256 (written by an older livecheck, or by one that could not read its own executable): run the shard again")
	case sha256JSON(f.Config) != f.Identity.ConfigHash:
		return bad("its config does not hash to its identity's config_sha256: the file was edited or damaged")
	case len(f.Violations) > 0 && (f.Report.Result == "ok" || f.Report.Result == "inconclusive"):
		return bad("its result is %s, yet it holds a violation", f.Report.Result)
	case len(f.Violations) == 0 && f.Report.Result != "ok" && f.Report.Result != "inconclusive":
		return bad("its result is %s, yet it holds no violation", f.Report.Result)
	case len(f.Violations) > 1:
		return bad("it holds %d violations: a shard finds one", len(f.Violations))
	case f.Report.Result == "ok" && !f.Report.Complete:
		// An ok verdict covers every state within the depth bound.
		return bad("its result is ok, yet its search is not complete")
	case f.SplitDepth < -1 || f.ForeignStates < 0:
		return bad("split depth %d and %d foreign states", f.SplitDepth, f.ForeignStates)
	}
	// The report is of the check the configuration names.
	if r, c := f.Report, f.Config; r.Nodes != c.Nodes || r.Seed != c.Seed || r.Depth != c.Depth || r.Budget != c.Budget ||
		!slices.Equal(r.Bugs, c.Bugs) || !maps.Equal(r.Params, c.Params) {
		return bad("its report is of another configuration than its config (nodes, bugs, parameters, failures, seed or depth)")
	}
	for i, v := range f.Violations {
		for _, t := range []*reports.Trace{v.Trace, v.LiveTrace} {
			if t == nil {
				if v.Trace == nil {
					return bad("violation %d has no trace", i)
				}
				continue
			}
			var b bytes.Buffer
			if err := reports.WriteJSON(&b, t); err != nil {
				return nil, err
			}
			if _, err := reports.ReadTrace(&b); err != nil {
				return bad("the trace of violation %d: %v", i, err)
			}
			c := f.Config
			if t.System != c.System || t.Nodes != c.Nodes || sim.Budget(t.Budget) != c.Budget || t.Seed != c.Seed ||
				!slices.Equal(t.Bugs, c.Bugs) || !maps.Equal(t.Params, c.Params) {
				return bad("the trace of violation %d is of another configuration than the shard's", i)
			}
		}
		if t := v.Trace; v.Result != t.Result || v.Property != t.Property || v.PathLen != len(t.Steps) ||
			v.Result != f.Report.Result || v.Property != f.Report.Property {
			return bad("violation %d says %s of %s in %d steps, its trace %s of %s in %d, the report %s of %s",
				i, v.Result, v.Property, v.PathLen, t.Result, t.Property, len(t.Steps), f.Report.Result, f.Report.Property)
		}
		if v.TraceName == "" || filepath.Base(v.TraceName) != v.TraceName || v.LiveTrace != nil && (v.LiveTraceName == "" || filepath.Base(v.LiveTraceName) != v.LiveTraceName) {
			return bad("violation %d's trace names must be plain file names", i)
		}
	}
	if r := f.Fingerprints; r != nil && (r.File == "" || r.Count < 0) {
		return bad("its fingerprint file reference is malformed")
	}
	return &f, nil
}

// fingerprintMagic opens a fingerprint file; then whose keys they are
// (the shard's index and count, 8 bytes each, and the SHA-256 of its
// configuration, 32 bytes), the count of keys, and the keys, sorted and
// distinct; the numbers little-endian uint64s. A file that says whose it
// is cannot be passed off as another shard's.
const fingerprintMagic = "LCFP0002"

// fpOwner is what a fingerprint file says about the shard it belongs to.
type fpOwner struct {
	shard, shards uint64
	config        [32]byte
}

// ownerOf is f's fpOwner (its config hash, in hex in f, as bytes).
func ownerOf(f *File) fpOwner {
	o := fpOwner{shard: uint64(f.Shard), shards: uint64(f.Shards)}
	hex.Decode(o.config[:], []byte(f.Identity.ConfigHash))
	return o
}

func (o fpOwner) String() string {
	return fmt.Sprintf("shard %d/%d of the check with config_sha256 %x", o.shard, o.shards, o.config)
}

// WriteFingerprints writes the sorted, distinct keys fps of shard f to
// path (atomically) and returns its reference, the file named relative
// to the shard file's directory dir.
func WriteFingerprints(path, dir string, f *File, fps []uint64) (*FingerprintRef, error) {
	h := sha256.New()
	o := ownerOf(f)
	err := reports.WriteFileAtomic(path, func(w io.Writer) error {
		bw := bufio.NewWriter(io.MultiWriter(w, h))
		bw.WriteString(fingerprintMagic)
		var b [8]byte
		for _, x := range []uint64{o.shard, o.shards} {
			binary.LittleEndian.PutUint64(b[:], x)
			bw.Write(b[:])
		}
		bw.Write(o.config[:])
		binary.LittleEndian.PutUint64(b[:], uint64(len(fps)))
		bw.Write(b[:])
		for _, fp := range fps {
			binary.LittleEndian.PutUint64(b[:], fp)
			bw.Write(b[:])
		}
		return bw.Flush()
	})
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		rel = path
	}
	return &FingerprintRef{File: rel, Count: int64(len(fps)), SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// fpReader reads one fingerprint file, key by key, checking its order and
// at the end its count and hash.
type fpReader struct {
	name string
	r    *bufio.Reader
	f    *os.File
	ref  *FingerprintRef
	sum  func() []byte
	left int64
	cur  uint64
	ok   bool
}

func openFingerprints(path string, ref *FingerprintRef, owner fpOwner) (*fpReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	fr := &fpReader{name: path, f: f, r: bufio.NewReaderSize(io.TeeReader(f, h), 1<<16), ref: ref, sum: func() []byte { return h.Sum(nil) }}
	var head [8 + 16 + 32 + 8]byte
	if _, err := io.ReadFull(fr.r, head[:]); err != nil || string(head[:8]) != fingerprintMagic {
		f.Close()
		if err == nil && string(head[:6]) == fingerprintMagic[:6] {
			return nil, fmt.Errorf("%s: a fingerprint file of another version (%s, this livecheck reads %s): run the shards again", path, head[:8], fingerprintMagic)
		}
		return nil, fmt.Errorf("%s: not a fingerprint file", path)
	}
	var got fpOwner
	got.shard, got.shards = binary.LittleEndian.Uint64(head[8:]), binary.LittleEndian.Uint64(head[16:])
	copy(got.config[:], head[24:56])
	if got != owner {
		f.Close()
		return nil, fmt.Errorf("%s: holds the fingerprints of %s, not of %s that names it", path, got, owner)
	}
	fr.left = int64(binary.LittleEndian.Uint64(head[56:]))
	if fr.left != ref.Count {
		f.Close()
		return nil, fmt.Errorf("%s: holds %d keys, its shard file says %d", path, fr.left, ref.Count)
	}
	return fr, fr.next()
}

// next reads the next key into cur (ok false at the end, where the hash
// is checked).
func (fr *fpReader) next() error {
	if fr.left == 0 {
		fr.ok = false
		var b [1]byte
		if n, _ := fr.r.Read(b[:]); n > 0 {
			return fmt.Errorf("%s: data after its last key", fr.name)
		}
		if hex.EncodeToString(fr.sum()) != fr.ref.SHA256 {
			return fmt.Errorf("%s: its SHA-256 is not the one its shard file records (changed or damaged)", fr.name)
		}
		return nil
	}
	var b [8]byte
	if _, err := io.ReadFull(fr.r, b[:]); err != nil {
		return fmt.Errorf("%s: truncated (%d keys missing)", fr.name, fr.left)
	}
	v := binary.LittleEndian.Uint64(b[:])
	if fr.ok && v <= fr.cur {
		return fmt.Errorf("%s: the keys are not sorted", fr.name)
	}
	fr.cur, fr.ok = v, true
	fr.left--
	return nil
}

// UnionFingerprints counts the distinct keys of the fingerprint files
// shards name (shard i read from shardPaths[i]; each names its file,
// relative to its directory), checking that each file is its shard's,
// and merging the sorted files as streams: it holds a few buffers, not
// the sets.
func UnionFingerprints(shardPaths []string, shards []*File) (int64, error) {
	var rs []*fpReader
	defer func() {
		for _, r := range rs {
			r.f.Close()
		}
	}()
	for i, sh := range shards {
		ref := sh.Fingerprints
		p := ref.File
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(shardPaths[i]), p)
		}
		r, err := openFingerprints(p, ref, ownerOf(sh))
		if err != nil {
			return 0, err
		}
		rs = append(rs, r)
	}
	var n int64
	for {
		// The least current key among the files; few files, so a scan.
		least, any := uint64(0), false
		for _, r := range rs {
			if r.ok && (!any || r.cur < least) {
				least, any = r.cur, true
			}
		}
		if !any {
			return n, nil
		}
		n++
		for _, r := range rs {
			for r.ok && r.cur == least {
				if err := r.next(); err != nil {
					return 0, err
				}
			}
		}
	}
}

// ListIndices lists the shard indices given, for messages: "0, 1 and 3".
func ListIndices(idx []int) string {
	idx = slices.Clone(idx)
	slices.Sort(idx)
	s := ""
	for i, x := range idx {
		switch {
		case i == 0:
		case i == len(idx)-1:
			s += " and "
		default:
			s += ", "
		}
		s += fmt.Sprint(x)
	}
	return s
}
