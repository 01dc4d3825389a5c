package sim

import (
	"fmt"
	"strings"
)

// Layers.
//
// A node can be built from layers, as a real one is built from an
// application over a transport over the network: [Stack] puts them one
// above the other and returns one [Node], which the world runs as it runs
// any other. The bottom layer talks to the network: its Send puts a
// message on the wire, and the network's messages and broken connections
// come to its Receive and Error. A layer above sends through the layer
// below it: its Send is handed to that layer's Down handler (so every
// layer but the top is a [Carrier]), and a layer hands a message up with
// [Context.Deliver], which calls the Receive of the layer above. Both run
// the other layer's handler at once, before they return, all within the
// one step: a layer whose Deliver leads the layer above to send is
// called (Down) again before its own handler has returned.
//
// Each layer keeps its own state, its own timers (a timer "retransmit"
// of layer "transport" is the node's timer "transport/retransmit", so
// names never collide and a report shows whose it is), and its own
// durable fields, which a reset keeps layer by layer. Init runs bottom
// up; a driver call goes to the top layer, or to the layer a [LayerCall]
// names. Choose works in every layer, Logf lines say which layer wrote
// them ("1 transport: ..."), the text of an event says which layer
// handled it, and a handler that panics is reported with its layer.
//
// A stacked node is copied, fingerprinted and dumped layer by layer,
// each layer as a plain node would be (node ids inside are renamed under
// symmetry), and properties read a layer with [LayerOf] (or
// properties.Node, which looks into the layers).

// A Layer is one layer of a stacked node: its name and the node that is its
// state and handlers.
type Layer struct {
	// Name names the layer in timer names, log lines and reports: letters,
	// digits, '-' and '_' ("transport").
	Name string
	Node Node
}

// A Carrier is a layer that carries the messages of the layer above it:
// every layer of a stack but the top.
type Carrier interface {
	Node
	// Down handles a message the layer above sent to node to with its
	// Context.Send.
	Down(ctx Context, to NodeID, msg Message)
}

// A LayerCall is a driver call (Call.Call) for the named layer of a
// stacked node, rather than for its top layer.
type LayerCall struct {
	Layer string
	Call  AppCall
}

// Stacked is a node built from layers by [Stack]. Its handlers pass each
// event to the layer it is for; its state is its layers' states.
type Stacked struct {
	names  []string // shared by every copy: the stack's shape, not state
	layers []Node
}

var _ StateCopier = (*Stacked)(nil)
var _ StateHasher = (*Stacked)(nil)
var _ StateDumper = (*Stacked)(nil)

// Stack returns a node made of layers, the bottom one first. It panics if
// there are no layers, a layer has no node or a bad or repeated name, or
// a layer below the top is not a [Carrier]: mistakes in the system's code
// that its first run shows.
func Stack(layers ...Layer) *Stacked {
	if len(layers) == 0 {
		panic("sim.Stack: a stack needs at least one layer")
	}
	s := newStacked(len(layers))
	s.names = s.names[:len(layers)]
	for i, l := range layers {
		switch {
		case !layerName(l.Name):
			panic(fmt.Sprintf("sim.Stack: layer %d's name %q is not a name: letters, digits, '-' and '_'", i, l.Name))
		case l.Node == nil:
			panic(fmt.Sprintf("sim.Stack: layer %s has no node", l.Name))
		case indexOf(s.names[:i], l.Name) >= 0:
			panic(fmt.Sprintf("sim.Stack: two layers are named %s", l.Name))
		}
		if _, ok := l.Node.(Carrier); !ok && i < len(layers)-1 {
			panic(fmt.Sprintf("sim.Stack: layer %s (a %T) is below layer %s but has no Down method to carry its messages (see sim.Carrier)",
				l.Name, l.Node, layers[i+1].Name))
		}
		s.names[i], s.layers[i] = l.Name, l.Node
	}
	return s
}

// inlineLayers is how many layers a stack holds without a second
// allocation: a reset builds the node again, and a step may copy it.
const inlineLayers = 4

// newStacked returns a stack with room for n layers and, past its names'
// end, for n names: one allocation up to inlineLayers. A copy shares the
// names of the stack it copies.
func newStacked(n int) *Stacked {
	if n > inlineLayers {
		return &Stacked{layers: make([]Node, n), names: make([]string, 0, n)}
	}
	m := &struct {
		s      Stacked
		layers [inlineLayers]Node
		names  [inlineLayers]string
	}{}
	m.s.layers, m.s.names = m.layers[:n:n], m.names[:0:n]
	return &m.s
}

