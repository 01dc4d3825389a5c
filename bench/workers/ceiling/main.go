// Command ceiling measures how much more work a machine does on N cores
// than on one, with nothing of livecheck in the way: the most a parallel
// search can gain there. It runs three loops on 1 to N goroutines at
// once, each goroutine with the same work, alternating the counts round
// by round, and prints each count's speedup (the work done per second
// over one goroutine's), the median of the rounds:
//
//   - alu: a chain of shifts and xors in registers, no memory;
//   - cache: dependent loads at random in a 1 MB table of the
//     goroutine's own (a cache's size);
//   - memory: dependent loads at random in a 256 MB table they share
//     (past any cache), as a search's visited set and states are.
//
// A model checker's step is mostly the last two: on a machine whose
// cores share a cache or memory with each other (or with other tenants
// of a virtual machine's host), the memory loops fall short of N where
// the alu loop reaches it, and so does every search.
//
//	go run ./bench/workers/ceiling                 (1 and 2 goroutines, 5 rounds)
//	go run ./bench/workers/ceiling --workers 1,2,4,8,16 --rounds 3
//	go run ./bench/workers/ceiling --loops cache --rounds 1   (one loop, as
//	                                               curve.sh's CEILING=1 runs it)
package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
)

var sink []uint64

func alu(id, n int) {
	x := uint64(id) + 88172645463325252
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	sink[id*8] = x
}

// chase follows n links of t from a start of its own.
func chase(id, n int, t []uint32) {
	j := uint32(id*7) % uint32(len(t))
	for range n {
		j = t[j]
	}
	sink[id*8] = uint64(j)
}

// cycle returns a table of n links that visit every slot once, in an
// order that defeats the prefetcher.
func cycle(n int, seed uint64) []uint32 {
	order := make([]uint32, n)
	for i := range order {
		order[i] = uint32(i)
	}
	x := seed | 1
	for i := n - 1; i > 0; i-- {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		j := int(x % uint64(i+1))
		order[i], order[j] = order[j], order[i]
	}
	t := make([]uint32, n)
	for i := range order {
		t[order[i]] = order[(i+1)%n]
	}
	return t
}

func main() {
	workersFlag := pflag.String("workers", "1,2", "the goroutine counts, comma-separated, 1 first")
	rounds := pflag.Int("rounds", 5, "rounds, each every count once")
	loopsFlag := pflag.String("loops", "alu,cache,memory", "the loops to run, comma-separated: alu, cache, memory")
	pflag.Parse()
	want := map[string]bool{}
	for _, f := range strings.Split(*loopsFlag, ",") {
		switch f = strings.TrimSpace(f); f {
		case "alu", "cache", "memory":
			want[f] = true
		default:
			fmt.Fprintf(os.Stderr, "ceiling: --loops: no loop %q (valid: alu, cache, memory, comma-separated)\n", f)
			os.Exit(2)
		}
	}
	var counts []int
	for _, f := range strings.Split(*workersFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "ceiling: --workers: %q is not a count of goroutines (valid: positive integers, comma-separated, 1 first)\n", f)
			os.Exit(2)
		}
		counts = append(counts, n)
	}
	if counts[0] != 1 || *rounds < 1 {
		fmt.Fprintln(os.Stderr, "ceiling: --workers must start with 1, and --rounds be at least 1")
		os.Exit(2)
	}
	most := slices.Max(counts)
	sink = make([]uint64, 8*most)
	// The tables only for the loops that read them: the shared one takes
	// a second to make.
	own := make([][]uint32, most)
	if want["cache"] {
		for i := range own {
			own[i] = cycle(1<<18, uint64(i)+1) // 1 MB
		}
	}
	var shared []uint32
	if want["memory"] {
		shared = cycle(1<<26, 99) // 256 MB
	}
	loops := []struct {
		name string
		run  func(id int)
	}{
		{"alu", func(id int) { alu(id, 1<<29) }},
		{"cache", func(id int) { chase(id, 1<<26, own[id]) }},
		{"memory", func(id int) { chase(id, 1<<23, shared) }},
	}
	fmt.Printf("| loop | goroutines | speedup (median of %d rounds) | rounds |\n| --- | --- | --- | --- |\n", *rounds)
	for _, l := range loops {
		if !want[l.name] {
			continue
		}
		took := map[int][]time.Duration{}
		for range *rounds {
			for _, g := range counts {
				start := time.Now()
				var wg sync.WaitGroup
				for id := range g {
					wg.Go(func() { l.run(id) })
				}
				wg.Wait()
				took[g] = append(took[g], time.Since(start))
			}
		}
		for _, g := range counts {
			var ratios []float64
			for r := range *rounds {
				ratios = append(ratios, float64(g)*took[1][r].Seconds()/took[g][r].Seconds())
			}
			words := make([]string, len(ratios))
			for i, x := range ratios {
				words[i] = fmt.Sprintf("%.2f", x)
			}
			slices.Sort(ratios)
			fmt.Printf("| %s | %d | %.2fx | %s |\n", l.name, g, ratios[len(ratios)/2], strings.Join(words, " "))
		}
	}
}
