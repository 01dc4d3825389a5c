package systems_test

import (
	"os"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/systems"
)

func TestZZProf(t *testing.T) {
	name := os.Getenv("PROF_SYS")
	if name == "" {
		t.Skip()
	}
	if os.Getenv("PROF_NOADAPT") == "" {
		check.AdaptiveGC()
	}
	w, _ := strconv.Atoi(os.Getenv("PROF_W"))
	for _, sys := range systems.All() {
		if sys.Name != name {
			continue
		}
		size := twoWorkerSizes[name]
		opts := livecheck.Options{Config: size.cfg, Depth: size.depth, Time: livecheck.NoTimeLimit, NoWalks: true, Workers: w, Reduce: os.Getenv("PROF_REDUCE")}
		if d, _ := strconv.Atoi(os.Getenv("PROF_DEPTH")); d > 0 {
			opts.Depth = d
		}
		warm := opts
		warm.MaxStates = 1 << 12
		livecheck.Check(sys, warm)
		f, _ := os.Create(os.Getenv("PROF_OUT"))
		pprof.StartCPUProfile(f)
		start := time.Now()
		res, err := livecheck.Check(sys, opts)
		pprof.StopCPUProfile()
		f.Close()
		t.Logf("%s w=%d: %v %d states %v", name, w, err, res.Stats.States, time.Since(start))
	}
}
