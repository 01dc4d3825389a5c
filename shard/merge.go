package shard

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/livecheck/livecheck/check"

	"github.com/livecheck/livecheck/coverage"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
)

// A Merged is the result of merging the shard files of a split check.
type Merged struct {
	// Report is the merged report: the verdict, the counts of every
	// shard added up (the distinct states their union, where each saved
	// its fingerprints), and in its Merge what each shard found.
	Report *reports.Check
	// Violation is the one the report shows, with its traces (nil for
	// ok and inconclusive); Violations the shortest of each property,
	// Violation first.
	Violation  *Violation
	Violations []*Violation
	// Problem, when not empty, says why the shards cannot be merged (a
	// shard missing, or given twice, or of another check or build): the
	// verdict is then inconclusive.
	Problem string

	files  []string
	shards []*File
}

// Merge combines the shard files of one split check, read from
// files (ReadShardFile), into one report. Shards that do not make one
// check (a missing shard, a duplicate, another count, configuration,
// system or build) make the verdict inconclusive, with Problem saying
// which. A violation any shard found makes the verdict a violation: the
// report shows the shortest (fewest steps, a safety violation before a
// liveness one of as many, then by property name, then by shard); ok
// needs every shard ok, and "complete" every shard complete at the same
// depth. The error is for fingerprint files that cannot be read.
func Merge(files []string, shards []*File) (*Merged, error) {
	if len(shards) == 0 {
		return nil, fmt.Errorf("no shard files to merge")
	}
	m := &Merged{files: files, shards: shards}
	m.Problem = mergeProblem(files, shards)
	first := shards[0]
	mg := &reports.Merge{Shards: first.Shards, Files: files, SplitDepth: first.SplitDepth, Problem: m.Problem}
	var reps []*reports.Check
	for i, sh := range shards {
		r := sh.Report
		reps = append(reps, r)
		ms := reports.MergeShard{Shard: sh.Shard, File: files[i], Result: r.Result, States: r.Stats.States, Foreign: sh.ForeignStates,
			Periphery: r.Stats.Periphery, Complete: r.Complete, Covered: r.Covered, SplitDepth: sh.SplitDepth, Property: r.Property, PathLen: r.PathLen}
		if r.Liveness != nil {
			ms.Walks = r.Liveness.Walks
		}
		mg.PerShard = append(mg.PerShard, ms)
		for j := range sh.Violations {
			v := &sh.Violations[j]
			m.Violations = append(m.Violations, v)
			mg.Violations = append(mg.Violations, reports.MergeViolation{Result: v.Result, Property: v.Property, Shard: sh.Shard, PathLen: v.PathLen, Trace: v.TraceName})
		}
	}
	// The shortest violation of each property, the shortest of all first.
	order := func(a, b int) int {
		va, vb := m.Violations[a], m.Violations[b]
		if c := va.PathLen - vb.PathLen; c != 0 {
			return c
		}
		if c := rank(va.Result) - rank(vb.Result); c != 0 {
			return c
		}
		if c := strings.Compare(va.Property, vb.Property); c != 0 {
			return c
		}
		return mg.Violations[a].Shard - mg.Violations[b].Shard
	}
	idx := make([]int, len(m.Violations))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, order)
	var vs []*Violation
	var mvs []reports.MergeViolation
	seen := map[string]bool{}
	for _, i := range idx {
		if v := m.Violations[i]; !seen[v.Property] {
			seen[v.Property] = true
			vs, mvs = append(vs, v), append(mvs, mg.Violations[i])
		}
	}
	m.Violations, mg.Violations = vs, mvs
	if mg.Violations == nil {
		mg.Violations = []reports.MergeViolation{}
	}

	// The report: the shard's that shows the violation, or the first's,
	// with the counts of all.
	base := reps[0]
	if len(vs) > 0 {
		m.Violation = vs[0]
		base = reps[slices.IndexFunc(shards, func(sh *File) bool { return sh.Shard == mvs[0].Shard })]
	}
	rep := *base
	rep.Merge = mg
	rep.Stats = reports.Stats{}
	rep.Complete, rep.Exhausted, rep.Covered = true, true, reps[0].Covered
	var walks *reports.Liveness
	var cov *reports.Coverage
	for i, r := range reps {
		// The shards' search times add up, so that the rate is a shard's.
		rep.Stats.ElapsedMS += shards[i].Timing.SearchMS
		rep.Stats.Elapsed += time.Duration(shards[i].Timing.SearchMS) * time.Millisecond
		st := &rep.Stats
		st.States += r.Stats.States
		st.Transitions += r.Stats.Transitions
		st.Slept += r.Stats.Slept
		st.Postponed += r.Stats.Postponed
		st.MaxDepth = max(st.MaxDepth, r.Stats.MaxDepth)
		st.Periphery += r.Stats.Periphery
		st.LiveStates += r.Stats.LiveStates
		// The chance that a collision hid a state in any shard is at
		// most the sum of each shard's.
		st.CollisionChance += r.Stats.CollisionChance
		rep.Complete = rep.Complete && r.Complete && r.Covered == reps[0].Covered
		rep.Exhausted = rep.Exhausted && r.Exhausted
		rep.Covered = min(rep.Covered, r.Covered)
		rep.Interrupted = rep.Interrupted || r.Interrupted
		rep.MemoryLimit = rep.MemoryLimit || r.MemoryLimit
		if l := r.Liveness; l != nil {
			if walks == nil {
				c := *l
				c.Walks, c.WalkSteps, c.Suspects, c.Cleared, c.AfterLiveSteps, c.AfterLiveWalks = 0, 0, 0, 0, 0, 0
				// Which shard's violation the report shows is decided
				// below: a walk's steps after recovery are not merged.
				c.FoundAfterLive = 0
				walks = &c
			}
			walks.Walks += l.Walks
			walks.WalkSteps += l.WalkSteps
			walks.AfterLiveSteps += l.AfterLiveSteps
			walks.AfterLiveWalks += l.AfterLiveWalks
			walks.Suspects += l.Suspects
			walks.Cleared += l.Cleared
		}
		if c := r.Coverage; c != nil {
			if cov == nil {
				cov = &reports.Coverage{}
			}
			cov.Search = addCoverage(cov.Search, c.Search)
			if c.Walks != nil {
				w := addCoverage(coverage.Summary{}, *c.Walks)
				if cov.Walks != nil {
					w = addCoverage(*cov.Walks, *c.Walks)
				}
				cov.Walks = &w
			}
		}
	}
	mg.StatesSum = rep.Stats.States
	if !rep.Complete {
		rep.Exhausted = false
	}
	if rep.Result != "liveness-violation" || rep.Liveness != nil {
		rep.Liveness = walks
	}
	rep.Coverage = cov
	rep.Sometimes = mergeSometimes(reps)
	if fingerprintRefs(shards) && m.Problem == "" {
		n, err := UnionFingerprints(files, shards)
		if err != nil {
			return nil, err
		}
		mg.StatesUnion, mg.UnionExact = n, true
		rep.Stats.States = n
	}

	switch {
	case m.Problem != "":
		rep.Result, rep.Message, rep.Property, rep.PathLen, rep.Critical, rep.Shortened, rep.Tail = "inconclusive", m.Problem, "", 0, nil, nil, nil
		rep.Init, rep.Trace, rep.Steps = nil, "", nil
		m.Violation, m.Violations = nil, nil
		rep.Complete, rep.Exhausted = false, false
	case m.Violation != nil:
		// The report is the shard's that found it.
	default:
		rep.Result, rep.Message = "ok", ""
		for _, r := range reps {
			if r.Result != "ok" {
				rep.Result = "inconclusive"
				rep.Message = fmt.Sprintf("shard %d/%d is inconclusive: %s", shardOf(shards, r), first.Shards, r.Message)
				rep.Cut = r.Cut
				break
			}
		}
		if rep.Result == "ok" && !rep.Complete {
			// An ok verdict says every state within the bound was
			// searched: shards that covered different depths did not.
			rep.Result = "inconclusive"
			rep.Message = fmt.Sprintf("the shards did not all search to the same depth: every state within %s explored in each", reports.Count(rep.Covered, "step"))
		}
	}
	m.Report = &rep
	return m, nil
}

