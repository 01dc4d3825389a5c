package sim

import (
	"fmt"
	"math/bits"
	"slices"
)

// Symmetry reduction.
//
// A system may declare groups of interchangeable nodes in Spec.Symmetry:
// nodes that run the same code with the same settings, so that renaming
// them (swapping two acceptors everywhere: in their own states, in every
// node id and NodeSet that names them, in the messages in flight to and
// from them) maps every run to a run and every state to one that
// satisfies the same properties. The search then needs to explore only
// one state of each such set of renamed states.
//
// A state's Key is the least fingerprint of the renamings of it that put
// each group's members in order of what they are: their state, timers
// and the messages in flight to and from them, with the group's ids left
// out (a sort key that renaming does not change). Members the sort key
// cannot tell apart are tried in every order. Two states with the same
// key are renamings of each other, since the key hashes everything,
// renamed; and every renaming of a state has the same key, since it has
// the same sort keys and so the same renamings to choose from. Keys are
// thus exact: the search keeps one state of each class, whichever it
// meets first. The cost is one renamed fingerprint per order tried: one
// when the sort keys differ, up to k! for k members alike.
//
// Renaming finds node ids by their types: NodeID and NodeSet values, in
// node states, messages and map keys, and Hasher.Node and Hasher.NodeSet
// in a StateHasher. A node id kept in a plain int, or a set of nodes in a
// plain bit set, is not renamed, and the reduction is then unsound: a
// system that declares symmetry must use the types. Driver calls must not
// go to a member of a group, and properties must not tell members apart;
// nor may the P and Q of a monitor (properties.LeadsTo): a monitor's bit
// is not renamed, which is sound only if renaming a state leaves P and Q
// as they were.

// symmetry is a world's working set for keys.
type symmetry struct {
	groups  [][]NodeID
	group   []int      // each node's group, -1 for none
	members nodeGroup  // every group's members
	blind   []NodeID   // every group member anonymous, other nodes as they are
	mark    []NodeID   // blind, but for one member marked
	ref     []uint64   // how the others name each member (refine)
	perm    []NodeID   // the renaming of the state under way
	inv     []NodeID   // its inverse: inv[perm[i]] = i
	sk      []uint64   // sort keys of the group members
	orders  [][]NodeID // each group's members, in the order under way
	blocks  []block    // runs of members with equal sort keys
	h, q, r Hasher
	// memo holds renamed fingerprints of node slots and messages by their
	// own fingerprint and the renaming's: the same node state or message
	// is met under the same renaming in many states.
	memo [memoSize]memoEntry
	// keys remembers the keys of recent states by their fingerprint: a
	// search meets the same state again and again (each way of reaching
	// it), and its key costs far more than its fingerprint. It starts at
	// keyCacheMin entries and grows to keyCacheMax once it has missed
	// twice as often as it has entries: a large search meets far more
	// states between two visits of one than a small one. Split Paxos 2x4
	// (163,289 classes): 1.22 s on one worker with 64K entries, 1.04 s
	// with 1M; on two workers, each with a cache of its own, about 0.95 s
	// against 0.65 s (1.27x against 1.60x).
	keys      []keyEntry
	keyBits   uint
	keyMisses int
}

const (
	keyCacheMin = 1 << 16 // entries: 1 MB
	keyCacheMax = 1 << 20 // 16 MB a world
)

type keyEntry struct{ fp, key uint64 }

// cachedKey returns s's key, from the cache when s was met recently.
func (y *symmetry) cachedKey(w *World, s *State) uint64 {
	if y.keys == nil {
		y.keys, y.keyBits = make([]keyEntry, keyCacheMin), uint(bits.Len(keyCacheMin-1))
	}
	e := y.keySlot(s.fp)
	if e.fp == s.fp && s.fp != 0 {
		return e.key
	}
	k := y.key(w, s)
	*e = keyEntry{s.fp, k}
	if y.keyMisses++; y.keyMisses > 2*len(y.keys) && len(y.keys) < keyCacheMax {
		// Entries are not moved over: the cache fills again.
		y.keys, y.keyBits, y.keyMisses = make([]keyEntry, keyCacheMax), uint(bits.Len(keyCacheMax-1)), 0
	}
	return k
}

