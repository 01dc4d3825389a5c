package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems"
)

// The damaged-input sweep of issue 25 (items 2 to 6): real traces,
// prefixes and shard files, mutated deterministically from a seed into
// hundreds of variants, fed to every reader (replay, report --html,
// debug, check --from, merge) in-process. No reader may panic or exit
// with a status outside 0 to 3, and what a reader accepts must be a
// proof of what the file claims.
//
// Each mutation has a class, decided up front:
//
//   - harmless: a field no reader checks a proof by (the message, the
//     texts, a shard's times, the layout of the JSON): accepted exactly
//     as the original is.
//   - cosmetic: a field for people (the critical step, the live step,
//     the prefix length) made nonsense: refused or accepted, never a
//     panic; the proof stands either way.
//   - broken: a malformed file, or a claim the path cannot back (a path
//     cut before its safety violation, a step after it, a node or bug
//     that does not exist, an edited shard identity...): refused.
//   - edited: a path or configuration edited (a step dropped, doubled,
//     swapped, another node or parameter) whose effect the sweep does
//     not decide up front: a reader may accept it only if an oracle
//     independent of replay (sim applying the steps, and for a liveness
//     claim a breadth-first search of every state reachable from the
//     end) finds it a proof of its claim. Where more states are
//     reachable than the oracle searches, it cannot decide, and an
//     acceptance is logged and counted as undecided.
//   - deadtest: the size of the dead test the trace records. Item 2
//     (replay sets the strength of its own proof) is another change:
//     here only no panic and a bounded run (the sizes stay within twice
//     the defaults), with no assertion on what is accepted.
//   - counts: a shard's counts, which merge cannot check: either way.
//
// Under -short a sample of one variant in six runs.
func TestDamagedInputSweep(t *testing.T) {
	const seed = 25
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	src := makeSources(t)
	sw := &sweep{t: t, byClass: map[string]*tally{}, byReader: map[string]*tally{}, orig: map[string]run{}}
	// The oracle finds the files as written proofs of what they claim.
	for _, s := range append(slices.Clone(src.traces), src.prefix) {
		if v := oracle(s.data, nil); v != isProof {
			t.Fatalf("the oracle finds %s as written %s", s.name, v)
		}
	}

	for _, s := range src.traces {
		for i, mu := range traceMutations(s, rng) {
			if testing.Short() && i%6 != 0 {
				continue
			}
			sw.trace(s, mu)
		}
	}
	for i, mu := range prefixMutations(src.prefix, rng) {
		if testing.Short() && i%6 != 0 {
			continue
		}
		sw.prefix(src.prefix, mu)
	}
	for _, set := range src.shards {
		for i, mu := range shardMutations(set, rng) {
			if testing.Short() && i%6 != 0 {
				continue
			}
			sw.merge(set, mu)
		}
	}
	sw.log()
}

type class string

const (
	harmless class = "harmless"
	cosmetic class = "cosmetic"
	broken   class = "broken"
	edited   class = "edited"
	deadtest class = "deadtest"
	counts   class = "counts"
)

// A mutation makes a variant of a file: edit changes its JSON object;
// raw, when set, changes its bytes instead.
type mutation struct {
	name  string
	class class
	edit  func(m map[string]any)
	raw   func(data []byte) []byte
	// shard is the shard file a shard mutation changes.
	shard int
}

// apply returns the variant's bytes.
func (mu mutation) apply(t *testing.T, data []byte) []byte {
	if mu.raw != nil {
		return mu.raw(slices.Clone(data))
	}
	m := decode(t, data)
	mu.edit(m)
	return encode(t, m)
}

// A traceSource is a real trace file, and the files beside it (its
// nearest live path).
type traceSource struct {
	name, file string
	data       []byte
	safety     bool
}

// A shardSet is the shard files of one real split check.
type shardSet struct {
	name  string
	files []string
	data  [][]byte
}

type sources struct {
	traces []traceSource
	prefix traceSource
	shards []shardSet
}

