// Package systems lists the protocols bundled with livecheck.
package systems

import (
	"fmt"
	"strings"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/systems/etcdkv"
	"github.com/livecheck/livecheck/systems/etcdraft"
	"github.com/livecheck/livecheck/systems/kvstore"
	"github.com/livecheck/livecheck/systems/lcr"
	"github.com/livecheck/livecheck/systems/onepaxos"
	"github.com/livecheck/livecheck/systems/overcast"
	"github.com/livecheck/livecheck/systems/paxos"
	"github.com/livecheck/livecheck/systems/randtree"
	"github.com/livecheck/livecheck/systems/ring"
	"github.com/livecheck/livecheck/systems/transport"
)

// All returns the bundled systems, by name.
func All() []*protocol.System {
	return []*protocol.System{&lcr.System, &randtree.System, &paxos.System, &ring.System, &overcast.System, &transport.System, &onepaxos.System, &etcdraft.System, &kvstore.System, &etcdkv.System}
}

// Names returns the names of the bundled systems.
func Names() []string {
	var out []string
	for _, s := range All() {
		out = append(out, s.Name)
	}
	return out
}

// Lookup returns the system called name; the error lists the valid names.
func Lookup(name string) (*protocol.System, error) {
	for _, s := range All() {
		if s.Name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown system %q (valid: %s)", name, strings.Join(Names(), ", "))
}
