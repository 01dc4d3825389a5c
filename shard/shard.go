package shard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/livecheck/livecheck/check"

	"github.com/livecheck/livecheck/protocol"

	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
)

// A split check (issue 15): `check --shard i/n` runs one slice of a
// check and writes its result as a shard file; `merge` combines the n
// files into one report. This file makes a shard file from a result;
// merge.go combines them.

// ConfigOf is the configuration a split check's shards must share:
// opts as Check fills them in, with what res says Check used.
func ConfigOf(sys *protocol.System, opts check.Options, res *check.Result) Config {
	opts.Fill(sys)
	red, _ := check.ParseReduce(opts.Reduce)
	var reduce []string
	for _, r := range []struct {
		on   bool
		name string
	}{{red.Sleep, "sleep"}, {red.Symmetry, "symmetry"}, {red.Observers, "observers"}} {
		if r.on {
			reduce = append(reduce, r.name)
		}
	}
	if len(reduce) == 0 {
		reduce = []string{"none"}
	}
	cfg := Config{
		System: sys.Name, Nodes: res.Config.Nodes, Bugs: res.Config.Bugs, Params: res.Config.Params, Budget: protocol.Counts(res.Config.Budget),
		Seed: res.Seed, Depth: res.Depth, MaxStates: opts.MaxStates, Reduce: strings.Join(reduce, ","),
		WalkDepth: res.WalkDepth, Walks: res.Walks, Escalations: opts.Escalations, Weights: res.Weights.String(),
		NoWalks: opts.NoWalks, StopAtLive: opts.StopAtLive, AfterLive: res.AfterLive, HandlerTimeout: opts.HandlerTimeout.String(),
		Shards: opts.Shard.Count, SplitDepth: opts.Shard.SplitDepth,
	}
	if cfg.Bugs == nil {
		cfg.Bugs = []string{}
	}
	if len(opts.Prefix) > 0 {
		h := sha256.New()
		json.NewEncoder(h).Encode(struct {
			Init []int
			Path sim.Path
		}{opts.PrefixInit, opts.Prefix})
		cfg.Prefix = hex.EncodeToString(h.Sum(nil))
	}
	return cfg
}

// IdentityOf says which build checked what: the build's module,
// version and VCS revision (bi, from debug.ReadBuildInfo; nil: none
// recorded), and hashes of the configuration and of the system's
// properties and bugs.
func IdentityOf(sys *protocol.System, cfg Config, bi *debug.BuildInfo) Identity {
	var id Identity
	if bi != nil {
		id.Module, id.Version, id.Go = bi.Main.Path, bi.Main.Version, bi.GoVersion
		for _, st := range bi.Settings {
			switch st.Key {
			case "vcs.revision":
				id.Revision = st.Value
			case "vcs.modified":
				id.Modified = st.Value == "true"
			}
		}
	}
	id.ConfigHash = sha256JSON(cfg)
	type doc struct{ Name, Doc string }
	sd := struct {
		Name, Doc        string
		Properties, Bugs []doc
	}{Name: sys.Name, Doc: sys.Doc}
	for _, p := range sys.PropertyDocs() {
		sd.Properties = append(sd.Properties, doc{p.Name, p.Doc})
	}
	for _, b := range sys.Bugs {
		sd.Bugs = append(sd.Bugs, doc{b.Name, b.Doc})
	}
	id.SystemHash = sha256JSON(sd)
	id.Executable = executableHash()
	return id
}

// executableHash is the SHA-256 of the running program, in hex,
// computed once; "" where it cannot be read.
var executableHash = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
})

// sha256JSON is the SHA-256 of v as JSON, in hex.
func sha256JSON(v any) string {
	h := sha256.New()
	json.NewEncoder(h).Encode(v)
	return hex.EncodeToString(h.Sum(nil))
}

// FileOf is a shard's result as a shard file: r, the result of
// Check(sys, opts) with opts.Shard set, its report, its violation's
// traces, and the identity of bi's build. The times and memory figures
// sit in its Timing alone, so that the same inputs give the same file
// apart from them; total is the whole check's time.
func FileOf(r *check.Result, sys *protocol.System, opts check.Options, bi *debug.BuildInfo, total time.Duration) *File {
	cfg := ConfigOf(sys, opts, r)
	rep := r.Report("", "")
	f := &File{
		Shard: r.Shard.Index, Shards: max(1, r.Shard.Count), SplitDepth: r.Shard.SplitDepth, ForeignStates: r.Foreign,
		Identity: IdentityOf(sys, cfg, bi), Config: cfg, Report: rep, Violations: []Violation{},
	}
	if r.Shard.Count == 0 {
		f.SplitDepth = -1
	}
	f.Timing = Times(rep)
	f.Timing.TotalMS, f.Timing.Workers = total.Milliseconds(), opts.Workers
	if r.Verdict == check.SafetyViolation || r.Verdict == check.LivenessViolation || r.Verdict == check.PropertyError {
		t, lt := r.Traces(func(property string, p sim.Path) string { return reports.TraceName(r.System, property, r.Init, p) })
		v := Violation{Result: string(r.Verdict), Property: r.Property, Message: r.Message, PathLen: len(r.Path),
			Trace: t, TraceName: reports.TraceName(r.System, r.Property, r.Init, r.Path)}
		if lt != nil {
			v.LiveTrace, v.LiveTraceName = lt, t.Critical.LiveTrace
		}
		f.Violations = append(f.Violations, v)
	}
	return f
}

// WriteFile writes f to path, atomically; with fps (the keys of the
// states the shard stored, sorted: Result.Fingerprints) it first writes
// them to a side file beside it, path without ".json" and with
// ".fingerprints", and names it in f.
func WriteFile(path string, f *File, fps []uint64) error {
	if fps != nil {
		side := strings.TrimSuffix(path, ".json") + ".fingerprints"
		ref, err := WriteFingerprints(side, filepath.Dir(path), f, fps)
		if err != nil {
			return err
		}
		f.Fingerprints = ref
	}
	if err := reports.WriteFileAtomic(path, f.Write); err != nil {
		return fmt.Errorf("writing the shard file: %w", err)
	}
	return nil
}