// makeSources makes the real files the sweep damages: safety traces of
// LCR (no-discard) and Paxos (quorum=1), liveness traces of RandTree
// (RT3) and LCR (ignore-early) with their nearest live paths, a prefix
// of RandTree, and the shard files of two checks split in two, one with
// a violation, one ok, with their fingerprints.
func makeSources(t *testing.T) sources {
	var s sources
	for _, c := range []struct {
		name, glob string
		args       []string
		safety     bool
	}{
		{"lcr no-discard", "lcr-one-leader-*.json", []string{"lcr", "--bug", "no-discard"}, true},
		{"paxos quorum=1", "paxos-agreement-*.json", []string{"paxos", "--bug", "quorum=1"}, true},
		{"randtree RT3", "randtree-single-tree-*.json", []string{"randtree", "--bug", "RT3"}, false},
		{"lcr ignore-early", "lcr-elected-*.json", []string{"lcr", "--bug", "ignore-early"}, false},
	} {
		dir := t.TempDir()
		mustRun(t, livecheck.ExitViolation, append(append([]string{"check"}, c.args...), "-q", "--time", "0", "--out", dir)...)
		f := one(t, dir, c.glob)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s.traces = append(s.traces, traceSource{name: c.name, file: f, data: data, safety: c.safety})
	}
	dir := t.TempDir()
	mustRun(t, livecheck.ExitOK, "prefix", "randtree", "--out", dir)
	f := one(t, dir, "randtree-prefix-*.json")
	data, _ := os.ReadFile(f)
	s.prefix = traceSource{name: "randtree prefix", file: f, data: data}
	// Every proper prefix of it ends where RandTree is not live: it
	// became live at its last step.
	if n := len(decode(t, data)["steps"].([]any)); !strings.Contains(string(data), fmt.Sprintf("live after step %d,", n)) {
		t.Fatalf("the prefix is not live first at its end (%d steps): %s", n, data)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"lcr no-discard shards", []string{"lcr", "--nodes", "3", "--bug", "no-discard"}},
		{"randtree shards", []string{"randtree", "--nodes", "3", "--depth", "6"}},
	} {
		set := shardSet{name: c.name}
		dir := t.TempDir()
		for i := range 2 {
			f := filepath.Join(dir, fmt.Sprintf("sh-%d.json", i))
			r := lc(t, "", append(append([]string{"check"}, c.args...), "--shard", fmt.Sprintf("%d/2", i), "--out", f, "--save-fingerprints", "-q")...)
			if r.code != livecheck.ExitOK && r.code != livecheck.ExitViolation {
				t.Fatalf("%s shard %d: exit %d %s", c.name, i, r.code, r.stderr)
			}
			data, _ := os.ReadFile(f)
			set.files, set.data = append(set.files, f), append(set.data, data)
		}
		s.shards = append(s.shards, set)
	}
	return s
}

// Helpers over a decoded trace.
func stepsOf(m map[string]any) []any {
	s, _ := m["steps"].([]any)
	return s
}
func stepAt(m map[string]any, i int) map[string]any { return stepsOf(m)[i].(map[string]any) }
func withSteps(f func(steps []any) []any) func(m map[string]any) {
	return func(m map[string]any) { m["steps"] = f(slices.Clone(stepsOf(m))) }
}
func set(path string, v any) func(m map[string]any) {
	return func(m map[string]any) {
		keys := strings.Split(path, ".")
		for _, k := range keys[:len(keys)-1] {
			m = m[k].(map[string]any)
		}
		if v == nil {
			delete(m, keys[len(keys)-1])
			return
		}
		m[keys[len(keys)-1]] = v
	}
}

// rawMutations damage the bytes: truncated, followed by more data, or
// not JSON. Every one is broken.
func rawMutations(data []byte, rng *rand.Rand) []mutation {
	var out []mutation
	for range 4 {
		n := 1 + rng.IntN(len(data)-3) // the closing brace goes
		out = append(out, mutation{name: fmt.Sprintf("truncated to %d bytes", n), class: broken, raw: func(d []byte) []byte { return d[:n] }})
	}
	for _, more := range []string{"}", "]", "{}", "[]", "x", "null", "\n}\n", "COPY"} {
		out = append(out, mutation{name: fmt.Sprintf("followed by %q", more), class: broken, raw: func(d []byte) []byte {
			if more == "COPY" {
				return append(d, d...)
			}
			return append(d, more...)
		}})
	}
	out = append(out,
		mutation{name: "first : made =", class: broken, raw: func(d []byte) []byte { return bytes.Replace(d, []byte(":"), []byte("="), 1) }},
		mutation{name: "last } dropped", class: broken, raw: func(d []byte) []byte {
			d = bytes.TrimRight(d, " \n")
			return d[:len(d)-1]
		}},
		mutation{name: "a NUL first", class: broken, raw: func(d []byte) []byte { return append([]byte{0}, d...) }},
		mutation{name: "white space after", class: harmless, raw: func(d []byte) []byte { return append(d, " \n\t\r\n"...) }},
		mutation{name: "compact JSON", class: harmless, raw: func(d []byte) []byte {
			var b bytes.Buffer
			json.Compact(&b, d)
			return b.Bytes()
		}},
	)
	return out
}

