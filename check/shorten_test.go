package check_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/systems/ring"
)

// Issue 40: shortening a dead path tries its removals on every worker,
// and shortens it to the same path whatever their number, with the same
// tries and dead tests counted; with dead tests allowed too, whose
// budget each try consults (a weaker dead test than the check's, which
// would take seconds each). Not parallel: it sets ShortenDeadTests.
func TestShortenOnWorkers(t *testing.T) {
	res, err := check.Check(&ring.System, check.Options{Config: protocol.Config{Nodes: 3, Bugs: []string{"rejoin-self"}}, Workers: 1, Time: check.NoTimeLimit})
	if err != nil {
		t.Fatal(err)
	}
	cx := res.Critical
	if res.Verdict != check.LivenessViolation || cx == nil || res.Shortened == nil {
		t.Fatalf("%s (%s): want a liveness violation with a shortened dead path", res.Verdict, res.Message)
	}
	defer func(n int) { check.ShortenDeadTests = n }(check.ShortenDeadTests)
	weaker := *res
	wcx := *cx
	wcx.EndTest.Walks, wcx.EndTest.WalkDepth = 30, 1000
	weaker.Critical = &wcx
	for _, deadTests := range []int{0, 2} {
		check.ShortenDeadTests = deadTests
		res := res
		if deadTests > 0 {
			res = &weaker
		}
		var one *check.Shortened
		for _, workers := range []int{1, 2, 4} {
			start := time.Now()
			sh := check.Shorten(&ring.System, res, workers)
			if sh == nil {
				t.Fatalf("%d dead tests, %d workers: not shortened", deadTests, workers)
			}
			t.Logf("%d dead tests, %d workers: %d of %d steps kept, %d tries, %d dead tests, in %v", deadTests, workers, len(sh.Kept), cx.Step-1, sh.Tries, sh.DeadTests, time.Since(start))
			if len(sh.Kept) >= cx.Step-1 || len(sh.Path) != len(sh.Kept)+1 {
				t.Errorf("%d dead tests, %d workers: %d of %d steps kept, a path of %d", deadTests, workers, len(sh.Kept), cx.Step-1, len(sh.Path))
			}
			if sh.DeadTests != deadTests {
				t.Errorf("%d dead tests allowed, %d workers: %d run", deadTests, workers, sh.DeadTests)
			}
			if one == nil {
				one = sh
				if deadTests == 0 && !reflect.DeepEqual(sh, res.Shortened) {
					t.Errorf("shortened on its own:\n%+v\nby the check:\n%+v", sh, res.Shortened)
				}
				continue
			}
			if !reflect.DeepEqual(sh.Kept, one.Kept) || sh.Tries != one.Tries || sh.DeadTests != one.DeadTests || !reflect.DeepEqual(sh.Path, one.Path) || !reflect.DeepEqual(sh.Steps, one.Steps) {
				t.Errorf("%d dead tests: on %d workers kept %v, %d tries, %d dead tests, path %v; on 1 kept %v, %d tries, %d dead tests, path %v",
					deadTests, workers, sh.Kept, sh.Tries, sh.DeadTests, sh.Path, one.Kept, one.Tries, one.DeadTests, one.Path)
			}
		}
	}
}
