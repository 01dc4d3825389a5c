package check

import (
	"fmt"
	"runtime/metrics"
	"sync"
	"time"
)

// A ProgressLine turns a running check's progress (Options.Progress)
// into a line every few seconds, with the figures TLC and Stateright
// show: depth, distinct states and their rate, the queue, the memory in
// use, the time left in the budget. The command prints them on stderr;
// livecheck.Test logs them under go test -v.
//
//	pl := &check.ProgressLine{Print: func(s string) { fmt.Fprintln(os.Stderr, s) }, Start: time.Now(), Budget: opts.Time}
//	opts.Progress = pl.Report
type ProgressLine struct {
	Print func(line string)
	// Start is when the check started; Budget its time budget (0 or
	// less: none), for the time left.
	Start  time.Time
	Budget time.Duration
	// Every is how often a line is printed, after the first, which
	// comes 2 s in (default 3 s).
	Every time.Duration

	mu     sync.Mutex
	last   time.Time // of the last line
	states int64     // at the last line
}

// Report prints a line for pr, if one is due. A nil line prints nothing.
func (p *ProgressLine) Report(pr Progress) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	every := p.Every
	if every <= 0 {
		every = 3 * time.Second
	}
	now := time.Now()
	if now.Sub(p.Start) < 2*time.Second || now.Sub(p.last) < every {
		return
	}
	since := now.Sub(p.last)
	if p.last.IsZero() {
		since = now.Sub(p.Start)
	}
	p.last = now
	in := now.Sub(p.Start).Round(time.Second)
	left := ""
	if p.Budget > 0 {
		left = fmt.Sprintf(", %s of the budget left", max(p.Budget-now.Sub(p.Start), 0).Round(time.Second))
	}
	st := pr.Stats
	switch pr.Phase {
	case "walks":
		p.Print(fmt.Sprintf("livecheck: walks: %s of %s from the states at the bound, %s in%s",
			human(int64(pr.Walks)), human(int64(pr.Periphery)), in, left))
	case "critical":
		which := ""
		if pr.Periphery > 0 {
			which = fmt.Sprintf(" (walk %s of %s from the bound)", human(int64(pr.Walks)), human(int64(pr.Periphery)))
		}
		p.Print(fmt.Sprintf("livecheck: critical: searching a path of %s steps that never became live for the step after which it is dead%s, %s in%s",
			human(int64(pr.Suspect)), which, in, left))
	case "local":
		p.Print(fmt.Sprintf("livecheck: local: %s node states, %s transitions, %s in use, %s in%s",
			human(st.States), human(st.Transitions), FormatBytes(heapInUse()), in, left))
	default:
		rate := float64(st.States-p.states) / max(since.Seconds(), 1e-3)
		p.states = st.States
		p.Print(fmt.Sprintf("livecheck: search: depth %d done, %s states (%s/s), %s transitions, queue %s, %s in use, %s in%s",
			st.Depth, human(st.States), human(int64(rate)), human(st.Transitions), human(int64(st.Queue)),
			FormatBytes(heapInUse()), in, left))
	}
}

// human writes n with a k, M or G suffix past a thousand: 1.2M, 340k.
func human(n int64) string {
	v := float64(n)
	for _, u := range []string{"", "k", "M", "G", "T"} {
		if v < 1000 || u == "T" {
			if u == "" {
				return fmt.Sprint(n)
			}
			if v < 10 {
				return fmt.Sprintf("%.1f%s", v, u)
			}
			return fmt.Sprintf("%.0f%s", v, u)
		}
		v /= 1000
	}
	return fmt.Sprint(n)
}

// heapInUse is the memory the heap's live and not yet swept objects hold.
func heapInUse() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}
