package check

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// A check watches its own heap: a search of states can outgrow any
// machine, and the Go runtime ends a program that asks for more memory
// than it can have with a fatal error, no report, no trace. The budget
// is checked where the search grows (every few thousand transitions, at
// every walk, and by local mode before it builds a large structure), and
// the runtime's soft memory limit makes the collector work harder before
// the budget is reached rather than after.

// DefaultMaxMemory is the budget of a check that names none: three
// quarters of the memory this process may use (the machine's, or its
// cgroup's when lower), or 0 (no budget) when that cannot be read.
func DefaultMaxMemory() int64 {
	total := physicalMemory()
	if c := cgroupLimit(); c > 0 && (total == 0 || c < total) {
		total = c
	}
	return total / 4 * 3
}

func physicalMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// MemTotal:       24612345 kB
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

func cgroupLimit() int64 {
	for _, file := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err == nil && v > 0 && v < math.MaxInt64/2 {
			return v
		}
	}
	return 0
}

// ParseBytes reads a memory size: a number with an optional unit, B, KB,
// MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), in
// any case; "0" means no limit.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a size (valid: a number with an optional unit B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, e.g. 512MB)", s)
	}
	mult := map[string]float64{"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
		"k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tib": 1 << 40}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("%q has an unknown unit %q (valid: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)", s, t[i:])
	}
	if v*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(v * mult), nil
}

// FormatBytes writes a size for people: 200 MB, 1.5 GB.
func FormatBytes(n int64) string {
	switch {
	case n >= 1e9:
		return strconv.FormatFloat(float64(n)/1e9, 'f', 1, 64) + " GB"
	case n >= 1e6:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 0, 64) + " MB"
	case n >= 1e3:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 0, 64) + " kB"
	}
	return strconv.FormatInt(n, 10) + " B"
}

// memBudget is one check's budget. The heap is the process's: checks
// running side by side (tests, a library user's goroutines) share it, and
// each ends when the whole heap outgrows its own budget.
type memBudget struct {
	limit int64 // 0: none
	// busy says the check runs on more than one worker: no core is left
	// idle for the collector (tuneGC); scanned, that its heap has had
	// much to scan (scansMuch).
	busy    bool
	scanned atomic.Bool
	hit     atomic.Bool
	peak    atomic.Int64 // live heap seen when the budget was hit
	mu      sync.Mutex
	s       [4]metrics.Sample
}

// The budget ends a check when the heap's live objects pass this share of
// it: the rest is room for garbage and for the structure being built.
const liveShare = 0.75

func newMemBudget(limit int64, workers int) *memBudget {
	m := &memBudget{limit: max(limit, 0), busy: workers > 1}
	m.s[0].Name = "/gc/heap/live:bytes"
	m.s[1].Name = "/memory/classes/total:bytes"
	m.s[2].Name = "/memory/classes/heap/released:bytes"
	m.s[3].Name = "/gc/scan/heap:bytes"
	return m
}

// heap returns the live heap after the last collection, the memory the
// runtime holds now (heap with its garbage, stacks, its own structures;
// not what it gave back to the system), and the part of the heap the
// collector scans for pointers.
func (m *memBudget) heap() (live, held, scan int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	metrics.Read(m.s[:])
	var v [len(m.s)]int64
	for i := range m.s {
		if m.s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = int64(m.s[i].Value.Uint64())
		}
	}
	return v[0], v[1] - v[2], v[3]
}

// over says whether the check has outgrown its budget; once it has, it
// stays so.
func (m *memBudget) over() bool {
	return !m.fits(0)
}

// fits says whether extra more bytes fit in the budget. The live heap of
// the last collection is what the check keeps; held counts garbage and
// the runtime's own memory too, and only past the whole budget does it
// end the check (a collection would not come in time).
func (m *memBudget) fits(extra int64) bool {
	if m == nil {
		return true
	}
	if m.limit == 0 {
		if adaptiveGC.Load() {
			live, _, scan := m.heap()
			tuneGC(live, m.scansMuch(scan))
		}
		return true
	}
	if m.hit.Load() {
		return false
	}
	live, held, scan := m.heap()
	tuneGC(live, m.scansMuch(scan))
	if float64(live+extra) > liveShare*float64(m.limit) || held+extra > m.limit {
		m.peak.Store(max(live, held) + extra)
		m.hit.Store(true)
		return false
	}
	return true
}

