package sim

import (
	cryptorand "crypto/rand"
	"io"
	"runtime"
	"sync"

	"github.com/livecheck/livecheck/internal/gid"
)

// Randomness a library draws. A node that wraps code it does not own
// cannot route that code's randomness through Choose: go.etcd.io/raft
// draws its randomized election timeout with crypto/rand.Int(rand.Reader,
// n), reading the package variable crypto/rand.Reader at every call. So
// this package puts a reader of its own in that variable, once, when it is
// loaded. Outside a handler the reader hands every read to the reader that
// was there before (the operating system's): a program that links sim and
// draws keys or nonces gets what it got before. Inside a handler that a
// World or a host runs, a read is a choice like Choose, made through the
// handler's Context: the search tries every value, a walk draws one from
// its seed, a trace records it and replay hands it back. The handler is
// found by goroutine: before a handler runs, its runner notes its Context
// in a cell of the goroutine it runs on (internal/gid names the
// goroutine in two nanoseconds), so several search workers draw at once,
// each from its own world.
//
// A read of k bytes is one choice among DrawValues values, written into its
// last byte, the others zero. crypto/rand.Int(r,
// max) reads such a buffer, clears the top bits of its first byte and
// retries while the value is not below max: a value v < max is taken as it
// is, so the choice's values 0..max-1 are exactly Int's results, and the
// first value Int rejects is max itself. The world watches for that
// retry (a second read into the same buffer, from crypto/rand.Int, holding
// what the last read wrote): it is the retry of a rejected value, every
// value from the rejected one up is Int's rejection or one of its results
// again, so the search need not try them, and the world records the draw
// as ending there (see World.cutDraws). The search thereby tries exactly
// the max values Int can return, whatever max is, as long as max is at
// most DrawValues.
//
// What cannot be controlled this way: math/rand's and math/rand/v2's
// top-level functions (their source is the runtime's, not a variable), a
// reader saved before sim was loaded, a handler that starts goroutines.
// Those make a handler nondeterministic, which World.Recheck reports.

// DrawValues is how many values one read of crypto/rand.Reader during a
// handler can take: a read of one byte takes each of its 256, and a longer
// read the same 256 in its last byte, the others zero. A
// crypto/rand.Int(rand.Reader, max) with max at most DrawValues is explored
// whole; a larger max, or a key or nonce read whole, only in part.
const DrawValues = 256

// drawCell is what a goroutine is running: the Context of the handler
// under way, nil between handlers.
type drawCell struct {
	ctx Context
	// w is the world whose handler is under way, when a World runs it:
	// it keeps the choices and their bounds, which a retry cuts.
	w *World
	// The last read of the handler, to tell crypto/rand.Int's retry of a
	// value it rejected from a new draw: its buffer, what it wrote, the
	// choice's index in the step's choices, and the caller's frames.
	last     []byte
	lastVal  byte
	lastIdx  int
	lastPCs  [8]uintptr
	lastNPCs int
	// fromInt caches calledFromInt by the frames of the read: a handler
	// draws from the same few call sites at every step, and reading
	// their frames cost a third of a draw.
	fromInt map[[8]uintptr]bool
}

var (
	cells   sync.Map // gid.Current() -> *drawCell
	drawing = &drawReader{os: cryptorand.Reader}
)

func init() { cryptorand.Reader = drawing }

// cellOf returns the calling goroutine's cell, made on its first handler.
// The runtime keeps every goroutine descriptor it made, so the cells of
// goroutines that ended are taken over by those that reuse their
// descriptors: the cells are as many as the goroutines that ever ran a
// handler at once.
func cellOf(g uintptr) *drawCell {
	if c, ok := cells.Load(g); ok {
		return c.(*drawCell)
	}
	c, _ := cells.LoadOrStore(g, &drawCell{})
	return c.(*drawCell)
}

// Drawing runs f, a handler of a node with Context ctx, with reads of
// crypto/rand.Reader made on the calling goroutine answered by ctx.Choose,
// as a World does for the handlers it runs. A host that runs nodes for real
// calls its handlers through it, so that what the node drew is logged as
// choices and replays.
func Drawing(ctx Context, f func()) {
	c := cellOf(gid.Current())
	prev, prevW := c.ctx, c.w
	c.ctx, c.w, c.last = ctx, nil, nil
	defer func() { c.ctx, c.w, c.last = prev, prevW, nil }()
	f()
}

