//go:build (!amd64 && !arm64) || race

package gid

import "runtime"

// current parses the goroutine's number from its stack header: a thousand
// times slower than reading the g, but right on every architecture. Under
// the race detector it stands in for the g too: a g is reused by later
// goroutines, and the detector, which does not see that reuse as a
// hand-over, would report the state a world keeps per goroutine (sim's
// draw cells) as shared by a goroutine that ended and one that took its g.
// A goroutine's number is never reused.
func current() uintptr {
	var b [64]byte
	n := runtime.Stack(b[:], false)
	var id uintptr
	for _, c := range b[len("goroutine "):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uintptr(c-'0')
	}
	return id
}