// Replay replays the trace of every violation the shards hold, and the
// nearest live path beside it, as every reader of a trace does
// (check.ReplayTrace), and returns the replay of the violation the
// merge shows, for its steps. A trace replay refuses is an error: its
// shard file is damaged, or of another build than this one.
func (m *Merged) Replay(sys *protocol.System, timeout time.Duration) (*check.Replayed, error) {
	var shown *check.Replayed
	for i, sh := range m.shards {
		for j := range sh.Violations {
			v := &sh.Violations[j]
			rep, err := check.ReplayTrace(sys, v.Trace, timeout, nil)
			if err != nil {
				return nil, fmt.Errorf("%s: the trace of shard %d's %s: %w", m.files[i], sh.Shard, v.Property, err)
			}
			if v == m.Violation {
				shown = rep
			}
			if v.LiveTrace != nil {
				if _, err := check.ReplayTrace(sys, v.LiveTrace, timeout, nil); err != nil {
					return nil, fmt.Errorf("%s: the nearest live path of shard %d's %s: %w", m.files[i], sh.Shard, v.Property, err)
				}
			}
		}
	}
	return shown, nil
}

// rank orders violations of as many steps: safety (and a property that
// panicked) before liveness, as the search finds them.
func rank(result string) int {
	if result == string(check.LivenessViolation) {
		return 1
	}
	return 0
}