func layerName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

// Len is the number of layers.
func (s *Stacked) Len() int { return len(s.layers) }

// Layer returns layer i (0 is the bottom) and its name. It must be treated
// as read-only outside the layer's own handlers.
func (s *Stacked) Layer(i int) (name string, node Node) { return s.names[i], s.layers[i] }

// LayerOf returns n as a T, or else the lowest layer of a stacked n (or of
// a stack inside it) that is a T. Properties use it to read one layer of
// a stacked node.
func LayerOf[T any](n Node) (T, bool) {
	if t, ok := n.(T); ok {
		return t, true
	}
	if s, ok := n.(*Stacked); ok {
		for _, l := range s.layers {
			if t, ok := LayerOf[T](l); ok {
				return t, true
			}
		}
	}
	var zero T
	return zero, false
}

// Init starts every layer, the bottom one first (so a layer that delivers
// a message up from its Init reaches a layer not started yet).
func (s *Stacked) Init(ctx Context) {
	tab := s.contexts(ctx)
	for i := range s.layers {
		tab[i].run(initH, 0, nil, "", nil)
	}
}

// Receive hands a message from the network to the bottom layer.
func (s *Stacked) Receive(ctx Context, from NodeID, msg Message) {
	s.contexts(ctx)[0].run(receiveH, from, msg, "", nil)
}

// Error tells the bottom layer that the connection to peer broke.
func (s *Stacked) Error(ctx Context, peer NodeID) {
	s.contexts(ctx)[0].run(errorH, peer, nil, "", nil)
}

// App hands a driver call to the top layer, or a LayerCall's call to the
// layer it names.
func (s *Stacked) App(ctx Context, call AppCall) {
	i := len(s.layers) - 1
	if lc, ok := call.(LayerCall); ok {
		if i = indexOf(s.names, lc.Layer); i < 0 {
			panic(fmt.Sprintf("a driver call for layer %q, but the node's layers are %s", lc.Layer, strings.Join(s.names, ", ")))
		}
		call = lc.Call
	}
	s.contexts(ctx)[i].run(appH, 0, nil, "", call)
}

// Timer fires a timer of the layer its name starts with.
func (s *Stacked) Timer(ctx Context, name string) {
	layer, rest, _ := strings.Cut(name, "/")
	i := indexOf(s.names, layer)
	if i < 0 {
		panic(fmt.Sprintf("timer %q is no layer's: the node's layers are %s", name, strings.Join(s.names, ", ")))
	}
	s.contexts(ctx)[i].run(timerH, 0, nil, rest, nil)
}

// layerFor names the layer of a stacked node that handles ev, for the
// event's text: the bottom one for a delivery or a broken connection,
// the called one for a driver call, none for the rest (a timer's name
// says its layer).
func (s *Stacked) layerFor(ev Event, call AppCall) string {
	switch ev.Kind {
	case Deliver, SocketError:
		return s.names[0]
	case App:
		if lc, ok := call.(LayerCall); ok {
			return lc.Layer
		}
		return s.names[len(s.names)-1]
	}
	return ""
}

// CopyState returns a deep copy of the stack, layer by layer.
func (s *Stacked) CopyState() any {
	c := newStacked(len(s.layers))
	c.names = s.names
	for i, l := range s.layers {
		c.layers[i] = Copy(l)
	}
	return c
}

// HashState writes each layer as a plain node's state is written.
func (s *Stacked) HashState(h *Hasher) {
	for _, l := range s.layers {
		h.Value(l)
	}
}

// DumpState writes each layer as "name:{fields}": the layer's dump
// without its type's name, in braces.
func (s *Stacked) DumpState() string {
	var b strings.Builder
	for i, l := range s.layers {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.names[i])
		b.WriteByte(':')
		d := dumpBare(l)
		if !strings.HasPrefix(d, "{") || !strings.HasSuffix(d, "}") {
			d = "{" + d + "}"
		}
		b.WriteString(d)
	}
	return b.String()
}

// A stackRun is a stack handling one event: the context it was given,
// and its layers' contexts.
type stackRun struct {
	base  Context  // the stacked node's own context
	nc    *nodeCtx // the world's context under base, nil if none
	stack *Stacked
	tab   []layerCtx
	// recent holds, by layer, the last timer name made for it, so that a
	// layer that sets one timer again and again finds it at once.
	recent []layerTimer
}

// A layerCtx is the Context of one layer of a stack while it handles an
// event: what it sends goes down, what it delivers goes up, its timers
// carry its name.
type layerCtx struct {
	r *stackRun
	i int
}

