package kvstore_test

import (
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/systems/kvstore"
)

func TestScratch(t *testing.T) {
	for _, bug := range []string{"", "read-backup", "early-ack", "stale-lease"} {
		cfg := livecheck.Config{}
		if bug != "" {
			cfg.Bugs = []string{bug}
		}
		res, err := livecheck.Check(&kvstore.System, livecheck.Options{Time: livecheck.NoTimeLimit, Config: cfg, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s %s states %d depth %d\n%s", bug, res.Verdict, res.Property, res.Stats.States, len(res.Path), res.Message)
	}
}