// traceMutations are the variants of a violation's trace.
func traceMutations(s traceSource, rng *rand.Rand) []mutation {
	m0 := map[string]any{}
	json.Unmarshal(s.data, &m0)
	n := len(stepsOf(m0))
	out := rawMutations(s.data, rng)
	add := func(c class, name string, f func(m map[string]any)) {
		out = append(out, mutation{name: name, class: c, edit: f})
	}
	sys := systemNamed(m0["system"].(string))
	var safetyProp, liveProp string
	for _, d := range sys.PropertyDocs() {
		switch {
		case d.Kind == properties.Safety && safetyProp == "":
			safetyProp = d.Name
		case d.Kind == properties.Liveness && liveProp == "":
			liveProp = d.Name
		}
	}
	_, hasDeadTest := m0["dead_test"]

	// Harmless: fields no proof reads.
	add(harmless, "message edited", set("message", "edited"))
	add(harmless, "message removed", set("message", nil))
	add(harmless, "texts removed", withSteps(func(st []any) []any {
		for _, x := range st {
			delete(x.(map[string]any), "text")
		}
		return st
	}))
	i := rng.IntN(n)
	add(harmless, fmt.Sprintf("text of step %d edited", i+1), func(m map[string]any) { stepAt(m, i)["text"] = "edited" })
	if s.safety || hasDeadTest {
		add(harmless, "seed edited", set("seed", rng.Int64N(1<<40)))
	}
	if !s.safety {
		add(harmless, "critical event, node and case edited", func(m map[string]any) {
			c := m["critical"].(map[string]any)
			c["event"], c["node"], c["case"] = "edited", 1, "C2"
		})
		add(harmless, "no critical", set("critical", nil))
		add(harmless, "live trace missing", set("critical.live_trace", "nosuch.json"))
		add(harmless, "live trace is the dead one", set("critical.live_trace", filepath.Base(s.file)))

		// Cosmetic: the steps named for people, made nonsense.
		crit := int(m0["critical"].(map[string]any)["step"].(float64))
		for _, v := range []int{-1, 0, n + 1, 1<<31 - 1} {
			add(cosmetic, fmt.Sprintf("critical step %d", v), set("critical.step", v))
		}
		for _, v := range []int{-1, crit, 1 << 40} {
			add(cosmetic, fmt.Sprintf("live step %d", v), set("critical.live_step", v))
		}
	}
	for _, v := range []int{-1, n + 1} {
		add(cosmetic, fmt.Sprintf("prefix length %d", v), set("prefix_length", v))
	}

	// Broken: claims the file cannot back, and malformed fields.
	other := map[bool]string{true: "liveness-violation", false: "safety-violation"}[s.safety]
	for _, r := range []string{"bogus", "", "ok", "inconclusive", "live", "prefix", "property-error", other} {
		add(broken, fmt.Sprintf("result %q", r), set("result", r))
	}
	otherKind := map[bool]string{true: liveProp, false: safetyProp}[s.safety]
	props := []string{"nosuch", "", "ring-formed", otherKind}
	if s.safety {
		props = append(props, search.PanicProperty)
	}
	for _, p := range props {
		add(broken, fmt.Sprintf("property %q", p), set("property", p))
	}
	add(broken, "system nosuch", set("system", "nosuch"))
	add(broken, "format other", set("format", "other"))
	add(broken, "version 99", set("version", 99))
	add(broken, "version -1", set("version", -1))
	add(broken, "bug nope", set("bugs", []any{"nope"}))
	add(broken, "parameter nosuch", set("params", map[string]any{"nosuch": "1"}))
	for _, v := range []int{0, -1, 1000} {
		add(broken, fmt.Sprintf("%d nodes", v), set("nodes", v))
	}
	add(broken, "resets -1", set("budget.resets", -1))
	add(broken, "an unknown field", set("extra", 1))
	add(broken, "init [0] where there is one initial state", set("init", []any{0}))
	add(broken, "init [-1]", set("init", []any{-1}))
	for range 2 {
		i := rng.IntN(n)
		add(broken, fmt.Sprintf("step %d at node 99", i+1), func(m map[string]any) { stepAt(m, i)["node"] = 99 })
	}
	for _, mu := range []struct {
		name string
		ok   func(st map[string]any) bool
		f    func(st map[string]any)
	}{
		{"peer 99", func(st map[string]any) bool { return st["peer"] != nil }, func(st map[string]any) { st["peer"] = 99 }},
		{"msg zz", func(st map[string]any) bool { return st["msg"] != nil }, func(st map[string]any) { st["msg"] = "zz" }},
		{"another msg", func(st map[string]any) bool { return st["msg"] != nil }, func(st map[string]any) { st["msg"] = fmt.Sprintf("%016x", rng.Uint64()) }},
		{"kind teleport", func(map[string]any) bool { return true }, func(st map[string]any) { st["kind"] = "teleport" }},
		{"timer nosuch", func(st map[string]any) bool { return st["timer"] != nil }, func(st map[string]any) { st["timer"] = "nosuch" }},
		{"call 99", func(st map[string]any) bool { return st["call"] != nil }, func(st map[string]any) { st["call"] = 99 }},
		{"a choice of 1000 more", func(map[string]any) bool { return true }, func(st map[string]any) {
			c, _ := st["choices"].([]any)
			st["choices"] = append(c, 1000)
		}},
	} {
		var at []int
		for i, x := range stepsOf(m0) {
			if mu.ok(x.(map[string]any)) {
				at = append(at, i)
			}
		}
		if len(at) == 0 {
			continue
		}
		i := at[rng.IntN(len(at))]
		add(broken, fmt.Sprintf("step %d: %s", i+1, mu.name), func(m map[string]any) { mu.f(stepAt(m, i)) })
	}
	add(broken, "a step at node 99 after the last", withSteps(func(st []any) []any {
		return append(st, map[string]any{"kind": "timer", "node": 99, "timer": "x"})
	}))
	if s.safety {
		// The violation is at the last step, and only there.
		j := rng.IntN(n)
		add(broken, fmt.Sprintf("step %d again after the violation", j+1), withSteps(func(st []any) []any { return append(st, st[j]) }))
		add(broken, "the last step again after the violation", withSteps(func(st []any) []any { return append(st, st[len(st)-1]) }))
		for _, k := range []int{0, rng.IntN(n - 1), n - 1} {
			add(broken, fmt.Sprintf("cut to %d steps", k), withSteps(func(st []any) []any { return st[:k] }))
		}
	}

	// Edited: paths and configurations whose effect the oracle decides.
	for range 3 {
		i := rng.IntN(n)
		add(edited, fmt.Sprintf("step %d dropped", i+1), withSteps(func(st []any) []any { return slices.Delete(st, i, i+1) }))
	}
	for range 2 {
		i := rng.IntN(n)
		add(edited, fmt.Sprintf("step %d doubled", i+1), withSteps(func(st []any) []any { return slices.Insert(st, i, st[i]) }))
	}
	for range 2 {
		i, j := rng.IntN(n), rng.IntN(n)
		add(edited, fmt.Sprintf("steps %d and %d swapped", i+1, j+1), withSteps(func(st []any) []any {
			st[i], st[j] = st[j], st[i]
			return st
		}))
	}
	if !s.safety {
		for _, k := range []int{0, rng.IntN(n), n - 1} {
			add(edited, fmt.Sprintf("cut to %d steps", k), withSteps(func(st []any) []any { return st[:k] }))
		}
		add(edited, "property quiescent", set("property", search.QuiescentProperty))
		add(edited, "property handlers-return", set("property", check.DivergenceProperty))
	}
	nodes := int(m0["nodes"].(float64))
	for range 2 {
		i, to := rng.IntN(n), rng.IntN(nodes)
		add(edited, fmt.Sprintf("step %d at node %d", i+1, to), func(m map[string]any) { stepAt(m, i)["node"] = to })
	}
	for i, x := range stepsOf(m0) {
		if c, _ := x.(map[string]any)["choices"].([]any); len(c) > 0 {
			v := rng.IntN(3)
			add(edited, fmt.Sprintf("step %d's first choice %d", i+1, v), func(m map[string]any) { stepAt(m, i)["choices"].([]any)[0] = v })
			break
		}
	}
	add(edited, fmt.Sprintf("%d nodes", nodes+1), set("nodes", nodes+1))
	add(edited, fmt.Sprintf("%d nodes", nodes-1), set("nodes", nodes-1))
	add(edited, "no bugs", set("bugs", []any{}))
	if ps, _ := m0["params"].(map[string]any); ps != nil {
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range ps {
				if !yield(k) {
					return
				}
			}
		}) {
			if v, err := strconv.Atoi(ps[k].(string)); err == nil {
				add(edited, fmt.Sprintf("%s %d", k, v+1), set("params."+k, strconv.Itoa(v+1)))
			}
		}
	}
	add(edited, "a reset allowed", set("budget.resets", 1))
	add(edited, "a drop allowed", set("budget.drops", 1))
	add(edited, "system randtree", set("system", "randtree"))
	add(edited, "system lcr", set("system", "lcr"))

	// The dead test's size (item 2): bounded, at most twice the default.
	if hasDeadTest {
		for _, v := range []int{1, 2, 600} {
			add(deadtest, fmt.Sprintf("dead test walks %d", v), set("dead_test.walks", v))
		}
		for _, v := range []int{0, 1, 10000} {
			add(deadtest, fmt.Sprintf("dead test walk depth %d", v), set("dead_test.walk_depth", v))
		}
		for _, v := range []int{0, 1, 40000} {
			add(deadtest, fmt.Sprintf("dead test search states %d", v), set("dead_test.search_states", v))
		}
		for _, v := range []string{"deliver=0", "timer=0", "app=0,deliver=1,timer=0", "bogus=1"} {
			add(deadtest, fmt.Sprintf("dead test weights %s", v), set("dead_test.weights", v))
		}
		add(deadtest, "dead test seed edited", set("dead_test.seed", json.Number(strconv.FormatUint(rng.Uint64(), 10))))
		add(deadtest, "no dead test", set("dead_test", nil))
	}
	return out
}