// keySlot is the entry of the key cache for fingerprint fp.
func (y *symmetry) keySlot(fp uint64) *keyEntry {
	return &y.keys[(fp*0x9e3779b97f4a7c15)>>(64-y.keyBits)]
}

const memoSize = 1 << 11

type memoEntry struct {
	fp, sig, out uint64
	set          bool
}

// memoized returns the entry for fingerprint fp under renaming sig, and
// whether it holds its value already.
func (y *symmetry) memoized(fp, sig uint64) (*memoEntry, bool) {
	m := &y.memo[mix(fp, sig)&(memoSize-1)]
	return m, m.set && m.fp == fp && m.sig == sig
}

func validateSymmetry(s *Spec) error {
	seen := make([]bool, s.Nodes)
	for gi, g := range s.Symmetry {
		if len(g) < 2 {
			return fmt.Errorf("symmetry group %d has %d node; a group needs at least 2", gi, len(g))
		}
		for _, id := range g {
			if id < 0 || int(id) >= s.Nodes {
				return fmt.Errorf("symmetry group %d names node %d, but nodes are 0 to %d", gi, id, s.Nodes-1)
			}
			if seen[id] {
				return fmt.Errorf("node %d is in two symmetry groups, or twice in one", id)
			}
			seen[id] = true
		}
	}
	for i, c := range s.Calls {
		if seen[c.To] {
			return fmt.Errorf("driver call %d goes to node %d, which is in a symmetry group: members of a group must be alike, and only some get the call", i, c.To)
		}
	}
	return nil
}

func newSymmetry(spec *Spec) *symmetry {
	if len(spec.Symmetry) == 0 {
		return nil
	}
	n := spec.Nodes
	y := &symmetry{
		group: make([]int, n),
		blind: make([]NodeID, n),
		mark:  make([]NodeID, n),
		ref:   make([]uint64, n),
		perm:  make([]NodeID, n),
		inv:   make([]NodeID, n),
		sk:    make([]uint64, n),
	}
	y.members.member = make([]bool, n)
	for i := range n {
		y.group[i], y.blind[i], y.perm[i], y.inv[i] = -1, NodeID(i), NodeID(i), NodeID(i)
	}
	for gi, g := range spec.Symmetry {
		g = slices.Clone(g)
		slices.Sort(g)
		y.groups = append(y.groups, g)
		y.orders = append(y.orders, slices.Clone(g))
		for _, id := range g {
			y.group[id], y.blind[id] = gi, anonymous
			y.members.member[id] = true
			if id < 64 {
				y.members.set = y.members.set.Add(id)
			}
		}
	}
	return y
}

// blindSlot is the fingerprint of node i (as World.finish hashes it) with
// every group member anonymous: its fingerprint (sl.fp, up to date) when
// its state names no member, which its plan tells without hashing it
// again, for a struct of plain fields.
func (y *symmetry) blindSlot(s *State, i NodeID) uint64 {
	sl := &s.nodes[i]
	if n := sl.node; n != nil {
		if p := planOf(typeOf(n)); !p.custom && p.namesDirect != nil && !p.namesDirect(ifaceData(n), &y.members) {
			return sl.fp
		}
	}
	return y.blindHash(s, i)
}

// blindHash is blindSlot, hashed.
func (y *symmetry) blindHash(s *State, i NodeID) uint64 {
	h := &y.h
	h.Reset()
	h.perm = y.blind
	hashSlot(h, s, i)
	return h.Sum64()
}

// blindMessage is the fingerprint of msg with every group member
// anonymous.
func (y *symmetry) blindMessage(msg Message) uint64 {
	h := &y.h
	h.Reset()
	h.perm = y.blind
	h.Value(msg)
	return h.Sum64()
}

