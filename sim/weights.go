package sim

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Weights gives each event kind its weight; a kind of weight 0 is never
// chosen while another kind is enabled.
type Weights [NumKinds]float64

// DefaultWeights favour application calls over deliveries over timers,
// and failures least, so walks make progress and still see every kind.
var DefaultWeights = Weights{
	App:         8,
	Deliver:     4,
	Timer:       1,
	Drop:        0.1,
	SocketError: 0.1,
	Reset:       0.1,
	Duplicate:   0.1,
	Partition:   0.1,
	Crash:       0.1,
	// A heal is not a failure but the end of one: weighed as a timer,
	// so that a walk does not stay cut off for most of its steps.
	Heal: 1,
}

// String writes w in the form ParseWeights reads (on top of
// DefaultWeights). The kinds added after heal (crash) are written only
// when their weight is not the default, so that weights written into
// trace files and reports read as before, also to an older livecheck.
func (w Weights) String() string {
	var parts []string
	for k := range NumKinds {
		if Kind(k) > Heal && w[k] == DefaultWeights[k] {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%s", Kind(k), strconv.FormatFloat(w[k], 'g', -1, 64)))
	}
	return strings.Join(parts, ",")
}

// ParseWeights reads "app=8,deliver=4,timer=1,reset=0" on top of base. A
// kind given twice is an error, whatever the two values: one of them
// would be ignored. So is a result in which every kind weighs 0, which
// says "choose nothing" where Choose would draw uniformly.
func ParseWeights(s string, base Weights) (Weights, error) {
	w := base
	if strings.TrimSpace(s) == "" {
		return w, nil
	}
	var given [NumKinds]string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		name, val, ok := strings.Cut(part, "=")
		if !ok {
			return w, fmt.Errorf("weight %q is not KIND=NUMBER (kinds: %s)", part, KindNames())
		}
		k, err := ParseKind(name)
		if err != nil {
			return w, err
		}
		if given[k] != "" {
			return w, fmt.Errorf("the weight of %s is given twice: %s and %s", name, given[k], part)
		}
		given[k] = part
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || f < 0 || f != f || f > 1e9 {
			return w, fmt.Errorf("weight of %s must be a number from 0 to 1e9, not %q", name, val)
		}
		w[k] = f
	}
	if w == (Weights{}) {
		return w, fmt.Errorf("every weight is 0: give some kind a positive weight (a walk draws the enabled events in proportion to their kinds' weights)")
	}
	return w, nil
}

// Choose draws an event with probability proportional to its kind's
// weight. When every enabled event weighs 0 it draws uniformly.
func (w *Weights) Choose(enabled []Event, r *rand.Rand) int {
	total := 0.0
	for i := range enabled {
		total += w[enabled[i].Kind]
	}
	if total <= 0 {
		return r.IntN(len(enabled))
	}
	x := r.Float64() * total
	for i := range enabled {
		x -= w[enabled[i].Kind]
		if x < 0 {
			return i
		}
	}
	// Rounding: the last event of positive weight.
	for i := len(enabled) - 1; i >= 0; i-- {
		if w[enabled[i].Kind] > 0 {
			return i
		}
	}
	return len(enabled) - 1
}
