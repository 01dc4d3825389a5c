package paxos_test

import (
	"runtime/debug"
	"testing"
	"time"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/systems/paxos"
)

// BenchmarkGlobalVsLocal checks the LMC paper's benchmark space (3 nodes,
// one proposal, one value) in both modes in one run, and reports each
// mode's transitions and time and the ratios of global to local.
func BenchmarkGlobalVsLocal(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	cfg := livecheck.Config{Nodes: 3, Params: map[string]string{"proposers": "1"}}
	var gt, lt int64
	var gd, ld time.Duration
	for b.Loop() {
		g, err := livecheck.Check(&paxos.System, livecheck.Options{Config: cfg, Depth: 64, NoWalks: true})
		if err != nil || g.Verdict != livecheck.OK || !g.Exhausted {
			b.Fatal(err, g.Verdict)
		}
		l, err := livecheck.Check(&paxos.System, livecheck.Options{Config: cfg, Mode: "local"})
		if err != nil || l.Verdict != livecheck.OK || !l.Complete {
			b.Fatal(err, l.Verdict)
		}
		gt, lt = g.Stats.Transitions, l.Stats.Transitions
		gd += g.Stats.Elapsed
		ld += l.Stats.Elapsed
	}
	n := float64(b.N)
	b.ReportMetric(float64(gt), "global-transitions")
	b.ReportMetric(float64(lt), "local-transitions")
	b.ReportMetric(float64(gt)/float64(lt), "transitions-ratio")
	b.ReportMetric(gd.Seconds()*1000/n, "global-ms")
	b.ReportMetric(ld.Seconds()*1000/n, "local-ms")
	b.ReportMetric(gd.Seconds()/ld.Seconds(), "time-ratio")
}
