package etcdraft_test

import (
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"testing"
	"time"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/etcdraft"
)

// benchDepth is the space BenchmarkSearch measures: 3
// nodes at the defaults, unreduced, to depth 9.
const (
	benchDepth = 9
)

// BenchmarkSearch is the exhaustive search of etcd raft with 3 nodes at its
// defaults to depth benchDepth, one worker, no reduction: the figure issue
// 36 sets targets for (transitions/s, and heap-B/state, the peak of the
// heap during the search above the heap before it, over the states, at the
// CLI's GOGC=400), with search-B/state (what the visited set and the tree
// of paths keep) and the allocations per state.
func BenchmarkSearch(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	_, m, err := etcdraft.System.Model(livecheck.Config{Nodes: 3})
	if err != nil {
		b.Fatal(err)
	}
	w, err := sim.NewWorld(m.Spec)
	if err != nil {
		b.Fatal(err)
	}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	heap := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	live := func() uint64 { return sample[1].Value.Uint64() }
	var peak, peakLive uint64
	opts := search.Options{Depth: benchDepth, Properties: m.Properties, ProgressEvery: 1 << 12,
		Progress: func(search.Stats) { peak = max(peak, heap()); peakLive = max(peakLive, live()) }}
	warm := opts
	warm.MaxStates = 1 << 12
	if _, err := search.Global(w, warm); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var states, trans, bytes int64
	var heapBytes, liveBytes uint64
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0 := cpuTime()
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		base := heap()
		baseLive := live()
		peak, peakLive = base, baseLive
		b.StartTimer()
		res, err := search.Global(w, opts)
		peak = max(peak, heap())
		runtime.GC() // what the search left live at its end counts too
		peakLive = max(peakLive, live())
		if err != nil || res.Violation != nil || !res.Complete {
			b.Fatalf("err %v, violation %v, complete %v", err, res.Violation, res.Complete)
		}
		states += res.Stats.States
		trans += res.Stats.Transitions
		bytes += res.Stats.Bytes
		heapBytes += peak - base
		liveBytes += peakLive - baseLive
	}
	runtime.ReadMemStats(&after)
	cpu := (cpuTime() - cpu0).Seconds()
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(states)/float64(b.N), "states")
	b.ReportMetric(float64(trans)/sec, "transitions/s")
	// The same per second of CPU the process used (the collector's
	// included), which a busy machine changes less than the wall clock.
	b.ReportMetric(float64(trans)/cpu, "transitions/cpu-s")
	b.ReportMetric(float64(heapBytes)/float64(states), "heap-B/state")
	b.ReportMetric(float64(liveBytes)/float64(states), "live-B/state")
	b.ReportMetric(float64(bytes)/float64(states), "search-B/state")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(states), "alloc-B/state")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(states), "allocs/state")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// nodeAfter returns node 0 of the state a seeded random run of steps
// events reaches from the initial state, with its world.
func nodeAfter(tb testing.TB, steps int, seed uint64) (*sim.World, sim.Node) {
	_, m, err := etcdraft.System.Model(livecheck.Config{Nodes: 3})
	if err != nil {
		tb.Fatal(err)
	}
	w, err := sim.NewWorld(m.Spec)
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	w.Chooser = func(n int) int { return rng.IntN(n) }
	s, err := w.Initial()
	if err != nil {
		tb.Fatal(err)
	}
	var evs []sim.Event
	for range steps {
		evs = w.Enabled(s, evs[:0])
		if len(evs) == 0 {
			break
		}
		if s, err = w.Apply(s, evs[rng.IntN(len(evs))], nil); err != nil {
			tb.Fatal(err)
		}
	}
	return w, s.Node(0)
}

// BenchmarkCopyNode and BenchmarkFingerprintNode measure the memo path
// (a raft node can alias) on a node after a short run: what a step of
// the search pays besides raft.
func BenchmarkCopyNode(b *testing.B) {
	_, n := nodeAfter(b, 9, 1)
	b.ReportAllocs()
	for b.Loop() {
		sim.Copy(n)
	}
}

func BenchmarkFingerprintNode(b *testing.B) {
	_, n := nodeAfter(b, 9, 1)
	b.ReportAllocs()
	for b.Loop() {
		sim.Fingerprint(n)
	}
}

// BenchmarkHashNode is BenchmarkFingerprintNode with one Hasher reused,
// as a world hashes the nodes a step changed.
func BenchmarkHashNode(b *testing.B) {
	_, n := nodeAfter(b, 9, 1)
	var h sim.Hasher
	b.ReportAllocs()
	for b.Loop() {
		h.Reset()
		h.Value(n)
		h.Sum64()
	}
}
