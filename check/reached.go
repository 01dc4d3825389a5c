package check

import (
	"slices"

	"github.com/livecheck/livecheck/coverage"
	"github.com/livecheck/livecheck/internal/lines"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
)

// searchReached takes what the exhaustive search found of the
// reachability properties and the handlers it ran.
func (c *checker) searchReached(sr *search.Result) {
	sum := sr.Coverage.Summary()
	if len(c.prefix) == 0 {
		sum.Init += int64(c.s0.N()) // the initial state's, which the search was given
	}
	c.res.Coverage = &sum
	for j, r := range sr.Sometimes {
		if r.Depth >= 0 {
			c.res.Sometimes[j].Reached, c.res.Sometimes[j].Step = true, len(c.prefix)+r.Depth
		}
	}
}

// A walkTally is what one walk from the periphery ran and reached: the
// handlers, and for each reachability property the search did not reach
// the first step of the walk at which it held (-1: none).
type walkTally struct {
	cov   coverage.Counter
	reach []int
	steps int
}

// newWalkTally returns a tally for a walker, and the Visit function that
// fills it, or nils when nothing is to be tallied.
func (c *checker) newWalkTally() (*walkTally, func(*sim.State, *sim.StepInfo)) {
	// A walker writes its tally at every step: on lines of its own (see
	// newPeriWalker).
	t := lines.New[walkTally]()
	t.reach = make([]int, len(c.some))
	// Only the properties the search left unreached are evaluated, each
	// until the walk reaches it.
	var todo []int
	for j := range c.some {
		if !c.res.Sometimes[j].Reached {
			todo = append(todo, j)
		}
	}
	return t, func(s *sim.State, info *sim.StepInfo) {
		t.steps++
		t.cov.Event(&info.Event, info.Msg, info.Errors)
		for _, j := range todo {
			if t.reach[j] < 0 && c.some[j].IsReached(s) {
				t.reach[j] = t.steps
			}
		}
	}
}

// reset readies t for a walk.
func (t *walkTally) reset() {
	t.cov.Reset()
	t.steps = 0
	for j := range t.reach {
		t.reach[j] = -1
	}
}

// clone copies what a walk tallied, to hand it over with the walk.
func (t *walkTally) clone() *walkTally {
	return &walkTally{cov: t.cov.Clone(), reach: slices.Clone(t.reach)}
}

// takeWalk adds a walk's tally, in periphery order: base is the length
// of the path to the state it started from.
func (c *checker) takeWalk(t *walkTally, base int) {
	if t == nil {
		return
	}
	if c.walkCov == nil {
		c.walkCov = &coverage.Counter{}
	}
	c.walkCov.Add(&t.cov)
	for j, n := range t.reach {
		r := &c.res.Sometimes[j]
		if n >= 0 && !r.Reached {
			r.Reached, r.ByWalk, r.Step = true, true, len(c.prefix)+base+n
		}
	}
}

// walksReached records the walks' coverage once they are done.
func (c *checker) walksReached() {
	if c.walkCov != nil {
		sum := c.walkCov.Summary()
		c.res.WalkCoverage = &sum
	}
}
