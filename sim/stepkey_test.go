package sim

import "testing"

// The caches hold entries by their key's hash: an entry found under the
// hash of another key is not that key's, and a lookup with it misses.
func TestStepCacheTellsKeysOfOneHashApart(t *testing.T) {
	a := stepKey{fp: 1, ev: Event{Kind: Timer, Node: 2, Timer: "tick"}, tape: 3}
	b := a
	b.ev.Timer = "tock"
	if a.hash() == b.hash() {
		t.Fatalf("two timers' keys hash alike (%#x)", a.hash())
	}
	h := a.hash()
	sc := NewSharedStepCache()
	sc.put(h, &stepEntry{key: a})
	if e := sc.get(h, &a); e == nil || e.key != a {
		t.Fatalf("the shared cache lost the entry of %v", a)
	}
	if e := sc.get(h, &b); e != nil {
		t.Fatalf("under the hash of %v, the shared cache gave the entry of %v to %v", a, e.key, b)
	}
	// A world's own cache: the step's key, its hash holding a's entry.
	w := &World{}
	s := &State{nodes: []slot{{fp: b.fp}}}
	w.last.Event = b.ev
	k := stepKey{fp: b.fp, ev: b.ev, tape: tapeHash(w.tape)}
	w.cache.put(k.hash(), &stepEntry{key: a, same: true})
	if w.stepLookup(s, 0, receiveH, 0) {
		t.Fatalf("the world's cache answered %v with the entry of %v", k, a)
	}
	if len(w.cache.runs) != 1 || w.cache.runs[0].key != k {
		t.Fatalf("after the miss, the cache records %+v, want one run under %v", w.cache.runs, k)
	}
	w.cache.put(k.hash(), &stepEntry{key: k, same: true})
	if !w.stepLookup(s, 0, receiveH, 0) {
		t.Fatalf("the world's cache missed %v, which it holds", k)
	}
}
