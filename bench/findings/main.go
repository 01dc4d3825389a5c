// Command findings measures livecheck's finding power on the bundled
// systems and prints it as the tables of docs/systems.md: for every bug, the command
// that finds it (`livecheck check SYS --bug B`, nothing else), how long it
// took (median of --runs), in wall time and in CPU time (user and system
// time of the command's process: on a shared machine the wall time grows
// with the load, the CPU time much less), the property it broke and, for
// a liveness bug, the critical step; for every correct version, the seeds over which it
// stays silent at each configuration its bugs declare.
//
// It runs the command itself, built from this module, as a user would, each
// run in a fresh temporary directory. It is run on demand, not in CI:
//
//	go run ./bench/findings                 # every system, 3 runs, seeds 1-30
//	go run ./bench/findings --systems paxos --seeds 5
//	go run ./bench/findings --silence-flags "--depth 8"   # shallower sweeps
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/livecheck/livecheck/systems"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "findings:", err)
		os.Exit(2)
	}
}

// result is the part of `check --json` the table reads.
type result struct {
	Result   string `json:"result"`
	Property string `json:"property"`
	Message  string `json:"message"`
	Complete bool   `json:"complete"`
	FromBugs []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"from_bugs"`
	Critical *struct {
		Step  int    `json:"step"`
		Event string `json:"event"`
		Case  string `json:"case"`
	} `json:"critical"`
}

type bugRow struct {
	sys, bug string
	args     []string        // the configuration the bug's needs gave, as flags
	times    []time.Duration // wall time of each run
	cpu      []time.Duration // CPU time of each run (user + system)
	res      result
	err      error
}

type silenceRow struct {
	sys    string
	args   []string
	counts map[string]int // result -> seeds
	bad    []string       // "seed S: violation of P (message)"
	err    error
}

func run() error {
	fs := pflag.NewFlagSet("findings", pflag.ContinueOnError)
	bin := fs.String("bin", "", "the livecheck binary to measure (default: built from this module into a temporary directory)")
	runs := fs.Int("runs", 3, "runs of each bug's check; the table gives the median time")
	seeds := fs.Int("seeds", 30, "the correct versions are checked on seeds 1 to this (0: not at all)")
	only := fs.StringSlice("systems", nil, "systems to measure (default: every bundled one)")
	jobs := fs.Int("jobs", runtime.NumCPU(), "checks of the correct versions run at once (the bugs' timed runs run one at a time)")
	extra := fs.String("silence-flags", "", "more flags for the checks of the correct versions, as one string (\"--depth 8\"); the table shows them")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			os.Exit(0)
		}
		return err
	}
	if *runs < 1 || *seeds < 0 || *jobs < 1 {
		return fmt.Errorf("--runs and --jobs must be at least 1 and --seeds at least 0")
	}
	for _, name := range *only {
		if _, err := systems.Lookup(name); err != nil {
			return err
		}
	}
	if *bin == "" {
		dir, err := os.MkdirTemp("", "findings-bin")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		*bin = filepath.Join(dir, "livecheck")
		build := exec.Command("go", "build", "-o", *bin, "./cmd/livecheck")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building the command: %v (run from the module's root)", err)
		}
	}

	var rows []*bugRow
	for _, sys := range systems.All() {
		if len(*only) > 0 && !slices.Contains(*only, sys.Name) {
			continue
		}
		for _, b := range sys.Bugs {
			name := b.Name
			if b.Arg != "" {
				if b.Example == "" {
					fmt.Fprintf(os.Stderr, "findings: %s bug %s takes a value and gives no Example: left out\n", sys.Name, b.Name)
					continue
				}
				name += "=" + b.Example
			}
			rows = append(rows, &bugRow{sys: sys.Name, bug: name})
		}
	}
	for _, r := range rows {
		for i := 0; i < *runs; i++ {
			fmt.Fprintf(os.Stderr, "check %s --bug %s (run %d of %d)\n", r.sys, r.bug, i+1, *runs)
			start := time.Now()
			res, cpu, err := check(*bin, "check", r.sys, "--bug", r.bug, "--json")
			r.times = append(r.times, time.Since(start))
			r.cpu = append(r.cpu, cpu)
			if err != nil {
				r.err = err
				break
			}
			r.res = res
		}
		for _, s := range r.res.FromBugs {
			r.args = append(r.args, "--"+s.Name, s.Value)
		}
	}

	var silence []*silenceRow
	if *seeds > 0 {
		seen := map[string]bool{}
		for _, r := range rows {
			key := r.sys + " " + strings.Join(r.args, " ")
			if r.err != nil || seen[key] {
				continue
			}
			seen[key] = true
			silence = append(silence, &silenceRow{sys: r.sys, args: r.args, counts: map[string]int{}})
		}
		for _, s := range silence {
			s.args = append(slices.Clip(s.args), strings.Fields(*extra)...)
		}
		sweep(*bin, silence, *seeds, *jobs)
	}

	host, _ := os.Hostname()
	fmt.Printf("Measured %s on %s (%d cores, %s), %s; median of %d runs.\n\n",
		time.Now().Format("2006-01-02"), cpuModel(), runtime.NumCPU(), host, runtime.Version(), *runs)
	fmt.Println("| command | found in (wall) | CPU | property | critical step |")
	fmt.Println("| --- | --- | --- | --- | --- |")
	failed := false
	for _, r := range rows {
		cmd := fmt.Sprintf("`check %s --bug %s`", r.sys, r.bug)
		if r.err != nil {
			failed = true
			fmt.Printf("| %s | %v | | | |\n", cmd, r.err)
			continue
		}
		if r.res.Result != "safety-violation" && r.res.Result != "liveness-violation" {
			failed = true
		}
		crit := ""
		if c := r.res.Critical; c != nil {
			crit = fmt.Sprintf("step %d, `%s` (%s)", c.Step, c.Event, c.Case)
		}
		fmt.Printf("| %s | %s | %s | %s (%s) | %s |\n", cmd, median(r.times), median(r.cpu), r.res.Property, strings.TrimSuffix(r.res.Result, "-violation"), crit)
	}
	if len(silence) > 0 {
		fmt.Printf("\nThe correct versions, at each configuration the bugs declare, seeds 1-%d:\n\n", *seeds)
		fmt.Println("| command | seeds | result |")
		fmt.Println("| --- | --- | --- |")
		for _, s := range silence {
			cmd := fmt.Sprintf("`check %s %s --seed S`", s.sys, strings.Join(s.args, " "))
			if s.err != nil {
				failed = true
				fmt.Printf("| %s | | %v |\n", cmd, s.err)
				continue
			}
			var words []string
			for _, k := range slices.Sorted(maps.Keys(s.counts)) {
				words = append(words, fmt.Sprintf("%s %d", k, s.counts[k]))
			}
			if len(s.bad) > 0 {
				failed = true
				words = append(words, strings.Join(s.bad, "; "))
			}
			fmt.Printf("| %s | 1-%d | %s |\n", cmd, *seeds, strings.Join(words, ", "))
		}
	}
	if failed {
		return fmt.Errorf("a bug was not found, or a correct version was not silent: see the table")
	}
	return nil
}

// sweep checks each correct configuration on seeds 1 to n, jobs at a time.
func sweep(bin string, rows []*silenceRow, n, jobs int) {
	type job struct {
		row  *silenceRow
		seed int
	}
	work := make(chan job)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				args := append([]string{"check", j.row.sys}, j.row.args...)
				args = append(args, "--seed", fmt.Sprint(j.seed), "--json")
				res, _, err := check(bin, args...)
				mu.Lock()
				switch {
				case err != nil:
					j.row.err = err
				case res.Result == "ok" || res.Result == "inconclusive":
					j.row.counts[res.Result]++
				default:
					j.row.bad = append(j.row.bad, fmt.Sprintf("seed %d: %s of %s (%s)", j.seed, res.Result, res.Property, res.Message))
				}
				mu.Unlock()
			}
		}()
	}
	for _, r := range rows {
		fmt.Fprintf(os.Stderr, "check %s %s, seeds 1-%d\n", r.sys, strings.Join(r.args, " "), n)
		for s := 1; s <= n; s++ {
			work <- job{r, s}
		}
	}
	close(work)
	wg.Wait()
}

// check runs the command in a fresh directory (it writes its traces under
// livecheck-out/) and reads its JSON report, with the CPU time the
// command's process used (user and system, all its threads). Exit status
// 0, 1 and 3 are results; anything else is an error.
func check(bin string, args ...string) (result, time.Duration, error) {
	var res result
	dir, err := os.MkdirTemp("", "findings-run")
	if err != nil {
		return res, 0, err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var cpu time.Duration
	if ps := cmd.ProcessState; ps != nil {
		cpu = ps.UserTime() + ps.SystemTime()
	}
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() == 2 || ee.ExitCode() > 3) {
		return res, cpu, fmt.Errorf("livecheck %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return res, cpu, fmt.Errorf("livecheck %s: reading its JSON: %v", strings.Join(args, " "), err)
	}
	return res, cpu, nil
}

func median(ts []time.Duration) string {
	s := slices.Clone(ts)
	slices.Sort(s)
	d := s[len(s)/2]
	if d < time.Second {
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// cpuModel is the processor's name as Linux gives it, or the
// architecture.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}