// key returns the fingerprint of s renamed into its group members' order.
func (y *symmetry) key(w *World, s *State) uint64 {
	// The sort keys: what each member is, what is in flight to and from
	// it, without the group's ids, and how the other nodes and the
	// messages name it.
	//
	// Members that name no member (their state has no id of one), with
	// no message or connection between two members in flight, are told
	// apart by nothing else: two of them with equal sort keys are alike
	// in themselves, in what is in flight to and from them and in how
	// everything else names them, so swapping them leaves the state as
	// it is. Their order among themselves then does not matter, and one
	// renamed fingerprint is the key. Otherwise (members that name each
	// other) every order of the members alike is tried.
	alike := true
	named := false // a node outside the groups or a message names a member
	for i := range s.nodes {
		sl := &s.nodes[i]
		y.sk[i] = sl.blind
		if sl.blind != sl.fp {
			if y.group[i] >= 0 {
				alike = false
			} else {
				named = true
			}
		}
	}
	// On streams a queue counts as a whole, in order: two members with
	// the same messages queued to node 0 in other orders are not alike
	// (swapping them swaps the queues).
	stream := w.spec.Transport == Stream
	for i := 0; i < len(s.net); {
		e := &s.net[i]
		qh := e.bfp
		named = named || e.bfp != e.FP
		for i++; stream && i < len(s.net) && s.net[i].From == e.From && s.net[i].To == e.To; i++ {
			qh = mix(qh, s.net[i].bfp)
			named = named || s.net[i].bfp != s.net[i].FP
		}
		gt, gf := y.group[e.To], y.group[e.From]
		if gt >= 0 {
			y.sk[e.To] += mix(uint64(y.blind[e.From])*3+1, qh)
		}
		if gf >= 0 {
			y.sk[e.From] += mix(uint64(y.blind[e.To])*3+2, qh)
		}
		if gt >= 0 && gf >= 0 {
			alike = false
		}
	}
	for _, c := range s.conns {
		ga, gb := y.group[c.a], y.group[c.b]
		if ga >= 0 {
			y.sk[c.a] += mix(uint64(y.blind[c.b]), 3)
		}
		if gb >= 0 {
			y.sk[c.b] += mix(uint64(y.blind[c.a]), 3)
		}
		if ga >= 0 && gb >= 0 {
			alike = false
		}
	}
	if s.cut != 0 {
		// A member's side of the partition, as a multiset of what is on
		// it (the nodes outside the groups by id, members anonymous):
		// renaming does not change it. Two members alike otherwise may
		// be on two sides, and swapping them then moves the cut: not
		// alike.
		var side [2]uint64
		for i := range s.nodes {
			side[b2i(s.cut.Has(NodeID(i)))] += mix(uint64(y.blind[i]), 6)
		}
		for i := range s.nodes {
			if y.group[i] >= 0 {
				y.sk[i] += mix(side[b2i(s.cut.Has(NodeID(i)))], 7)
			}
		}
		alike = false
	}
	clear(y.ref)
	y.sortGroups()
	if named && len(y.blocks) > 0 {
		// How the others name a member only orders members alike in
		// the rest: refine just those (the cost is a fingerprint of
		// each naming node per member).
		y.refine(s, stream)
		y.sortGroups()
	}
	if alike {
		y.blocks = y.blocks[:0]
	}
	best := ^uint64(0)
	y.tryOrders(0, w, s, &best)
	return best
}