// prefixMutations are the variants of a prefix file.
func prefixMutations(s traceSource, rng *rand.Rand) []mutation {
	m0 := map[string]any{}
	json.Unmarshal(s.data, &m0)
	n := len(stepsOf(m0))
	out := rawMutations(s.data, rng)
	add := func(c class, name string, f func(m map[string]any)) {
		out = append(out, mutation{name: name, class: c, edit: f})
	}
	add(harmless, "message edited", set("message", "edited"))
	add(harmless, "seed edited", set("seed", rng.Int64N(1<<40)))
	// It became live at its last step: any shorter is not live.
	for _, k := range []int{0, n / 2, n - 1} {
		add(broken, fmt.Sprintf("cut to %d steps", k), withSteps(func(st []any) []any { return st[:k] }))
	}
	add(broken, "bug nope", set("bugs", []any{"nope"}))
	add(broken, "degree zz", set("params.degree", "zz"))
	add(broken, "property nosuch", set("property", "nosuch"))
	add(broken, "property no-loops", set("property", "no-loops"))
	add(broken, "result bogus", set("result", "bogus"))
	add(broken, "result liveness-violation", set("result", "liveness-violation"))
	add(broken, "system nosuch", set("system", "nosuch"))
	add(broken, "0 nodes", set("nodes", 0))
	add(broken, "an unknown field", set("extra", true))
	add(broken, "init [0]", set("init", []any{0}))
	for range 2 {
		i := rng.IntN(n)
		add(broken, fmt.Sprintf("step %d at node 99", i+1), func(m map[string]any) { stepAt(m, i)["node"] = 99 })
	}
	add(broken, "a step at node 99 after the last", withSteps(func(st []any) []any {
		return append(st, map[string]any{"kind": "timer", "node": 99, "timer": "x"})
	}))
	for range 3 {
		i := rng.IntN(n)
		add(edited, fmt.Sprintf("step %d dropped", i+1), withSteps(func(st []any) []any { return slices.Delete(st, i, i+1) }))
	}
	for range 2 {
		i := rng.IntN(n)
		add(edited, fmt.Sprintf("step %d doubled", i+1), withSteps(func(st []any) []any { return slices.Insert(st, i, st[i]) }))
	}
	for range 2 {
		i, j := rng.IntN(n), rng.IntN(n)
		add(edited, fmt.Sprintf("steps %d and %d swapped", i+1, j+1), withSteps(func(st []any) []any {
			st[i], st[j] = st[j], st[i]
			return st
		}))
	}
	nodes := int(m0["nodes"].(float64))
	for range 2 {
		i, to := rng.IntN(n), rng.IntN(nodes)
		add(edited, fmt.Sprintf("step %d at node %d", i+1, to), func(m map[string]any) { stepAt(m, i)["node"] = to })
	}
	for i, x := range stepsOf(m0) {
		if c, _ := x.(map[string]any)["choices"].([]any); len(c) > 0 {
			v := 1 - int(c[0].(float64))%2
			add(edited, fmt.Sprintf("step %d's first choice %d", i+1, v), func(m map[string]any) { stepAt(m, i)["choices"].([]any)[0] = v })
			break
		}
	}
	add(edited, "degree 3", set("params.degree", "3"))
	add(edited, "peers all", set("params.peers", "all"))
	add(edited, "5 nodes", set("nodes", 5))
	add(edited, "3 nodes", set("nodes", 3))
	add(edited, "bug RT3", set("bugs", []any{"RT3"}))
	return out
}

