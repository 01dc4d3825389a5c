package host

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// Discovery. A node that receives a message of a type no node of its
// process has sent yet cannot decode it (see wire.go), so before a node
// starts the host runs the system in the simulator for a few short
// random walks, the checker's own world, and registers the type of
// every message sent there, with Model.Messages for what the walks miss
// (and the types inside node states, for state reports). A message type that the wire would carry
// changed is found there, before any node runs.

// discoverWalks and discoverSteps bound the walks: a few thousand steps,
// milliseconds for the bundled systems.
const (
	discoverWalks = 24
	discoverSteps = 400
)

var discovered sync.Map // *protocol.System + config -> error

// discover registers the types of m's messages and node states; key
// names the system and configuration m was built for.
func discover(key string, m *protocol.Model) error {
	if err, ok := discovered.Load(key); ok {
		return asError(err)
	}
	err := discoverTypes(m)
	discovered.Store(key, err)
	return err
}

func asError(v any) error {
	if v == nil {
		return nil
	}
	return v.(error)
}

func discoverTypes(m *protocol.Model) error {
	for _, msg := range m.Messages {
		if err := registerValue(reflect.ValueOf(msg)); err != nil {
			return err
		}
	}
	w, err := sim.NewWorld(m.Spec)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(27, 1))
	w.Chooser = func(n int) int { return rng.IntN(n) }
	var buf []sim.Event
	for walk := 0; walk < discoverWalks; walk++ {
		s, err := w.InitialFrom(nil)
		if err != nil {
			return nil // the nodes will say so when they run
		}
		for step := 0; ; step++ {
			if err := registerState(s); err != nil {
				return err
			}
			if step == discoverSteps {
				break
			}
			buf = w.Enabled(s, buf[:0])
			if len(buf) == 0 {
				break
			}
			next, err := w.Apply(s, buf[rng.IntN(len(buf))], nil)
			if err != nil {
				break // a panic or the like: the run shows it
			}
			s = next
		}
	}
	return nil
}

// registerState registers the types of the messages in flight in s,
// and those inside the nodes' states (for state reports).
func registerState(s *sim.State) error {
	for i := 0; i < s.N(); i++ {
		for _, l := range layers(s.Node(sim.NodeID(i))) {
			registerValue(reflect.ValueOf(l)) // for state reports: one that cannot be is a dump alone
		}
	}
	for _, e := range s.InFlight() {
		if err := registerValue(reflect.ValueOf(e.Msg)); err != nil {
			return fmt.Errorf("%v (sent from node %d to node %d)", err, e.From, e.To)
		}
	}
	return nil
}
