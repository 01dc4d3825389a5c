package livecheck

import (
	"fmt"
	"strings"
)

// DefaultReduce is the reduction of the exhaustive search when none is
// given: every one that is sound for the system.
const DefaultReduce = "sleep,symmetry,observers"

// reductions is what Options.Reduce asks for.
type reductions struct {
	sleep, symmetry, observers bool
}

// parseReduce reads a reduction: "none", or a comma-separated list of
// "sleep", "symmetry" and "observers".
func parseReduce(s string) (reductions, error) {
	var r reductions
	if s == "none" {
		return r, nil
	}
	for _, name := range strings.Split(s, ",") {
		switch strings.TrimSpace(name) {
		case "sleep":
			r.sleep = true
		case "symmetry":
			r.symmetry = true
		case "observers":
			r.observers = true
		default:
			return r, fmt.Errorf("unknown reduction %q (valid: a comma-separated list of sleep, symmetry and observers, or none)", s)
		}
	}
	return r, nil
}

// ValidReduce says what is wrong with a reduction, if anything: the CLI
// checks its flag with it.
func ValidReduce(s string) error {
	_, err := parseReduce(s)
	return err
}
