package livecheck

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
)

// A split check (issue 15): `check --shard i/n` runs one slice of a
// check and writes its result as a shard file; `merge` combines the n
// files into one report. This file makes a shard file from a result;
// merge.go combines them.

// ShardConfigOf is the configuration a split check's shards must share:
// opts as Check fills them in, with what res says Check used.
func ShardConfigOf(sys *System, opts Options, res *Result) reports.ShardConfig {
	opts.fill(sys)
	red, _ := parseReduce(opts.Reduce)
	var reduce []string
	for _, r := range []struct {
		on   bool
		name string
	}{{red.sleep, "sleep"}, {red.symmetry, "symmetry"}, {red.observers, "observers"}} {
		if r.on {
			reduce = append(reduce, r.name)
		}
	}
	if len(reduce) == 0 {
		reduce = []string{"none"}
	}
	cfg := reports.ShardConfig{
		System: sys.Name, Nodes: res.Config.Nodes, Bugs: res.Config.Bugs, Params: res.Config.Params, Budget: Counts(res.Config.Budget),
		Seed: res.Seed, Depth: res.Depth, MaxStates: opts.MaxStates, Reduce: strings.Join(reduce, ","),
		WalkDepth: res.WalkDepth, Walks: res.Walks, Escalations: opts.Escalations, Weights: res.Weights.String(),
		NoWalks: opts.NoWalks, StopAtLive: opts.StopAtLive, HandlerTimeout: opts.HandlerTimeout.String(),
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

// ShardIdentityOf says which build checked what: the build's module,
// version and VCS revision (bi, from debug.ReadBuildInfo; nil: none
// recorded), and hashes of the configuration and of the system's
// properties and bugs.
func ShardIdentityOf(sys *System, cfg reports.ShardConfig, bi *debug.BuildInfo) reports.ShardIdentity {
	var id reports.ShardIdentity
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
	for _, p := range sys.propertyDocs() {
		sd.Properties = append(sd.Properties, doc{p.Name, p.Doc})
	}
	for _, b := range sys.Bugs {
		sd.Bugs = append(sd.Bugs, doc{b.Name, b.Doc})
	}
	id.SystemHash = sha256JSON(sd)
	return id
}

// sha256JSON is the SHA-256 of v as JSON, in hex.
func sha256JSON(v any) string {
	h := sha256.New()
	json.NewEncoder(h).Encode(v)
	return hex.EncodeToString(h.Sum(nil))
}

// ShardFile is a shard's result as a shard file: res, the result of
// Check(sys, opts) with opts.Shard set, its report, its violation's
// traces, and the identity of bi's build. The times and memory figures
// sit in its Timing alone, so that the same inputs give the same file
// apart from them; total is the whole check's time.
func (r *Result) ShardFile(sys *System, opts Options, bi *debug.BuildInfo, total time.Duration) *reports.ShardFile {
	cfg := ShardConfigOf(sys, opts, r)
	rep := r.Report("", "")
	f := &reports.ShardFile{
		Shard: r.Shard.Index, Shards: max(1, r.Shard.Count), SplitDepth: r.Shard.SplitDepth, ForeignStates: r.Foreign,
		Identity: ShardIdentityOf(sys, cfg, bi), Config: cfg, Report: rep, Violations: []reports.ShardViolation{},
	}
	if r.Shard.Count == 0 {
		f.SplitDepth = -1
	}
	f.Timing = reports.ShardTimes(rep)
	f.Timing.TotalMS, f.Timing.Workers = total.Milliseconds(), opts.Workers
	if r.Verdict == SafetyViolation || r.Verdict == LivenessViolation || r.Verdict == PropertyError {
		t, lt := r.traces(func(property string, p sim.Path) string { return reports.TraceName(r.System, property, r.Init, p) })
		v := reports.ShardViolation{Result: string(r.Verdict), Property: r.Property, Message: r.Message, PathLen: len(r.Path),
			Trace: t, TraceName: reports.TraceName(r.System, r.Property, r.Init, r.Path)}
		if lt != nil {
			v.LiveTrace, v.LiveTraceName = lt, t.Critical.LiveTrace
		}
		f.Violations = append(f.Violations, v)
	}
	return f
}

// WriteShardFile writes f to path, atomically; with fps (the keys of the
// states the shard stored, sorted: Result.Fingerprints) it first writes
// them to a side file beside it, path without ".json" and with
// ".fingerprints", and names it in f.
func WriteShardFile(path string, f *reports.ShardFile, fps []uint64) error {
	if fps != nil {
		side := strings.TrimSuffix(path, ".json") + ".fingerprints"
		ref, err := reports.WriteFingerprints(side, filepath.Dir(path), fps)
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
