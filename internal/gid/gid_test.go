package gid

import (
	"sync"
	"testing"
)

// One goroutine gets one identifier, every time; goroutines running at once
// get different ones.
func TestCurrent(t *testing.T) {
	a, b := Current(), Current()
	if a == 0 || a != b {
		t.Fatalf("Current() = %#x then %#x on one goroutine", a, b)
	}
	const n = 16
	ids := make([]uintptr, n)
	var start, done sync.WaitGroup
	start.Add(n)
	done.Add(n)
	release := make(chan struct{})
	for i := range n {
		go func() {
			defer done.Done()
			ids[i] = Current()
			if again := Current(); again != ids[i] {
				t.Errorf("goroutine %d: %#x then %#x", i, ids[i], again)
			}
			start.Done()
			<-release // all n alive at once
		}()
	}
	start.Wait()
	close(release)
	done.Wait()
	seen := map[uintptr]bool{a: true}
	for i, id := range ids {
		if seen[id] {
			t.Fatalf("goroutine %d shares identifier %#x with another live goroutine", i, id)
		}
		seen[id] = true
	}
}

func BenchmarkCurrent(b *testing.B) {
	for b.Loop() {
		Current()
	}
}
