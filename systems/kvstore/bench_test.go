package kvstore_test

import (
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/systems/kvstore"
)

// BenchmarkLinearizable reports the search of the correct store with 3
// clients x 2 operations at the default depth, with the history and the
// property linearizable (on) and without either (off): issue 38 asks
// that on cost at most 2x the time and 3x the states of off.
//
//	go test ./systems/kvstore -run '^$' -bench Linearizable -benchtime 3x
func BenchmarkLinearizable(b *testing.B) {
	for _, h := range []string{"off", "on"} {
		b.Run("history="+h, func(b *testing.B) {
			cfg := livecheck.Config{Params: map[string]string{"clients": "3", "ops": "2", "history": h}}
			var states int64
			for b.Loop() {
				res, err := livecheck.Check(&kvstore.System, livecheck.Options{Time: livecheck.NoTimeLimit, Config: cfg, Seed: 1, Workers: 1, NoWalks: true})
				if err != nil {
					b.Fatal(err)
				}
				if res.Verdict != livecheck.OK {
					b.Fatalf("%s: %s", res.Verdict, res.Message)
				}
				states = res.Stats.States
			}
			b.ReportMetric(float64(states), "states")
		})
	}
}
