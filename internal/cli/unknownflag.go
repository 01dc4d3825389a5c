package cli

import (
	"fmt"
	"strings"

	"github.com/livecheck/livecheck/protocol"
	"github.com/spf13/pflag"
)

// unknownFlag says what a command that does not know the flag --name
// makes of it: another system's parameter names the systems that have it
// (system says whether the command takes a system's flags; sys is the one
// given, or nil), a misspelling the nearest flag it could be.
func (c *command) unknownFlag(fs *pflag.FlagSet, name string, system bool, sys *protocol.System) string {
	var others map[string][]string // parameter name: the other systems that have it
	if system {
		others = map[string][]string{}
		for _, s := range c.systems {
			if s == sys {
				continue
			}
			for _, p := range s.Params {
				if fs.Lookup(p.Name) == nil {
					others[p.Name] = append(others[p.Name], s.Name)
				}
			}
		}
	}
	whose := func(flag string) string {
		if sys == nil {
			return fmt.Sprintf("a flag of %s: name the system first, %s %s SYSTEM --%s ...", joinAnd(others[flag]), c.cmd, fs.Name(), flag)
		}
		return fmt.Sprintf("a flag of %s, not of %s", joinAnd(others[flag]), sys.Name)
	}
	if others[name] != nil {
		return "--" + name + " is " + whose(name)
	}
	// The nearest of the command's flags, then of the other systems'
	// parameters, each in a fixed order: the first of the least distance.
	best, bestD := "", maxSuggestDistance(name)+1
	fs.VisitAll(func(f *pflag.Flag) {
		if d := editDistance(name, f.Name); d < bestD {
			best, bestD = f.Name, d
		}
	})
	own := best
	for _, s := range c.systems {
		for _, p := range s.Params {
			if d := editDistance(name, p.Name); others[p.Name] != nil && d < bestD {
				best, bestD = p.Name, d
			}
		}
	}
	switch {
	case best == "":
		return "unknown flag --" + name
	case best == own:
		return fmt.Sprintf("unknown flag --%s: did you mean --%s?", name, best)
	}
	return fmt.Sprintf("unknown flag --%s: did you mean --%s, %s?", name, best, whose(best))
}

// maxSuggestDistance is how far a misspelling may be from the flag it
// suggests: one edit in a short name, two in a longer one.
func maxSuggestDistance(name string) int {
	if len(name) <= 4 {
		return 1
	}
	return 2
}

// editDistance counts the insertions, deletions, substitutions and
// swaps of adjacent letters that turn a into b (optimal string
// alignment): "wlaks" is one from "walks".
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// joinAnd writes names as "a", "a and b" or "a, b and c".
func joinAnd(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