// shardMutations are the variants of one of a split check's shard
// files; merge reads each with the other shard as written.
func shardMutations(s shardSet, rng *rand.Rand) []mutation {
	var out []mutation
	for k := range 2 {
		m0 := map[string]any{}
		json.Unmarshal(s.data[k], &m0)
		report := m0["report"].(map[string]any)
		ok := report["result"] == "ok"
		vs := m0["violations"].([]any)
		other := map[string]any{}
		json.Unmarshal(s.data[1-k], &other)
		add := func(c class, name string, f func(m map[string]any)) {
			out = append(out, mutation{name: fmt.Sprintf("shard %d: %s", k, name), class: c, edit: f, shard: k})
		}
		if k == 0 {
			add(harmless, "times edited", func(m map[string]any) {
				tm := m["timing"].(map[string]any)
				tm["search_ms"], tm["total_ms"], tm["workers"] = 12345, 67890, 7
			})
			add(counts, "states edited", set("report.stats.states", 1))
			add(counts, "foreign states edited", set("foreign_states", 99))
			add(counts, "no fingerprints", set("fingerprints", nil))
		} else {
			for _, mu := range rawMutations(s.data[k], rng) {
				mu.name, mu.shard = "shard 1: "+mu.name, 1
				out = append(out, mu)
			}
			add(counts, "transitions edited", set("report.stats.transitions", 3))
		}
		cfg := m0["config"].(map[string]any)
		for _, f := range []struct {
			key string
			v   any
		}{{"depth", 7}, {"seed", 2}, {"nodes", 4}, {"walk_depth", 10}, {"walks", 1}, {"weights", "deliver=1"}, {"reduce", "none"}, {"bugs", []any{}}} {
			if fmt.Sprint(cfg[f.key]) == fmt.Sprint(f.v) {
				continue
			}
			add(broken, fmt.Sprintf("config %s %v under the same hash", f.key, f.v), set("config."+f.key, f.v))
		}
		for _, f := range []string{"config_sha256", "system_sha256", "executable_sha256"} {
			add(broken, "identity "+f+" edited", set("identity."+f, strings.Repeat("0", 64)))
		}
		add(broken, "no executable hash", set("identity.executable_sha256", nil))
		add(broken, "another revision", set("identity.revision", "0123456789abcdef"))
		add(broken, "another module", set("identity.module", "example.com/other"))
		add(broken, "another go", set("identity.go", "go1.1"))
		sd := int(m0["split_depth"].(float64))
		add(broken, fmt.Sprintf("split depth %d", sd+1), set("split_depth", sd+1))
		if sd > 0 {
			add(broken, fmt.Sprintf("split depth %d", sd-1), set("split_depth", sd-1))
		}
		add(broken, "the other shard's index", set("shard", 1-k))
		add(broken, "shard 7", set("shard", 7))
		add(broken, "3 shards", set("shards", 3))
		add(broken, "schema edited", set("schema", "livecheck/shard/v0"))
		add(broken, "an unknown field", set("extra", 1))
		add(broken, "report of 4 nodes", set("report.nodes", 4))
		add(broken, "report of seed 2", set("report.seed", 2))
		if ok {
			add(broken, "not complete", set("report.complete", false))
			add(broken, "covered depth 1", set("report.covered_depth", 1))
			add(broken, "result safety-violation", set("report.result", "safety-violation"))
		} else {
			add(broken, "result ok", set("report.result", "ok"))
		}
		add(broken, "the other shard's fingerprints", set("fingerprints", other["fingerprints"]))
		add(broken, "the other shard's fingerprint file", set("fingerprints.file", other["fingerprints"].(map[string]any)["file"]))
		add(broken, "fingerprint count edited", func(m map[string]any) {
			r := m["fingerprints"].(map[string]any)
			c, _ := r["count"].(json.Number).Int64()
			r["count"] = c + 1
		})
		add(broken, "fingerprint hash edited", set("fingerprints.sha256", strings.Repeat("0", 64)))
		add(broken, "fingerprint file missing", set("fingerprints.file", "nosuch.fingerprints"))
		if len(vs) > 0 {
			v0 := vs[0].(map[string]any)
			tr := v0["trace"].(map[string]any)
			n := len(tr["steps"].([]any))
			vt := func(f func(v map[string]any)) func(m map[string]any) {
				return func(m map[string]any) { f(m["violations"].([]any)[0].(map[string]any)) }
			}
			add(broken, "no violation", set("violations", []any{}))
			add(broken, "its trace cut to 0 steps", vt(func(v map[string]any) { set("steps", []any{})(v["trace"].(map[string]any)) }))
			add(broken, fmt.Sprintf("its trace cut to %d steps", n-1), vt(func(v map[string]any) {
				tr := v["trace"].(map[string]any)
				tr["steps"] = tr["steps"].([]any)[:n-1]
				v["path_length"] = n - 1
			}))
			add(broken, "its trace with a step at node 99", vt(func(v map[string]any) {
				v["trace"].(map[string]any)["steps"].([]any)[rng.IntN(n)].(map[string]any)["node"] = 99
			}))
			add(broken, "its trace with a step after the violation", vt(func(v map[string]any) {
				tr := v["trace"].(map[string]any)
				tr["steps"] = append(tr["steps"].([]any), tr["steps"].([]any)[0])
				v["path_length"] = n + 1
			}))
			add(broken, "its path length edited", vt(func(v map[string]any) { v["path_length"] = n + 1 }))
			add(broken, "its property edited", vt(func(v map[string]any) { v["property"] = "elected" }))
			add(broken, "its trace without the bug", vt(func(v map[string]any) { v["trace"].(map[string]any)["bugs"] = []any{} }))
			add(broken, "its trace name a path", vt(func(v map[string]any) { v["trace_name"] = "../x.json" }))
			add(harmless, "its trace's message edited", vt(func(v map[string]any) { v["trace"].(map[string]any)["message"] = "edited" }))
		}
	}
	return out
}