func shardOf(shards []*File, r *reports.Check) int {
	for _, sh := range shards {
		if sh.Report == r {
			return sh.Shard
		}
	}
	return -1
}

// mergeProblem says why the shards do not make one split check, or "".
func mergeProblem(files []string, shards []*File) string {
	a, fa := shards[0], files[0]
	for i, b := range shards[1:] {
		fb := files[i+1]
		switch {
		case a.Shards != b.Shards:
			return fmt.Sprintf("the shards split different checks: %s is shard %d/%d, %s shard %d/%d", fa, a.Shard, a.Shards, fb, b.Shard, b.Shards)
		case a.Config.System != b.Config.System:
			return fmt.Sprintf("the shards check different systems: %s checks %s, %s checks %s", fa, a.Config.System, fb, b.Config.System)
		case a.Identity.ConfigHash != b.Identity.ConfigHash:
			return fmt.Sprintf("the shards have different configurations: %s and %s differ in %s", fa, fb, configDiff(a.Config, b.Config))
		case a.Identity.Module != b.Identity.Module || a.Identity.Version != b.Identity.Version || a.Identity.Revision != b.Identity.Revision ||
			a.Identity.Modified != b.Identity.Modified || a.Identity.Go != b.Identity.Go:
			return fmt.Sprintf("the shards come from different builds: %s from %s, %s from %s", fa, buildWords(a.Identity), fb, buildWords(b.Identity))
		case a.Identity.SystemHash != b.Identity.SystemHash:
			return fmt.Sprintf("the shards check different versions of system %s (its properties or bugs differ): %s and %s", a.Config.System, fa, fb)
		case a.Identity.Executable != b.Identity.Executable:
			return fmt.Sprintf("the shards come from different executables: %s from one with SHA-256 %s, %s from one with SHA-256 %s (run every shard with the same binary)",
				fa, a.Identity.Executable, fb, b.Identity.Executable)
		case a.SplitDepth != b.SplitDepth:
			// The same check splits at the same level in every shard:
			// shards split elsewhere do not divide the same states.
			return fmt.Sprintf("the shards split the search at different depths: %s at %d, %s at %d", fa, a.SplitDepth, fb, b.SplitDepth)
		}
	}
	at := map[int]string{}
	for i, sh := range shards {
		if f, ok := at[sh.Shard]; ok {
			return fmt.Sprintf("shard %d/%d is given twice: %s and %s", sh.Shard, sh.Shards, f, files[i])
		}
		at[sh.Shard] = files[i]
	}
	var missing []int
	for i := range a.Shards {
		if _, ok := at[i]; !ok {
			missing = append(missing, i)
		}
	}
	switch {
	case len(missing) == 1:
		return fmt.Sprintf("shard %d of %d is missing (given: %s)", missing[0], a.Shards, ListIndices(slices.Collect(maps.Keys(at))))
	case len(missing) > 1:
		return fmt.Sprintf("shards %s of %d are missing (given: %s)", ListIndices(missing), a.Shards, ListIndices(slices.Collect(maps.Keys(at))))
	}
	return ""
}

