package ring_test

import (
	"runtime/debug"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/systems/ring"
)

// BenchmarkPrefix8 makes live prefixes of the ring with 8 nodes (failures
// disabled, until ring-formed holds): steps to the first live state and
// time per prefix.
func BenchmarkPrefix8(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	var steps, n int64
	for i := 0; b.Loop(); i++ {
		_, ps, err := livecheck.Prefixes(&ring.System, livecheck.PrefixOptions{
			Config: livecheck.Config{Nodes: 8}, Count: 1, Seed: int64(i + 1),
		})
		if err != nil || len(ps) != 1 {
			b.Fatal(err)
		}
		steps += int64(ps[0].FirstLive)
		n++
	}
	b.ReportMetric(float64(steps)/float64(n), "steps-to-live")
	b.ReportMetric(b.Elapsed().Seconds()*1000/float64(n), "ms/prefix")
}