// A tally counts what one reader did with the variants of one class.
type tally struct{ variants, accepted, refused, panics, undecided int }

type sweep struct {
	t *testing.T
	// byClass counts by "reader class", byReader by reader.
	byClass, byReader map[string]*tally
	// orig holds what each reader does with each file as written, by
	// "reader file".
	orig map[string]run
}

// original is what reader does with a file as written (do runs it once).
func (sw *sweep) original(reader, file string, do func() run) run {
	key := reader + " " + file
	r, ok := sw.orig[key]
	if !ok {
		r = do()
		sw.orig[key] = r
	}
	return r
}

// accepted says whether a reader's exit status accepts the file: replay
// exits 0 or 1 for a trace that reproduces, report and debug 0, check
// --from 0, 1 or 3 (it ran), merge 0 or 1 (a verdict).
func accepted(reader string, code int) bool {
	switch reader {
	case "report", "debug":
		return code == livecheck.ExitOK
	case "check --from":
		return code != livecheck.ExitUsage
	}
	return code == livecheck.ExitOK || code == livecheck.ExitViolation
}

// judge checks what reader did with a variant of class c, against what
// it does with the file as written (orig); proof is the oracle's word on
// the variant, asked only when needed.
func (sw *sweep) judge(reader, variant string, c class, r, orig run, proof func() verdict) {
	t := sw.t
	t.Helper()
	get := func(m map[string]*tally, key string) *tally {
		if m[key] == nil {
			m[key] = &tally{}
		}
		return m[key]
	}
	k, all := get(sw.byClass, reader+" "+string(c)), get(sw.byReader, reader)
	k.variants++
	all.variants++
	if r.panicked != "" {
		k.panics++
		all.panics++
		t.Errorf("%s panics on %s: %s", reader, variant, r.panicked)
		return
	}
	if r.code < 0 || r.code > 3 {
		t.Errorf("%s exits %d on %s", reader, r.code, variant)
	}
	ok := accepted(reader, r.code)
	if ok {
		k.accepted++
		all.accepted++
	} else {
		k.refused++
		all.refused++
	}
	if !ok && strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 && r.code == livecheck.ExitUsage {
		t.Errorf("%s refuses %s in more than one line: %q", reader, variant, r.stderr)
	}
	switch c {
	case harmless:
		if r.code != orig.code {
			t.Errorf("%s: exit %d on %s (harmless), %d on the file as written: %s", reader, r.code, variant, orig.code, r.stderr)
		}
	case broken:
		if ok {
			t.Errorf("%s accepts %s (broken): exit %d\n%s", reader, variant, r.code, r.stderr)
		}
	case edited:
		if !ok {
			break
		}
		switch v := proof(); v {
		case isProof:
		case unknown:
			// An end from which more states are reachable than the
			// oracle searches (RandTree's epochs grow without bound):
			// only a dead test can speak for it, and the reader's did.
			k.undecided++
			all.undecided++
			t.Logf("%s accepts %s (edited), which the oracle cannot decide: exit %d", reader, variant, r.code)
		default:
			t.Errorf("%s accepts %s (edited), which the oracle finds %s: exit %d", reader, variant, v, r.code)
		}
	}
}

