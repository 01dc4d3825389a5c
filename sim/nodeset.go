package sim

import (
	"math/bits"
	"strconv"
	"strings"
)

// A NodeSet is a set of node ids below 64, one bit a node. Use it, rather
// than a bit set of your own, for sets of nodes in node states and
// messages: renaming nodes for symmetry reduction (see [Spec.Symmetry])
// renames the members of a NodeSet, as it renames every [NodeID], but it
// cannot know that the bits of a plain integer are nodes.
type NodeSet uint64

// Add returns s with id in it.
func (s NodeSet) Add(id NodeID) NodeSet { return s | 1<<uint(id) }

// Remove returns s without id.
func (s NodeSet) Remove(id NodeID) NodeSet { return s &^ (1 << uint(id)) }

// Has says whether id is in s.
func (s NodeSet) Has(id NodeID) bool { return id >= 0 && id < 64 && s&(1<<uint(id)) != 0 }

// Len is the number of nodes in s.
func (s NodeSet) Len() int { return bits.OnesCount64(uint64(s)) }

// String lists the ids: "{0,2}".
func (s NodeSet) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for t := uint64(s); t != 0; t &= t - 1 {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(bits.TrailingZeros64(t)))
	}
	b.WriteByte('}')
	return b.String()
}
