package check_test

import (
	"testing"
	"time"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/systems/lcr"
)

// Options{} has the command's time budget, as its doc says; NoTimeLimit
// (any negative Time) is none. A shard has none, and refuses one.
func TestTimeBudgetDefaults(t *testing.T) {
	shard := search.Shard{Index: 0, Count: 2}
	for _, tc := range []struct {
		opts check.Options
		want time.Duration
	}{
		{check.Options{}, 60 * time.Second},
		{check.Options{Time: 5 * time.Second}, 5 * time.Second},
		{check.Options{Time: check.NoTimeLimit}, check.NoTimeLimit},
		{check.Options{Time: -time.Second}, check.NoTimeLimit},
		{check.Options{Shard: shard}, check.NoTimeLimit},
	} {
		o := tc.opts
		o.Fill(&lcr.System)
		if o.Time != tc.want {
			t.Errorf("%+v: Time %v, want %v", tc.opts.Time, o.Time, tc.want)
		}
	}
	cfg := protocol.Config{Nodes: 3}
	if _, err := check.Check(&lcr.System, check.Options{Config: cfg, Shard: shard}); err != nil {
		t.Errorf("a shard with no budget: %v", err)
	}
	_, err := check.Check(&lcr.System, check.Options{Config: cfg, Shard: shard, Time: time.Minute})
	if want := "a shard runs without a time budget, so that its result does not depend on the machine"; err == nil || err.Error() != want {
		t.Errorf("a shard with a budget: %v, want %s", err, want)
	}
}