// sortGroups orders each group's members by sort key, then by how the
// others name them (ref, when refined), and lists the runs of members
// alike in both.
//
// A group is a handful of nodes, and keys are worked out for millions of
// states: it sorts by insertion, by hand, without a comparison function
// called through a closure. An insertion sort is stable, so the order is
// the one slices.SortStableFunc gives (a stable sort's order is unique).
func (y *symmetry) sortGroups() {
	y.blocks = y.blocks[:0]
	sk, ref := y.sk, y.ref
	for gi, g := range y.groups {
		order := y.orders[gi]
		copy(order, g)
		for i := 1; i < len(order); i++ {
			v := order[i]
			j := i
			for ; j > 0; j-- {
				u := order[j-1]
				if sk[v] > sk[u] || sk[v] == sk[u] && ref[v] >= ref[u] {
					break
				}
				order[j] = u
			}
			order[j] = v
		}
		for lo := 0; lo < len(order); {
			hi := lo + 1
			for hi < len(order) && sk[order[hi]] == sk[order[lo]] && ref[order[hi]] == ref[order[lo]] {
				hi++
			}
			if hi-lo > 1 {
				y.blocks = append(y.blocks, block{gi, lo, hi})
			}
			lo = hi
		}
	}
}

// refine sets ref of each member in a run of members alike to how the
// nodes outside the groups and the messages in flight name it: their
// fingerprints with that member marked and the others anonymous,
// memoized as renamed ones are (by the node's or message's fingerprint
// and the member marked). On streams a queue is hashed whole, in order:
// a queue to node 0 that names member 1 then member 2 is another state
// when they are swapped.
func (y *symmetry) refine(s *State, stream bool) {
	h := &y.q
	copy(y.mark, y.blind)
	for _, blk := range y.blocks {
		for _, m := range y.orders[blk.g][blk.lo:blk.hi] {
			y.mark[m] = marked
			// The memo's key for this marking: no renaming's (see
			// renamed) but by a fingerprint collision's chance.
			sig := ^mix(uint64(m), 0x6d61726b)
			for i := range s.nodes {
				sl := &s.nodes[i]
				if y.group[i] >= 0 || sl.blind == sl.fp {
					continue
				}
				e, ok := y.memoized(sl.fp, sig)
				if !ok {
					h.Reset()
					h.perm = y.mark
					hashSlot(h, s, NodeID(i))
					*e = memoEntry{sl.fp, sig, h.Sum64(), true}
				}
				y.ref[m] += mix(uint64(i)+4, e.out)
			}
			for i := 0; i < len(s.net); {
				e := &s.net[i]
				lo, names := i, false
				for i++; ; i++ {
					names = names || s.net[i-1].bfp != s.net[i-1].FP
					if !stream || i == len(s.net) || s.net[i].From != e.From || s.net[i].To != e.To {
						break
					}
				}
				if !names {
					continue
				}
				x := mix(mix(uint64(y.mark[e.From]), uint64(y.mark[e.To])), 5)
				for _, q := range s.net[lo:i] {
					fp := q.FP
					if q.bfp != q.FP {
						me, ok := y.memoized(q.FP, sig)
						if !ok {
							h.Reset()
							h.perm = y.mark
							h.Value(q.Msg)
							*me = memoEntry{q.FP, sig, h.Sum64(), true}
						}
						fp = me.out
					}
					x = mix(x, fp)
				}
				y.ref[m] += mix(5, x)
			}
			y.mark[m] = anonymous
		}
	}
}

// A block is a run of members of group g, orders[g][lo:hi], whose sort
// keys are equal.
type block struct{ g, lo, hi int }

// tryOrders tries every order of the members of blocks b on (the earlier
// blocks' members fixed), keeping the least renamed fingerprint in best.
func (y *symmetry) tryOrders(b int, w *World, s *State, best *uint64) {
	if b == len(y.blocks) {
		for gi, g := range y.groups {
			for j, id := range y.orders[gi] {
				y.perm[id], y.inv[g[j]] = g[j], id
			}
		}
		*best = min(*best, y.renamed(w, s))
		return
	}
	blk := y.blocks[b]
	y.permute(y.orders[blk.g][blk.lo:blk.hi], 0, b, w, s, best)
}