// configDiff names the settings two shard configurations differ in.
func configDiff(a, b Config) string {
	var ma, mb map[string]any
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	json.Unmarshal(ja, &ma)
	json.Unmarshal(jb, &mb)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(ma)) {
		if va, vb := fmt.Sprint(ma[k]), fmt.Sprint(mb[k]); va != vb {
			out = append(out, fmt.Sprintf("%s (%s against %s)", k, va, vb))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(mb)) {
		if _, ok := ma[k]; !ok {
			out = append(out, fmt.Sprintf("%s (none against %v)", k, mb[k]))
		}
	}
	if len(out) == 0 {
		return "their configuration hashes"
	}
	return strings.Join(out, ", ")
}

// buildWords says a build in words: "module M version V revision R".
func buildWords(id Identity) string {
	s := fmt.Sprintf("%s %s", id.Module, id.Version)
	if id.Revision != "" {
		s += " revision " + id.Revision
	} else {
		s += " (no revision recorded)"
	}
	if id.Modified {
		s += " with uncommitted changes"
	}
	return s + " " + id.Go
}

// fingerprintRefs says whether every shard saved its fingerprints.
func fingerprintRefs(shards []*File) bool {
	for _, sh := range shards {
		if sh.Fingerprints == nil {
			return false
		}
	}
	return true
}

// mergeSometimes: a reachability property is reached where any shard
// Reached it, at the fewest steps the search found, else by a walk.
func mergeSometimes(reps []*reports.Check) []reports.Sometimes {
	out := slices.Clone(reps[0].Sometimes)
	for _, r := range reps[1:] {
		for i, s := range r.Sometimes {
			if i >= len(out) {
				break
			}
			o := &out[i]
			switch {
			case !s.Reached:
			case !o.Reached, o.By == "walk" && s.By == "search", o.By == s.By && s.Step < o.Step:
				*o = s
			}
		}
	}
	return out
}

// addCoverage adds two coverage summaries.
func addCoverage(a, b coverage.Summary) coverage.Summary {
	a.Transitions += b.Transitions
	a.Init += b.Init
	a.Resets += b.Resets
	a.App += b.App
	a.Error += b.Error
	a.Drops += b.Drops
	add := func(cs, more []coverage.Count) []coverage.Count {
		cs = slices.Clone(cs)
		for _, c := range more {
			if i := slices.IndexFunc(cs, func(x coverage.Count) bool { return x.Name == c.Name }); i >= 0 {
				cs[i].N += c.N
			} else {
				cs = append(cs, c)
			}
		}
		slices.SortFunc(cs, func(x, y coverage.Count) int { return strings.Compare(x.Name, y.Name) })
		if cs == nil {
			cs = []coverage.Count{}
		}
		return cs
	}
	a.Receive, a.Timer = add(a.Receive, b.Receive), add(a.Timer, b.Timer)
	return a
}
