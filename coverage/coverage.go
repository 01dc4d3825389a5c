// Package coverage counts which handlers a check ran, and how often: Receive
// per message type, Timer per timer name, App, Error, Init, and the drops.
// A report lists them so that a user sees what the check never exercised
// (a timer that never fired, a message type never delivered).
//
// A Counter sits on the hot path of the search and the walks: it counts by
// a small index, found by a short linear scan over the types and timer
// names it has met (a protocol has a handful of each), and names them only
// when its Summary is asked for.
package coverage

import (
	"reflect"
	"slices"
	"strings"

	"github.com/livecheck/livecheck/sim"
)

// A Counter counts the handlers that events ran. It is used by one
// goroutine at a time; Add merges counters.
type Counter struct {
	Transitions int64
	Init        int64 // Init calls: the initial state's and the resets'
	Resets      int64
	App         int64
	Errors      int64 // Error calls: socket errors' ends, peers told of resets, senders refused at partitions
	Drops       int64
	Dups        int64 // duplicated datagrams
	Partitions  int64
	Crashes     int64
	msgTypes    []msgKey
	received    []int64
	timers      []string
	fired       []int64
}

// Start counts the initial state's Init calls, one per node.
func (c *Counter) Start(nodes int) { c.Init += int64(nodes) }

// Event counts one applied event; msg is the message it delivered or
// dropped (the world's StepInfo.Msg), if any, and errors the Error
// handlers it ran (StepInfo.Errors): a socket error's two ends, the peers
// a reset tells, the senders a partition refuses.
func (c *Counter) Event(ev *sim.Event, msg sim.Message, errors int) {
	c.Errors += int64(errors)
	c.Transitions++
	switch ev.Kind {
	case sim.Deliver:
		c.received[c.msgType(keyOf(msg))]++
	case sim.Timer:
		c.fired[c.timer(ev.Timer)]++
	case sim.App:
		c.App++
	case sim.Drop:
		c.Drops++
	case sim.Duplicate:
		c.Dups++
	case sim.Partition:
		c.Partitions++
	case sim.Crash:
		c.Crashes++
	case sim.Reset:
		c.Resets++
		c.Init++
	}
}

// A msgKey is what a delivery is counted under: the message's type, and
// its kind where the type names one (sim.KindedMessage).
type msgKey struct {
	t    reflect.Type
	kind string
}

func keyOf(msg sim.Message) msgKey {
	if k, ok := msg.(sim.KindedMessage); ok {
		return msgKey{reflect.TypeOf(msg), k.MessageKind()}
	}
	return msgKey{t: reflect.TypeOf(msg)}
}

func (c *Counter) msgType(k msgKey) int { return slot(&c.msgTypes, &c.received, k) }

func (c *Counter) timer(name string) int { return slot(&c.timers, &c.fired, name) }

// slot returns x's place in *keys, with a count beside it in *counts,
// adding both if x is new. Few keys (message types, timer names) are
// met, so a scan is quicker than a map.
//
// The counts are written at every step, each worker's its own: they
// start at countsRoom, a size whose blocks the allocator lays on lines
// of their own, so that two workers' counts, made at the same moment,
// do not share a cache line.
func slot[K comparable](keys *[]K, counts *[]int64, x K) int {
	for i, k := range *keys {
		if k == x {
			return i
		}
	}
	*keys = append(*keys, x)
	if cap(*counts) == 0 {
		*counts = make([]int64, 0, countsRoom)
	}
	*counts = append(*counts, 0)
	return len(*keys) - 1
}

// countsRoom is the room a Counter's counts start with: 128 bytes, a
// size class whose blocks start at multiples of 128, two whole lines
// (the unit the hardware's adjacent-line prefetch fetches).
const countsRoom = 16

// Reset sets every count to 0, keeping the types and names met.
func (c *Counter) Reset() {
	msgTypes, timers := c.msgTypes, c.timers
	received, fired := c.received, c.fired
	clear(received)
	clear(fired)
	*c = Counter{msgTypes: msgTypes, received: received, timers: timers, fired: fired}
}

