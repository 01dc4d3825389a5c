package cli

import (
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"time"

	"github.com/livecheck/livecheck/check"
)

// progressLine prints a line on stderr every few seconds of a long check, with
// the figures TLC and Stateright show: depth, distinct states and their
// rate, the queue, the memory in use, the time left in the budget.
type progressLine struct {
	w      io.Writer
	start  time.Time
	budget time.Duration
	last   time.Time // of the last line
	states int64     // at the last line
}

// progressEvery is how often a line is printed, after the first.
const progressEvery = 3 * time.Second

func (p *progressLine) report(pr check.Progress) {
	if p == nil {
		return
	}
	now := time.Now()
	if now.Sub(p.start) < 2*time.Second || now.Sub(p.last) < progressEvery {
		return
	}
	since := now.Sub(p.last)
	if p.last.IsZero() {
		since = now.Sub(p.start)
	}
	p.last = now
	left := ""
	if p.budget > 0 {
		left = fmt.Sprintf(", %s of the budget left", max(p.budget-now.Sub(p.start), 0).Round(time.Second))
	}
	st := pr.Stats
	switch pr.Phase {
	case "walks":
		fmt.Fprintf(p.w, "livecheck: walks: %s of %s from the states at the bound, %s in%s\n",
			human(int64(pr.Walks)), human(int64(pr.Periphery)), now.Sub(p.start).Round(time.Second), left)
	case "critical":
		fmt.Fprintf(p.w, "livecheck: critical: searching a path of %s steps that never became live for the step after which it is dead (walk %s of %s from the bound), %s in%s\n",
			human(int64(pr.Suspect)), human(int64(pr.Walks)), human(int64(pr.Periphery)), now.Sub(p.start).Round(time.Second), left)
	case "local":
		fmt.Fprintf(p.w, "livecheck: local: %s node states, %s transitions, %s in use, %s in%s\n",
			human(st.States), human(st.Transitions), check.FormatBytes(heapInUse()), now.Sub(p.start).Round(time.Second), left)
	default:
		rate := float64(st.States-p.states) / max(since.Seconds(), 1e-3)
		p.states = st.States
		fmt.Fprintf(p.w, "livecheck: search: depth %d done, %s states (%s/s), %s transitions, queue %s, %s in use, %s in%s\n",
			st.Depth, human(st.States), human(int64(rate)), human(st.Transitions), human(int64(st.Queue)),
			check.FormatBytes(heapInUse()), now.Sub(p.start).Round(time.Second), left)
	}
}

// working returns stop, which the work asks every few milliseconds, with
// a line on w every few seconds of long work that says it still runs (w
// nil: no line).
func working(w io.Writer, what string, stop func() bool) func() bool {
	start := time.Now()
	var last time.Time
	return func() bool {
		if now := time.Now(); w != nil && now.Sub(start) >= 2*time.Second && now.Sub(last) >= progressEvery {
			last = now
			fmt.Fprintf(w, "livecheck: %s, %s in\n", what, now.Sub(start).Round(time.Second))
		}
		return stop()
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

// isTerminal says whether w is a terminal: progress then never mixes with
// JSON that a program reads from a pipe.
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
