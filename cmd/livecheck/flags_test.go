package main

import (
	"strings"
	"testing"
)

// Issue 25, item 12: a flag that means nothing is a usage error (exit 2,
// one line naming the flag, the value and what is valid), or, where the
// value is legal but has no effect, a warning; a misspelt flag suggests
// the nearest, and another system's flag says which systems have it.
func TestMeaninglessFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string // exactly
		header string // the report's first line, where it runs
	}{
		// --workers 0 is the default, the number of cores, as --help says.
		{[]string{"check", "lcr", "--workers", "0"}, exitOK, "",
			"lcr, 3 nodes, no bugs, failures: 0 resets, 0 drops, 0 socket errors; depth 4, seed 1"},
		{[]string{"check", "lcr", "--time", "-1s"}, exitUsage,
			"livecheck check: --time -1s: a budget is positive, or 0 for none\n", ""},
		{[]string{"check", "lcr", "--time", "1000000h"}, exitUsage,
			"livecheck check: --time 1000000h0m0s: at most 10000h (over a year); 0 for no budget\n", ""},
		{[]string{"check", "lcr", "--min-depth", "0"}, exitUsage,
			"livecheck check: --min-depth must be at least 1 and at most the depth bound (--depth 4), not 0\n", ""},
		{[]string{"check", "lcr", "--min-depth", "5"}, exitUsage,
			"livecheck check: --min-depth must be at least 1 and at most the depth bound (--depth 4), not 5\n", ""},
		{[]string{"check", "lcr", "--min-depth", "4"}, exitOK, "",
			"lcr, 3 nodes, no bugs, failures: 0 resets, 0 drops, 0 socket errors; depth 4, seed 1"},
		{[]string{"check", "lcr", "--weights", "deliver=1,deliver=2"}, exitUsage,
			"livecheck check: --weights: the weight of deliver is given twice: deliver=1 and deliver=2\n", ""},
		{[]string{"check", "lcr", "--weights", "app=0,deliver=0,timer=0,drop=0,duplicate=0,socket-error=0,reset=0,partition=0,heal=0,crash=0"}, exitUsage,
			"livecheck check: --weights: every weight is 0: give some kind a positive weight (a walk draws the enabled events in proportion to their kinds' weights)\n", ""},
		{[]string{"check", "lcr", "--rounds", "3"}, exitUsage,
			"livecheck check: --rounds is a flag of --mode local and compare, not of --mode global\n", ""},
		{[]string{"check", "lcr", "--max-verify", "3"}, exitUsage,
			"livecheck check: --max-verify is a flag of --mode local and compare, not of --mode global\n", ""},
		// A failure the transport cannot have: a warning, and the header
		// counts none.
		{[]string{"check", "lcr", "--drops", "1"}, exitOK,
			"livecheck: warning: --drops 1 has no effect: lcr's messages travel on streams, where none is dropped or duplicated on its own (--socket-errors breaks a connection)\n",
			"lcr, 3 nodes, no bugs, failures: 0 resets, 0 drops, 0 socket errors; depth 4, seed 1"},
		{[]string{"check", "lcr", "--dups", "2", "--drops", "0"}, exitOK,
			"livecheck: warning: --dups 2 has no effect: lcr's messages travel on streams, where none is dropped or duplicated on its own (--socket-errors breaks a connection)\n",
			"lcr, 3 nodes, no bugs, failures: 0 resets, 0 drops, 0 socket errors; depth 4, seed 1"},
		{[]string{"check", "paxos", "--socket-errors", "1"}, exitOK,
			"livecheck: warning: --socket-errors 1 has no effect: paxos's messages are datagrams, with no connection to break (--drops loses one)\n",
			"paxos, 3 nodes, no bugs, proposers=1, roles=all, failures: 0 resets, 0 drops, 0 socket errors; depth 4, seed 1"},
		{[]string{"check", "randtree", "--peers", ""}, exitUsage,
			"livecheck check: --peers is given empty: leave it out for its default (zero), or give bootstrap lists: zero (node k knows 0 and itself) or all (every node knows every node)\n", ""},
		{[]string{"check", "lcr", "--ids="}, exitUsage,
			"livecheck check: --ids is given empty: leave it out for its default, or give the nodes' ids in ring order, comma-separated (default: N,1,2,...,N-1)\n", ""},
		{[]string{"prefix", "randtree", "--peers=", "--out", dir}, exitUsage,
			"livecheck prefix: --peers is given empty: leave it out for its default (zero), or give bootstrap lists: zero (node k knows 0 and itself) or all (every node knows every node)\n", ""},
		// Decimal digits, leading zeros read as decimal (seq -w writes
		// them); no sign.
		{[]string{"check", "lcr", "--shard", "+1/4", "--out", dir + "/s.json"}, exitUsage,
			`livecheck check: --shard: takes I/N, the slice I of N in decimal digits with 0 <= I < N (e.g. 2/4), not "+1/4"` + "\n", ""},
		{[]string{"check", "lcr", "--shard", "-0/4", "--out", dir + "/s.json"}, exitUsage,
			`livecheck check: --shard: takes I/N, the slice I of N in decimal digits with 0 <= I < N (e.g. 2/4), not "-0/4"` + "\n", ""},
		{[]string{"check", "lcr", "--shard", "01/4", "--out", dir + "/s.json"}, exitOK, "",
			"lcr, 3 nodes, no bugs, failures: 0 resets, 0 drops, 0 socket errors; depth 4, seed 1"},
		// Misspelt flags, and another system's.
		{[]string{"check", "lcr", "--node", "3"}, exitUsage,
			"livecheck check: unknown flag --node: did you mean --nodes? (see 'livecheck check lcr --help')\n", ""},
		{[]string{"check", "lcr", "--wlaks=3"}, exitUsage,
			"livecheck check: unknown flag --wlaks: did you mean --walks? (see 'livecheck check lcr --help')\n", ""},
		{[]string{"check", "lcr", "--degree", "2"}, exitUsage,
			"livecheck check: --degree is a flag of randtree and overcast, not of lcr (see 'livecheck check lcr --help')\n", ""},
		{[]string{"check", "lcr", "--degre", "2"}, exitUsage,
			"livecheck check: unknown flag --degre: did you mean --degree, a flag of randtree and overcast, not of lcr? (see 'livecheck check lcr --help')\n", ""},
		{[]string{"check", "--degree", "2", "randtree"}, exitUsage,
			"livecheck check: --degree is a flag of randtree and overcast: name the system first, livecheck check SYSTEM --degree ... (see 'livecheck check --help')\n", ""},
		{[]string{"prefix", "paxos", "--peers", "all"}, exitUsage,
			"livecheck prefix: --peers is a flag of randtree, not of paxos (see 'livecheck prefix paxos --help')\n", ""},
		{[]string{"replay", "--jsn", "x.json"}, exitUsage,
			"livecheck replay: unknown flag --jsn: did you mean --json? (see 'livecheck replay --help')\n", ""},
		{[]string{"check", "lcr", "--xyzzy"}, exitUsage,
			"livecheck check: unknown flag --xyzzy (see 'livecheck check lcr --help')\n", ""},
	} {
		args := tc.args
		if args[0] == "check" {
			args = append(args, "--depth", "4", "--no-walks", "-q", "--out", dir)
			if strings.Contains(strings.Join(tc.args, " "), "--shard") {
				args = append(tc.args, "--depth", "4", "--no-walks", "-q")
			}
		}
		code, out, errs := runCLI(t, args...)
		if code != tc.code || errs != tc.stderr {
			t.Errorf("%q: exit %d, stderr %q; want %d, %q", tc.args, code, errs, tc.code, tc.stderr)
			continue
		}
		if tc.header != "" {
			if first, _, _ := strings.Cut(out, "\n"); first != tc.header {
				t.Errorf("%q: the report begins %q, want %q", tc.args, first, tc.header)
			}
		}
	}
}
