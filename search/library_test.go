package search_test

import (
	"io"
	"log"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
)

// wrapNode keeps its state as a node that wraps a library does (raft's
// RawNode): a storage reached through an interface and a pointer, with a
// mutex and a counter of calls that is not state; a counter advanced by a
// method value bound to it; the last protobuf message received, which
// Marshal has filled in; a logger. plainNode is the same protocol written
// with plain fields: the two must have as many states.
type (
	appender  interface{ Append(v int64) }
	wrapStore struct {
		mu    sync.Mutex
		ents  []int64
		calls int
	}
	wrapCounter struct {
		n    int64
		tick func()
	}
	wrapNode struct {
		mu   sync.Mutex
		last *wrapperspb.Int64Value
		log  appender
		own  *wrapStore
		c    *wrapCounter
		lg   *log.Logger
	}
	plainNode struct {
		N, Last int64
		Ents    []int64
	}
	plainMsg int64
)

func init() { sim.SkipFields[wrapStore]("calls") }

func (s *wrapStore) Append(v int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.ents = append(s.ents, v)
}

func (c *wrapCounter) inc() { c.n++ }

func newWrapNode(sim.NodeID) sim.Node {
	st := &wrapStore{}
	c := &wrapCounter{}
	c.tick = c.inc
	return &wrapNode{last: wrapperspb.Int64(0), log: st, own: st, c: c, lg: log.New(io.Discard, "", 0)}
}

func (n *wrapNode) Init(sim.Context) {}
func (n *wrapNode) App(ctx sim.Context, _ sim.AppCall) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.c.tick()
	n.lg.Printf("tick %d", n.c.n)
	ctx.Send(1-ctx.Self(), wrapperspb.Int64(n.c.n))
}
func (n *wrapNode) Receive(ctx sim.Context, _ sim.NodeID, msg sim.Message) {
	m := msg.(*wrapperspb.Int64Value)
	if _, err := proto.Marshal(m); err != nil {
		panic(err)
	}
	n.log.Append(m.Value)
	n.last = m
}
func (n *wrapNode) Timer(sim.Context, string)     {}
func (n *wrapNode) Error(sim.Context, sim.NodeID) {}

func (n *plainNode) Init(sim.Context) {}
func (n *plainNode) App(ctx sim.Context, _ sim.AppCall) {
	n.N++
	ctx.Send(1-ctx.Self(), plainMsg(n.N))
}
func (n *plainNode) Receive(ctx sim.Context, _ sim.NodeID, msg sim.Message) {
	n.Last = int64(msg.(plainMsg))
	n.Ents = append(n.Ents, n.Last)
}
func (n *plainNode) Timer(sim.Context, string)     {}
func (n *plainNode) Error(sim.Context, sim.NodeID) {}

// TestSearchLibraryState searches a node of library state with no
// hand-written copier or hasher: it must find the states of the same
// protocol written with plain fields, pinned.
func TestSearchLibraryState(t *testing.T) {
	const want = 47
	calls := []sim.Call{{To: 0, Call: 1}, {To: 0, Call: 2}, {To: 1, Call: 1}}
	for _, tc := range []struct {
		name string
		new  func(sim.NodeID) sim.Node
	}{
		{"library", newWrapNode},
		{"plain", func(sim.NodeID) sim.Node { return &plainNode{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := sim.NewWorld(sim.Spec{Nodes: 2, New: tc.new, Transport: sim.Datagram, Calls: calls,
				Budget: sim.Budget{Drops: 1}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := search.Global(w, search.Options{Depth: 30})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Exhausted || res.Stats.States != want {
				t.Errorf("%d states (exhausted %v), want %d, exhausted", res.Stats.States, res.Exhausted, want)
			}
		})
	}
}