// contexts returns the contexts of s's layers under ctx: the world's
// reused ones when ctx is the world's, new ones otherwise.
func (s *Stacked) contexts(ctx Context) []layerCtx {
	nc, own := ctx.(*nodeCtx)
	if own {
		r := &nc.run
		if len(r.tab) < len(s.layers) {
			r.base, r.nc = nc, nc
			r.tab = make([]layerCtx, len(s.layers))
			r.recent = make([]layerTimer, len(s.layers))
			for i := range r.tab {
				r.tab[i] = layerCtx{r, i}
			}
		}
		r.stack = s
		return r.tab[:len(s.layers)]
	}
	r := &stackRun{base: ctx, stack: s, tab: make([]layerCtx, len(s.layers)), recent: make([]layerTimer, len(s.layers))}
	if lc, ok := ctx.(*layerCtx); ok {
		r.nc = lc.r.nc
	}
	for i := range r.tab {
		r.tab[i] = layerCtx{r, i}
	}
	return r.tab
}

// run runs handler h of the layer, recording it as the one under way so
// that a panic names it.
func (c *layerCtx) run(h handler, peer NodeID, msg Message, timer string, call AppCall) {
	st, nc := c.r.stack, c.r.nc
	var saved layerMark
	if nc != nil {
		saved = nc.mark
		nc.mark = layerMark{st.names[c.i], h}
	}
	l := st.layers[c.i]
	switch h {
	case initH:
		l.Init(c)
	case receiveH:
		l.Receive(c, peer, msg)
	case timerH:
		l.Timer(c, timer)
	case appH:
		l.App(c, call)
	case errorH:
		l.Error(c, peer)
	case downH:
		l.(Carrier).Down(c, peer, msg)
	}
	if nc != nil {
		nc.mark = saved
	}
}

// A layerMark is the layer whose handler is under way.
type layerMark struct {
	layer   string
	handler handler
}

func (c *layerCtx) Self() NodeID     { return c.r.base.Self() }
func (c *layerCtx) Nodes() int       { return c.r.base.Nodes() }
func (c *layerCtx) Choose(n int) int { return c.r.base.Choose(n) }

// Send puts msg on the wire from the bottom layer, and hands it to the
// Down handler of the layer below from any other.
func (c *layerCtx) Send(to NodeID, msg Message) {
	if c.i == 0 {
		c.r.base.Send(to, msg)
		return
	}
	c.r.tab[c.i-1].run(downH, to, msg, "", nil)
}

// Deliver hands msg to the Receive of the layer above; from the top
// layer, to whatever is above the stack.
func (c *layerCtx) Deliver(from NodeID, msg Message) {
	if c.i == len(c.r.stack.layers)-1 {
		c.r.base.Deliver(from, msg)
		return
	}
	c.r.tab[c.i+1].run(receiveH, from, msg, "", nil)
}

func (c *layerCtx) SetTimer(name string)    { c.r.base.SetTimer(c.timer(name)) }
func (c *layerCtx) SetPeriodic(name string) { c.r.base.SetPeriodic(c.timer(name)) }
func (c *layerCtx) CancelTimer(name string) { c.r.base.CancelTimer(c.timer(name)) }

// timer returns the node's name for the layer's timer name: the layer's
// name, a slash, the name. The world's context keeps the names it has
// made, so that a step makes none.
func (c *layerCtx) timer(name string) string {
	layer := c.r.stack.names[c.i]
	if last := &c.r.recent[c.i]; last.name == name && last.layer == layer {
		return last.full
	}
	var full string
	if nc := c.r.nc; nc == nil {
		full = layer + "/" + name
	} else {
		k := layerTimer{layer: layer, name: name}
		var ok bool
		if full, ok = nc.timerNames[k]; !ok {
			if nc.timerNames == nil {
				nc.timerNames = make(map[layerTimer]string)
			}
			full = layer + "/" + name
			nc.timerNames[k] = full
		}
	}
	c.r.recent[c.i] = layerTimer{layer, name, full}
	return full
}

// A layerTimer is a layer's timer name (and the node's name for it).
type layerTimer struct{ layer, name, full string }

func (c *layerCtx) Logf(format string, args ...any) {
	name := c.r.stack.names[c.i]
	if nc, ok := c.r.base.(*nodeCtx); ok {
		nc.logf(name, format, args...)
		return
	}
	c.r.base.Logf("%s: %s", name, fmt.Sprintf(format, args...))
}