// permute puts every member of seg[k:] at position k in turn, then orders
// the rest.
func (y *symmetry) permute(seg []NodeID, k, b int, w *World, s *State, best *uint64) {
	if k == len(seg) {
		y.tryOrders(b+1, w, s, best)
		return
	}
	for i := k; i < len(seg); i++ {
		seg[k], seg[i] = seg[i], seg[k]
		y.permute(seg, k+1, b, w, s, best)
		seg[k], seg[i] = seg[i], seg[k]
	}
}

// RenamedKey is the fingerprint of s with node i renamed perm[i], as a
// state's Key is computed for each renaming its sort picks; perm must be
// a permutation of the node ids. It is for tests and tools that check
// keys against every renaming (a state's Key is the least RenamedKey over
// the renamings that sort its groups, and two states are renamings of
// each other when some RenamedKey of one is a RenamedKey of the other),
// and it uses w's working set: not while w is stepping in another
// goroutine. It works in a world without symmetry too.
func (w *World) RenamedKey(s *State, perm []NodeID) uint64 {
	y := w.sym
	if y == nil {
		n := len(s.nodes)
		y = &symmetry{perm: make([]NodeID, n), inv: make([]NodeID, n)}
	}
	for i, p := range perm {
		y.perm[i], y.inv[p] = p, NodeID(i)
	}
	return y.renamed(w, s)
}

// renamed returns the fingerprint of s renamed by y.perm (y.inv its
// inverse). As World.stateHash does, it adds the parts' mixes rather than
// hash their bytes: the nodes' renamed fingerprints (memoized: the same
// node state is met under the same renaming in many states), and the
// network as a multiset of queues (on datagrams each message its own),
// each queue its renamed ends and its messages' renamed fingerprints in
// order; then the rest, renamed.
func (y *symmetry) renamed(w *World, s *State) uint64 {
	stream := w.spec.Transport == Stream
	q, r := &y.q, &y.r
	// Under the identity a node or message renamed hashes as it is.
	ident := true
	sig := uint64(len(y.perm))
	for i, p := range y.perm {
		if int(p) != i {
			ident = false
		}
		sig = mix(sig, uint64(p))
	}
	var nodes uint64
	for p := range s.nodes {
		sl := &s.nodes[y.inv[p]]
		fp := sl.fp
		if !ident && sl.blind != sl.fp {
			m, ok := y.memoized(sl.fp, sig)
			if !ok {
				q.Reset()
				q.perm = y.perm
				hashSlot(q, s, y.inv[p])
				*m = memoEntry{sl.fp, sig, q.Sum64(), true}
			}
			fp = m.out
		}
		nodes += mix(uint64(p), fp)
	}
	var net uint64
	for i := 0; i < len(s.net); {
		e := &s.net[i]
		x := mix(uint64(y.perm[e.From])<<32|uint64(uint32(y.perm[e.To])), 0x71)
		for {
			e := &s.net[i]
			fp := e.FP
			if !ident && e.bfp != e.FP {
				m, ok := y.memoized(e.FP, sig)
				if !ok {
					r.Reset()
					r.perm = y.perm
					r.Value(e.Msg)
					*m = memoEntry{e.FP, sig, r.Sum64(), true}
				}
				fp = m.out
			}
			x = mix(x, fp)
			i++
			if !stream || i == len(s.net) || s.net[i].From != e.From || s.net[i].To != e.To {
				break
			}
		}
		net += x
	}
	var conns uint64
	for _, c := range s.conns {
		a, b := y.perm[c.a], y.perm[c.b]
		conns += mix(uint64(min(a, b))<<32|uint64(max(a, b)), 0x63)
	}
	h := &y.h
	h.Reset()
	h.perm = nil
	w.hashRest(h, s, y.perm)
	x := mix(nodes, uint64(len(s.net))<<32|uint64(len(s.conns)))
	x = mix(x, net)
	x = mix(x, conns)
	return mix(x, h.Sum64())
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// mix is a 64-bit finaliser (splitmix64's) of a and b.
func mix(a, b uint64) uint64 {
	z := a*0x9e3779b97f4a7c15 ^ b
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