// The collector's pace, under Main. A check's heap is mostly its visited
// set and its tree of paths, which hold no pointers and cost the
// collector next to nothing to mark, and the garbage of the states it
// makes and drops. Room for as much garbage as the live heap (GOGC 100)
// while it is small, 32 MB past that, and an eighth of the live heap past
// 256 MB. On Paxos 3 x 2 to depth 20 (7.4M states; its live heap peaks
// at about 330 MB, as the last level's candidates join the visited set)
// the peak RSS is 450 MB, 62 bytes a state, against 635 MB with 256 MB of
// room and a quarter of the live heap (2.6 GB at GOGC 400); the unreduced
// Paxos split 2 x 4 (3.4M states, one worker) 185 MB against 265 MB. Their
// user CPU time did not change measurably (2026-11-26: 18.6 s against
// 18.5 s, 12.8 and 13.0 s against 12.2 and 12.9 s; LCR 8 and 10 the same):
// the collections are of a heap the collector hardly scans. Small
// searches that make many states paid for the room of GOGC 100 in
// collections (LCR 8: 0.52 s against 0.39 s at GOGC 400), and a search
// on every core paid twice: with one worker the collector marks on an
// idle core, with one a core it takes theirs, and its write barrier is
// on more often. So while the live heap is under 192 MB the room is 128
// MB, however small the heap (LCR 11 unreduced to depth 13, 2026-11-29,
// three alternated pairs: 2 workers 1.67x to 1.98x faster than one,
// with 0.94 to 1.17 times its CPU, peak RSS 165 to 214 MB; with room as
// much as the heap 1.55x to 1.60x, 1.13 to 1.18 times the CPU, 85 to
// 108 MB), but no more than 16 times the live heap: the walks of a
// small check, whose live heap is a few MB, collected every few MB they
// made (RandTree 5, the default check: 2.4 and 2.5 s on one worker
// against 3.0 and 3.1 s, peak RSS 90 MB against 27 MB; 2 workers 1.2
// and 1.5 s against 1.9 and 1.4 s). Before, the room was as much as the heap up to 128 MB:
// the unreduced split Paxos 2 x 4 then ran in 11.85 and 12.18 s of wall
// time against 12.71 and 12.47 s (peak RSS 257 to 272 MB against 185),
// a write barrier on in fewer collections (2026-11-26, with two
// changes of the step's cost beside it), and the 7.4M states above in
// 445 MB as before (past 192 MB the room is what it was, and the heap
// then never held more than it does at its end).
//
// On more than one worker, a small heap with much to scan for pointers
// (scansMuch: 32 MB or more at the start of a collection) gets twice
// that room, 256 MB. Every core works, so the collector's marking, free
// on one worker's idle core, is paid in full, and it is dear where the
// states kept and the step caches' node states are many objects with
// pointers: on etcd raft's reduced search to depth 12, 2 workers spent
// 0.5 to 0.75 s of CPU in the collector, one worker 0.3 s (gctrace), the
// step caches of two workers together holding more node states than
// one's. 2026-11-29, three alternated pairs each, 2 workers against 1:
// that etcd raft 1.76x to 1.91x against 1.61x to 1.77x, 5.4 to 6.3 s of
// CPU on 2 workers against 6.4 to 7.4 s, peak RSS 446 to 462 MB against
// 369 to 376 MB; etcd kv unreduced to depth 11 1.79x to 1.95x against
// 1.73x to 1.82x; transport unreduced to depth 50 1.68x to 1.82x
// against 1.70x to 1.82x, 2.43 to 2.52 s of CPU against 2.46 to 2.60 s
// (peak RSS 327 MB against 192 to 205 MB). Paxos 3 x 2, whose heap is
// its visited set, never has 32 MB to scan (23 MB at most seen) and keeps
// the room of one worker: twice the room there while its live heap was
// under 64 or 96 MB took its peak past 64 bytes a state (449 to 484 MB
// against 440 to 462).
var adaptiveGC atomic.Bool