// Clone returns a copy of c, its counts without room to grow: for
// handing a worker's counts over, not for counting on.
func (c *Counter) Clone() Counter {
	out := *c
	out.msgTypes, out.received = slices.Clone(c.msgTypes), slices.Clone(c.received)
	out.timers, out.fired = slices.Clone(c.timers), slices.Clone(c.fired)
	return out
}

// Add adds o's counts to c.
func (c *Counter) Add(o *Counter) {
	c.Transitions += o.Transitions
	c.Init += o.Init
	c.Resets += o.Resets
	c.App += o.App
	c.Errors += o.Errors
	c.Drops += o.Drops
	c.Dups += o.Dups
	c.Partitions += o.Partitions
	c.Crashes += o.Crashes
	for i, t := range o.msgTypes {
		if n := o.received[i]; n != 0 {
			c.received[c.msgType(t)] += n
		}
	}
	for i, name := range o.timers {
		if n := o.fired[i]; n != 0 {
			c.fired[c.timer(name)] += n
		}
	}
}

// A Count is how often one message type was received, or one timer fired.
type Count struct {
	Name string `json:"name"`
	N    int64  `json:"n"`
}

// A Summary is a Counter in words: message types by their Go type name
// without the package ("grant", "*msg"), and by kind for a type that names
// its kinds ("Msg.MsgApp"), each list sorted by name.
type Summary struct {
	Transitions int64   `json:"transitions"`
	Init        int64   `json:"init"`
	Resets      int64   `json:"resets"`
	Receive     []Count `json:"receive"`
	Timer       []Count `json:"timer"`
	App         int64   `json:"app"`
	Error       int64   `json:"error"`
	Drops       int64   `json:"drops"`
	Dups        int64   `json:"dups,omitempty"`
	Partitions  int64   `json:"partitions,omitempty"`
	Crashes     int64   `json:"crashes,omitempty"`
}

// Summary names what c counted.
func (c *Counter) Summary() Summary {
	s := Summary{Transitions: c.Transitions, Init: c.Init, Resets: c.Resets, App: c.App, Error: c.Errors, Drops: c.Drops, Dups: c.Dups, Partitions: c.Partitions, Crashes: c.Crashes,
		Receive: []Count{}, Timer: []Count{}}
	for i, k := range c.msgTypes {
		if c.received[i] != 0 {
			name := typeName(k.t)
			if k.kind != "" {
				name += "." + k.kind
			}
			s.Receive = addCount(s.Receive, name, c.received[i])
		}
	}
	for i, name := range c.timers {
		if c.fired[i] != 0 {
			s.Timer = addCount(s.Timer, name, c.fired[i])
		}
	}
	byName := func(a, b Count) int { return strings.Compare(a.Name, b.Name) }
	slices.SortFunc(s.Receive, byName)
	slices.SortFunc(s.Timer, byName)
	return s
}

// addCount adds n under name: two types of the same name in different
// packages are counted as one, as a reader could not tell them apart.
func addCount(cs []Count, name string, n int64) []Count {
	for i := range cs {
		if cs[i].Name == name {
			cs[i].N += n
			return cs
		}
	}
	return append(cs, Count{Name: name, N: n})
}

// typeName is t's name without its package, which a protocol's messages
// share: "grant", "*msg".
func typeName(t reflect.Type) string {
	switch {
	case t == nil:
		return "nil"
	case t.Name() != "":
		return t.Name()
	case t.Kind() == reflect.Pointer && t.Elem().Name() != "":
		return "*" + t.Elem().Name()
	}
	return t.String()
}

// Never lists the handlers that never ran: "Receive", "Timer", "App",
// "Error" (Init always runs).
func (s *Summary) Never() []string {
	var out []string
	if len(s.Receive) == 0 {
		out = append(out, "Receive")
	}
	if len(s.Timer) == 0 {
		out = append(out, "Timer")
	}
	if s.App == 0 {
		out = append(out, "App")
	}
	if s.Error == 0 {
		out = append(out, "Error")
	}
	return out
}
