// Package gid names the goroutine that calls it, cheaply enough to be asked
// at every handler a simulated world runs.
//
// Go has no goroutine-local storage, and a library such as go.etcd.io/raft
// reads a package variable (crypto/rand.Reader) from deep inside a handler.
// To answer that read from the handler's own world, the world notes, before
// each handler, which goroutine runs it; the read asks which goroutine it is
// on. Current returns the address of the runtime's descriptor of the calling
// goroutine (its g): unique among live goroutines, and, since the runtime
// keeps every g it ever made, never the address of anything else.
package gid

// Current returns an identifier of the calling goroutine: equal for two
// calls on one goroutine, different for two goroutines that run at once.
func Current() uintptr { return current() }
