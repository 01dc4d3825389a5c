package randtree_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/randtree"
)

type xw struct {
	w     *sim.World
	m     *livecheck.Model
	rng   *rand.Rand
	buf   []sim.Event
	wts   map[sim.Kind]int
}

func newXW(t testing.TB, cfg livecheck.Config, seed uint64) *xw {
	_, m, err := randtree.System.Model(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sim.NewWorld(m.Spec)
	if err != nil {
		t.Fatal(err)
	}
	x := &xw{w: w, m: m, rng: rand.New(rand.NewPCG(seed, 0)), wts: map[sim.Kind]int{sim.Deliver: 4, sim.Timer: 1, sim.App: 8, sim.Reset: 1, sim.SocketError: 1}}
	w.Chooser = func(n int) int { return x.rng.IntN(n) }
	return x
}

func (x *xw) live(s *sim.State) bool {
	for i := range x.m.Properties {
		p := &x.m.Properties[i]
		if p.Kind == properties.Liveness && !p.IsLive(s) {
			return false
		}
	}
	return true
}
func (x *xw) safe(s *sim.State) error {
	for i := range x.m.Properties {
		p := &x.m.Properties[i]
		if p.Kind == properties.Safety {
			if err := p.CheckSafety(s); err != nil {
				return fmt.Errorf("%s: %v", p.Name, err)
			}
		}
	}
	return nil
}
func (x *xw) step(s *sim.State) (*sim.State, sim.Event, error) {
	x.buf = x.w.Enabled(s, x.buf[:0])
	total := 0
	for _, e := range x.buf {
		total += x.wts[e.Kind]
	}
	r := x.rng.IntN(total)
	for _, e := range x.buf {
		r -= x.wts[e.Kind]
		if r < 0 {
			n, err := x.w.Apply(s, e, nil)
			return n, e, err
		}
	}
	panic("unreachable")
}

func TestExplore(t *testing.T) {
	if os.Getenv("EXPLORE") == "" {
		t.Skip()
	}
	type tcase = struct {
		name string
		cfg  livecheck.Config
	}
	cases := []tcase{
		{"ok3", livecheck.Config{Nodes: 3}},
		{"ok4", livecheck.Config{Nodes: 4}},
		{"ok5", livecheck.Config{Nodes: 5}},
		{"ok4all", livecheck.Config{Nodes: 4, Params: map[string]string{"peers": "all"}}},
		{"ok4d1", livecheck.Config{Nodes: 4, Params: map[string]string{"degree": "1"}}},
		{"ok4r1", livecheck.Config{Nodes: 4, Budget: sim.Budget{Resets: 1}}},
		{"ok4e1", livecheck.Config{Nodes: 4, Budget: sim.Budget{Errors: 1}}},
		{"ok4r2e2", livecheck.Config{Nodes: 4, Budget: sim.Budget{Resets: 2, Errors: 2}}},
		{"ok4allr2e2", livecheck.Config{Nodes: 4, Params: map[string]string{"peers": "all"}, Budget: sim.Budget{Resets: 2, Errors: 2}}},
		{"ok5allr2e2", livecheck.Config{Nodes: 5, Params: map[string]string{"peers": "all", "degree": "1"}, Budget: sim.Budget{Resets: 2, Errors: 2}}},
		{"rt3", livecheck.Config{Nodes: 4, Bugs: []string{"RT3"}}},
		{"rt10", livecheck.Config{Nodes: 4, Bugs: []string{"RT10"}}},
		{"rt10all", livecheck.Config{Nodes: 4, Bugs: []string{"RT10"}, Params: map[string]string{"peers": "all"}}},
		{"rt10e1", livecheck.Config{Nodes: 4, Bugs: []string{"RT10"}, Budget: sim.Budget{Errors: 1}}},
	}
	if os.Getenv("STRESS") != "" {
		cases = nil
		for _, n := range []int{3, 4, 5, 6} {
			for _, peers := range []string{"zero", "all"} {
				for _, d := range []string{"1", "2", "3"} {
					cases = append(cases, tcase{fmt.Sprintf("n%d-%s-d%s", n, peers, d), livecheck.Config{Nodes: n, Params: map[string]string{"peers": peers, "degree": d}, Budget: sim.Budget{Resets: 3, Errors: 3}}})
				}
			}
		}
	}
	for _, tc := range cases {
		start := time.Now()
		seeds := 1000
		maxS, sum, notLive, totalSteps := 0, 0, 0, 0
		for seed := 1; seed <= seeds; seed++ {
			x := newXW(t, tc.cfg, uint64(seed))
			if os.Getenv("SLOW") != "" {
				x.wts[sim.Deliver] = 1
				x.wts[sim.Reset] = 1
			}
			s, err := x.w.Initial()
			if err != nil {
				t.Fatal(err)
			}
			steps := 0
			live := false
			for ; steps < 20000; steps++ {
				if x.live(s) && s.Used() == x.m.Spec.Budget {
					live = true
					break
				}
				var ev sim.Event
				s, ev, err = x.step(s)
				if err != nil {
					t.Fatalf("%s seed %d step %d %v: %v", tc.name, seed, steps, ev, err)
				}
				if err := x.safe(s); err != nil {
					t.Errorf("LOOP %s seed %d step %d: %v\n%s", tc.name, seed, steps, err, s.Dump())
					break
				}
			}
			totalSteps += steps
			if live {
				sum += steps
				maxS = max(maxS, steps)
			} else {
				notLive++
				if notLive <= 2 {
					t.Logf("%s seed %d not live:\n%s", tc.name, seed, s.Dump())
				}
			}
		}
		el := time.Since(start)
		t.Logf("SUMMARY %s: not live %d/%d, steps to live mean %.1f max %d; %v, %.2fus/step", tc.name, notLive, seeds, float64(sum)/float64(seeds-notLive), maxS, el, float64(el.Microseconds())/float64(totalSteps))
	}
}

func TestTrace(t *testing.T) {
	if os.Getenv("TRACE") == "" {
		t.Skip()
	}
	var seed int
	fmt.Sscan(os.Getenv("TRACE"), &seed)
	var nodes int
	var peers, deg string
	fmt.Sscan(os.Getenv("CFG"), &nodes, &peers, &deg)
	cfg := livecheck.Config{Nodes: nodes, Params: map[string]string{"peers": peers, "degree": deg}, Budget: sim.Budget{Resets: 3, Errors: 3}}
	x := newXW(t, cfg, uint64(seed))
	if os.Getenv("SLOW") != "" {
		x.wts[sim.Deliver] = 1
		x.wts[sim.Reset] = 1
	}
	x.w.Record = true
	s, _ := x.w.Initial()
	for steps := 0; steps < 20000; steps++ {
		x.buf = x.w.Enabled(s, x.buf[:0])
		total := 0
		for _, e := range x.buf {
			total += x.wts[e.Kind]
		}
		r := x.rng.IntN(total)
		var ev sim.Event
		for _, e := range x.buf {
			r -= x.wts[e.Kind]
			if r < 0 {
				ev = e
				break
			}
		}
		desc := x.w.Describe(s, ev)
		n, err := x.w.Apply(s, ev, nil)
		if err != nil {
			t.Fatal(err)
		}
		info := x.w.Last()
		fmt.Printf("%3d %-40s sent: %s %v\n", steps, desc, sim.DescribeSent(info.Sent), info.Logs)
		for i := range n.N() {
			if n.NodeFingerprint(sim.NodeID(i)) != s.NodeFingerprint(sim.NodeID(i)) {
				fmt.Printf("      %d: %s\n", i, sim.DumpNode(n, sim.NodeID(i)))
			}
		}
		s = n
		if err := x.safe(s); err != nil {
			fmt.Println(err)
			return
		}
	}
}
