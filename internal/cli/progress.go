package cli

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progressEvery is how often a line says that long work still runs,
// after the first, as check.ProgressLine does for a check.
const progressEvery = 3 * time.Second

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