func (sw *sweep) log() {
	var b strings.Builder
	fmt.Fprintf(&b, "%-28s %8s %8s %8s %6s %9s\n", "reader, class", "variants", "accepted", "refused", "panics", "undecided")
	row := func(name string, x *tally) {
		fmt.Fprintf(&b, "%-28s %8d %8d %8d %6d %9d\n", name, x.variants, x.accepted, x.refused, x.panics, x.undecided)
	}
	for _, k := range slices.Sorted(maps.Keys(sw.byClass)) {
		row(k, sw.byClass[k])
	}
	for _, k := range []string{"replay", "report", "debug", "check --from", "merge"} {
		if x := sw.byReader[k]; x != nil {
			row(k+" (all)", x)
		}
	}
	sw.t.Logf("damaged-input sweep:\n%s", b.String())
}

// trace feeds a trace variant to replay, report --html and debug, in
// the trace's directory, beside its nearest live path.
func (sw *sweep) trace(s traceSource, mu mutation) {
	t := sw.t
	data := mu.apply(t, s.data)
	dir := filepath.Dir(s.file)
	f := write(t, dir, "variant.json", data)
	got := readers(t, f)
	var v *verdict
	proof := func() verdict {
		if v == nil {
			x := oracle(data, nil)
			v = &x
		}
		return *v
	}
	for _, reader := range []string{"replay", "report", "debug"} {
		orig := sw.original(reader, s.file, func() run { return readers(t, s.file)[reader] })
		sw.judge(reader, s.name+": "+mu.name, mu.class, got[reader], orig, proof)
	}
}

// prefix feeds a prefix variant to check --from and to replay.
func (sw *sweep) prefix(s traceSource, mu mutation) {
	t := sw.t
	data := mu.apply(t, s.data)
	f := write(t, t.TempDir(), "prefix.json", data)
	from := func(file string) run {
		return lc(t, "", "check", "randtree", "--from", file, "--depth", "2", "--walk-depth", "50", "--time", "0", "-q", "--out", t.TempDir())
	}
	var v *verdict
	// check --from runs with no bug of its own: the prefix must be live
	// under the file's configuration and under that one.
	proof := func() verdict {
		if v == nil {
			x := oracle(data, func(cfg protocol.Config) protocol.Config { cfg.Bugs = nil; return cfg })
			v = &x
		}
		return *v
	}
	sw.judge("check --from", s.name+": "+mu.name, mu.class, from(f), sw.original("check --from", s.file, func() run { return from(s.file) }), proof)
	sw.judge("replay", s.name+": "+mu.name, mu.class, lc(t, "", "replay", f),
		sw.original("replay", s.file, func() run { return lc(t, "", "replay", s.file) }), func() verdict { return oracle(data, nil) })
}

