// Package lock is a lease-based lock service written as a user of
// livecheck would write their own protocol: the example that the README's
// "Check your own protocol" walks through.
//
// Node 0 is the server, the others are clients. Each client asks for the
// lock once, holds it while it works (its "work" timer) and gives it back.
// The server grants the lock to one client at a time as a numbered lease.
// When a lease runs out on the server's clock (its "lease" timer) the
// server revokes it, and grants the lock to the next client only once the
// holder has answered that it let go: the server cannot know that the
// holder's clock agrees with its own.
//
// The bug early-release is the server that trusts its own clock: when the
// lease runs out it takes the lock back at once and grants it to the next
// client, while the holder may still be working under it (a safety
// violation). The bug no-retry is a client that gives back a lease it never
// received, because the revoke overtook the grant, and does not say that it
// still wants the lock: it never gets its turn (a liveness violation).
//
// What a server or client keeps on disk is tagged `livecheck:"durable"`:
// with --resets 1 a restarted server still knows who holds the lock, and
// a restarted client still knows which leases it gave back. Messages are
// never lost: a client asks once, so with --drops 1 the check shows a lost
// acquire leaving its client waiting forever.
package lock

import (
	"slices"
	"time"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// The messages. A lease number names one grant of the lock: the server
// counts them, so an answer about an old lease cannot be taken for one
// about the current lease.
type (
	acquire struct{}
	grant   struct{ Lease int }
	revoke  struct{ Lease int }
	release struct {
		Lease int
		Again bool // the client never had the lease and still wants the lock
	}
)

const server sim.NodeID = 0

// Server is node 0.
type Server struct {
	sim.BaseNode
	Holder  sim.NodeID   `livecheck:"durable"` // the server itself while the lock is free
	Lease   int          `livecheck:"durable"` // the last lease granted
	Waiting []sim.NodeID `livecheck:"durable"` // clients waiting, in the order they asked

	EarlyRelease bool // the bug
}

func (s *Server) Init(ctx sim.Context) {
	if s.Holder != server {
		ctx.SetTimer("lease") // restarted: the lease runs out again from now
	}
}

func (s *Server) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case acquire:
		// A client that restarted before its grant came asks again.
		if from != s.Holder && !slices.Contains(s.Waiting, from) {
			s.Waiting = append(s.Waiting, from)
		}
	case release:
		if from != s.Holder || m.Lease != s.Lease {
			return // about an older lease
		}
		s.Holder = server
		ctx.CancelTimer("lease")
		if m.Again {
			s.Waiting = append(s.Waiting, from)
		}
	}
	s.grantNext(ctx)
}

// Timer: the lease ran out on the server's clock.
func (s *Server) Timer(ctx sim.Context, name string) {
	if s.EarlyRelease {
		s.Holder = server
		s.grantNext(ctx)
		return
	}
	ctx.Send(s.Holder, revoke{s.Lease})
}

func (s *Server) grantNext(ctx sim.Context) {
	if s.Holder != server || len(s.Waiting) == 0 {
		return
	}
	s.Holder, s.Waiting = s.Waiting[0], s.Waiting[1:]
	s.Lease++
	ctx.Send(s.Holder, grant{s.Lease})
	ctx.SetTimer("lease")
}

// Client is every node but 0.
type Client struct {
	sim.BaseNode
	Holds  bool // it believes it holds the lock, under lease Lease
	Lease  int
	Served bool `livecheck:"durable"` // it has held the lock
	// GaveBack is the last lease it gave back: a grant of it, or of an
	// older one, that arrives late is stale.
	GaveBack int `livecheck:"durable"`

	NoRetry bool // the bug
}

func (c *Client) Init(ctx sim.Context) {
	if !c.Served {
		ctx.Send(server, acquire{})
	}
}

func (c *Client) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case grant:
		if m.Lease <= c.GaveBack {
			return // revoked before it came
		}
		c.Holds, c.Lease, c.Served = true, m.Lease, true
		ctx.SetTimer("work")
	case revoke:
		if c.Holds && c.Lease != m.Lease {
			return // an older lease's, given back already
		}
		if c.Holds {
			c.Holds = false
			ctx.CancelTimer("work")
		}
		// Not holding it: the grant is late (the revoke overtook it), or
		// this client restarted.
		c.giveBack(ctx, m.Lease)
	}
}

// Timer: the work is done.
func (c *Client) Timer(ctx sim.Context, name string) {
	c.Holds = false
	c.giveBack(ctx, c.Lease)
}

func (c *Client) giveBack(ctx sim.Context, lease int) {
	c.GaveBack = max(c.GaveBack, lease)
	ctx.Send(server, release{lease, !c.Served && !c.NoRetry})
}

// Properties are the lock's: one holder at a time, and every client gets
// its turn; and a canary: a check that never saw a client hold the lock
// would pass one-holder without having shown anything. Each reads the
// clients alone: a helper over *Client skips the server.
var Properties = []properties.Property{
	properties.AtMostOne("one-holder", "at most one client believes it holds the lock",
		func(c *Client) bool { return c.Holds }),
	properties.EventuallyEach("all-served", "every client eventually holds the lock",
		func(c *Client) bool { return c.Served }),
	properties.SometimesNode("lock-held", "some client holds the lock",
		func(c *Client) bool { return c.Holds }),
}

// System is the lock service, one server and 1 to 4 clients.
var System = livecheck.System{
	Name: "lock", Doc: "a lease-based lock service: one server, clients that each take the lock once",
	MinNodes: 2, MaxNodes: 5,
	Bugs: []livecheck.Bug{{
		Name:  "early-release",
		Doc:   "when a lease runs out on the server's clock it grants the lock to the next client without waiting for the holder to let go",
		Needs: livecheck.Needs{Nodes: 3},
	}, {
		Name:  "no-retry",
		Doc:   "a client that gives back a lease it never received does not ask for the lock again",
		Needs: livecheck.Needs{Nodes: 3},
	}},
	Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
		early, noRetry := cfg.HasBug("early-release"), cfg.HasBug("no-retry")
		return &livecheck.Model{
			Spec: sim.Spec{New: func(id sim.NodeID) sim.Node {
				if id == server {
					return &Server{EarlyRelease: early}
				}
				return &Client{NoRetry: noRetry}
			}},
			Properties: Properties,
			// How long the timers wait when the nodes run for real
			// (livecheck run, cluster); the check ignores it.
			Timers: map[string]livecheck.Timing{
				"lease": {After: 300 * time.Millisecond, Jitter: 50 * time.Millisecond},
				"work":  {After: 100 * time.Millisecond, Jitter: 50 * time.Millisecond},
			},
		}, nil
	},
}