const (
	gcRoom    = 32 << 20
	gcPercent = 100
	// gcShare is the least room, as a share of the live heap: 1/gcShare.
	gcShare = 8
	// gcSmallRoom is the room while the live heap is under gcSmallHeap,
	// gcBusyRoom times it on more than one worker with much to scan.
	gcSmallRoom = 128 << 20
	gcSmallHeap = 192 << 20
	gcBusyRoom  = 2
	// gcScanHeap is the least heap scanned for pointers at which the
	// busy room applies.
	gcScanHeap = 32 << 20
	// gcMaxPercent bounds the room as a share of the live heap.
	gcMaxPercent = 1600
)

var gcSet atomic.Int64

// scansMuch says whether the check runs on more than one worker and its
// heap has had at least gcScanHeap to scan for pointers at the start of
// a collection (the runtime's /gc/scan/heap:bytes), which it then keeps
// saying: the figure rises and falls from one collection to the next.
func (m *memBudget) scansMuch(scan int64) bool {
	if !m.busy {
		return false
	}
	if scan >= gcScanHeap {
		m.scanned.Store(true)
	}
	return m.scanned.Load()
}

func tuneGC(live int64, busy bool) {
	if !adaptiveGC.Load() || live <= 0 {
		return
	}
	if pct := gcPercentFor(live, busy); gcSet.Swap(pct) != pct {
		debug.SetGCPercent(int(pct))
	}
}

// gcPercentFor is the collector's pace (GOGC) for a live heap of live
// bytes; busy says the check keeps every core busy with a heap the
// collector has much to scan in (scansMuch).
func gcPercentFor(live int64, busy bool) int64 {
	room := max(live/gcShare, min(live*gcPercent/100, gcRoom))
	if live < gcSmallHeap {
		small := int64(gcSmallRoom)
		if busy {
			small *= gcBusyRoom
		}
		room = max(room, small)
	}
	// At most 16 times the live heap, though: a small heap that grows
	// between two settings would otherwise get room for many times its
	// size (the walks of a small check, whose live heap is a few MB).
	pct := min(room*100/live, gcMaxPercent)
	// Steps of 25 points, 4 below 25, so that the setting changes
	// seldom.
	if pct >= 25 {
		return pct / 25 * 25
	}
	return max(pct/4*4, 100/gcShare)
}

// The runtime's soft limit is process-wide: while checks run, it is the
// largest of their budgets (a smaller one would make the collector thrash
// for the others), and it goes back to what it was when the last ends.
var softLimit struct {
	mu     sync.Mutex
	active map[*memBudget]bool
	saved  int64
}

func (m *memBudget) start() {
	if m.limit == 0 {
		return
	}
	softLimit.mu.Lock()
	defer softLimit.mu.Unlock()
	if len(softLimit.active) == 0 {
		softLimit.active = map[*memBudget]bool{}
		softLimit.saved = debug.SetMemoryLimit(-1)
	}
	softLimit.active[m] = true
	setSoftLimit()
}

func (m *memBudget) stop() {
	if m.limit == 0 {
		return
	}
	softLimit.mu.Lock()
	defer softLimit.mu.Unlock()
	delete(softLimit.active, m)
	if len(softLimit.active) == 0 {
		debug.SetMemoryLimit(softLimit.saved)
		return
	}
	setSoftLimit()
}

func setSoftLimit() {
	var most int64
	for b := range softLimit.active {
		most = max(most, b.limit)
	}
	debug.SetMemoryLimit(most)
}

// AdaptiveGC sets the collector's pace for a long check (see tuneGC) and
// lets the check adapt it to the heap. Main calls it unless GOGC is set
// in the environment: that is the user's choice, and stays.
func AdaptiveGC() {
	debug.SetGCPercent(gcPercent)
	gcSet.Store(gcPercent)
	adaptiveGC.Store(true)
}