// merge feeds a shard variant, with the other shard as written, to
// merge.
func (sw *sweep) merge(s shardSet, mu mutation) {
	t := sw.t
	data := mu.apply(t, s.data[mu.shard])
	files := slices.Clone(s.files)
	files[mu.shard] = write(t, filepath.Dir(s.files[0]), "variant.json", data)
	merge := func(files []string) run {
		return lc(t, "", append([]string{"merge", "--out", t.TempDir()}, files...)...)
	}
	orig := sw.original("merge", s.files[0], func() run { return merge(s.files) })
	sw.judge("merge", s.name+": "+mu.name, mu.class, merge(files), orig, func() verdict { return notProof })
}

// A verdict is the oracle's word on a trace.
type verdict string

const (
	isProof  verdict = "a proof of its claim"
	notProof verdict = "no proof of its claim"
	unknown  verdict = "undecided"
)

func systemNamed(name string) *protocol.System {
	for _, s := range systems.All() {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// oracle decides, without replay, whether trace data proves what it
// claims: sim applies its steps exactly (each enabled, each making the
// choices recorded); a safety violation must hold first at the last
// state and be of its property; a liveness violation needs an end that
// is not live and from which an exhaustive search finds no live state;
// a live trace or prefix needs a live end. also, when set, gives a
// second configuration the path must also prove its claim under (a
// prefix under the check's).
func oracle(data []byte, also func(protocol.Config) protocol.Config) verdict {
	tr, err := reports.ReadTrace(bytes.NewReader(data))
	if err != nil {
		return notProof
	}
	sys := systemNamed(tr.System)
	if sys == nil {
		return notProof
	}
	cfg := check.ConfigOf(tr)
	v := proves(sys, tr, cfg)
	if v == isProof && also != nil {
		v = proves(sys, tr, also(cfg))
	}
	return v
}

func proves(sys *protocol.System, tr *reports.Trace, cfg protocol.Config) verdict {
	p, err := reports.Path(tr.Steps)
	if err != nil {
		return notProof
	}
	_, m, err := sys.Model(cfg)
	if err != nil {
		return notProof
	}
	w, err := sim.NewWorld(m.Spec)
	if err != nil {
		return notProof
	}
	w.Strict, w.Record = true, true
	var safety, live []properties.Property
	for _, pr := range m.Properties {
		switch pr.Kind {
		case properties.Safety:
			safety = append(safety, pr)
		case properties.Liveness:
			live = append(live, pr)
		}
	}
	violated := func(s *sim.State) string {
		for i := range safety {
			if safety[i].CheckSafety(s) != nil {
				return safety[i].Name
			}
		}
		return ""
	}
	isLive := func(s *sim.State) bool {
		for i := range live {
			if !live[i].IsLive(s) {
				return false
			}
		}
		return true
	}
	s, err := w.InitialFrom(tr.Init)
	if err != nil || len(w.Last().Choices) != len(tr.Init) {
		return notProof
	}
	first, at := violated(s), 0
	for i, st := range p {
		if first != "" {
			break
		}
		next, err := w.Apply(s, st.Event, st.Choices)
		if err != nil || len(w.Last().Choices) != len(st.Choices) {
			return notProof
		}
		s = next
		first, at = violated(s), i+1
	}
	names := func(ps []properties.Property) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	switch check.Verdict(tr.Result) {
	case check.SafetyViolation:
		if first == tr.Property && at == len(p) {
			return isProof
		}
		return notProof
	case check.Live, check.PrefixResult:
		if first == "" && isLive(s) && (tr.Property == "" || tr.Property == strings.Join(names(live), ",")) {
			return isProof
		}
		return notProof
	case check.LivenessViolation:
	default:
		return notProof
	}
	if first != "" || isLive(s) || !slices.Contains(append(names(live), search.QuiescentProperty), tr.Property) {
		return notProof
	}
	if tr.Property == search.QuiescentProperty {
		if len(w.Enabled(s, nil)) == 0 {
			return isProof
		}
		return notProof
	}
	// Dead: no live state reachable from the end. A plain breadth-first
	// search, every event and every choice, of up to 100,000 states.
	w.Strict, w.Record = false, false
	seen := map[uint64]bool{s.Fingerprint(): true}
	queue := []*sim.State{s}
	for len(queue) > 0 {
		if len(seen) > 100_000 {
			return unknown
		}
		cur := queue[0]
		queue = queue[1:]
		for _, ev := range w.Enabled(cur, nil) {
			var tape []int
			for {
				next, err := w.Apply(cur, ev, tape)
				info := w.Last()
				if err == nil && !seen[next.Fingerprint()] {
					if isLive(next) {
						return notProof
					}
					seen[next.Fingerprint()] = true
					queue = append(queue, next)
				}
				nt, more := sim.NextTape(info.Choices, info.Bounds, nil)
				if !more {
					break
				}
				tape = nt
			}
		}
	}
	return isProof
}