// drawReader is crypto/rand.Reader while sim is loaded.
type drawReader struct{ os io.Reader }

func (r *drawReader) Read(p []byte) (int, error) {
	var c *drawCell
	if v, ok := cells.Load(gid.Current()); ok {
		c = v.(*drawCell)
	}
	if c == nil || c.ctx == nil {
		return r.os.Read(p)
	}
	c.draw(p)
	return len(p), nil
}

// draw fills p with a value chosen through the handler's Context.
func (c *drawCell) draw(p []byte) {
	if len(p) == 0 {
		return
	}
	var pcs [8]uintptr
	npcs := runtime.Callers(3, pcs[:]) // above drawReader.Read and draw
	if w := c.w; w != nil && c.last != nil && (c.retry(p, &pcs, npcs) || c.masked()) {
		w.cutDraws(c.lastIdx)
	}
	v := c.ctx.Choose(DrawValues)
	clear(p)
	p[len(p)-1] = byte(v)
	c.last = nil
	if c.w != nil && c.calledFromInt(&pcs, npcs) {
		c.last, c.lastVal, c.lastIdx = p, byte(v), len(c.w.last.Choices)-1
		c.lastPCs, c.lastNPCs = pcs, npcs
	}
}

// done ends the handler's draws: a last draw that crypto/rand.Int masked
// cuts the values after it (see masked).
func (c *drawCell) done() {
	if w := c.w; w != nil && c.last != nil && c.masked() {
		w.cutDraws(c.lastIdx)
	}
}

// masked says whether crypto/rand.Int cleared bits of what the last read
// wrote: it clears the bits of the first byte above max-1's, so the value
// it went on with is a smaller one, which the search has tried already
// (it tries a draw's values in increasing order), and so are all larger
// values, masked or rejected in turn: Int's results were all below this
// one. Where max is a power of two, Int never rejects and this is how the
// draw's end shows.
func (c *drawCell) masked() bool { return c.last[len(c.last)-1] != c.lastVal }

// retry says whether the read into p is crypto/rand.Int reading again
// after rejecting what the last read wrote: the same buffer, read from the
// same frames, and in it still what the last read wrote with the top bits
// of its first byte cleared (Int's mask). A new Int call reads into a new
// buffer of zeros, which never matches: a rejected value is at least max,
// which is at least 1. The last read was from crypto/rand.Int (draw keeps
// no other).
func (c *drawCell) retry(p []byte, pcs *[8]uintptr, npcs int) bool {
	if len(p) != len(c.last) || &p[0] != &c.last[0] || npcs != c.lastNPCs || *pcs != c.lastPCs {
		return false
	}
	// Only the last byte was written (DrawValues is 256): the others
	// are zero, and Int's mask only clears bits.
	for _, b := range p[:len(p)-1] {
		if b != 0 {
			return false
		}
	}
	now := p[len(p)-1]
	return now != 0 && now&^c.lastVal == 0
}

// calledFromInt is calledFromInt of the first npcs of pcs (the rest
// zero), cached.
func (c *drawCell) calledFromInt(pcs *[8]uintptr, npcs int) bool {
	if v, ok := c.fromInt[*pcs]; ok {
		return v
	}
	if c.fromInt == nil || len(c.fromInt) >= 1<<10 {
		c.fromInt = map[[8]uintptr]bool{}
	}
	v := calledFromInt(pcs[:npcs])
	c.fromInt[*pcs] = v
	return v
}

// calledFromInt says whether the frames pcs (from the reader's caller up)
// pass through crypto/rand.Int before leaving the io package: io.ReadFull
// or io.ReadAtLeast called by Int.
func calledFromInt(pcs []uintptr) bool {
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		switch f.Function {
		case "crypto/rand.Int":
			return true
		case "io.ReadFull", "io.ReadAtLeast":
		default:
			return false
		}
		if !more {
			return false
		}
	}
}
