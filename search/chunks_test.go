package search_test

import (
	"testing"

	"github.com/livecheck/livecheck/search"
)

// TestChunkOf checks how levels are cut into chunks: at least 64 of them,
// or as many of 16 states as the level fills, and none over 256 states
// (a candidate's parent is a byte).
func TestChunkOf(t *testing.T) {
	for _, tc := range []struct{ n, size, chunks int }{
		{1, 16, 1},
		{16, 16, 1},
		{17, 16, 2},
		{100, 16, 7},
		{1024, 16, 64},
		{1025, 16, 65},
		{5000, 78, 65},
		{16384, 256, 64},
		{16385, 256, 65},
		{1 << 20, 256, 4096},
	} {
		size := search.ChunkOf(tc.n)
		if chunks := (tc.n + size - 1) / size; size != tc.size || chunks != tc.chunks {
			t.Errorf("a level of %d states: chunks of %d states, %d of them; want %d, %d", tc.n, size, chunks, tc.size, tc.chunks)
		}
	}
	for n := 1; n <= 1<<15; n++ {
		size := search.ChunkOf(n)
		chunks := (n + size - 1) / size
		if size < 1 || size > 256 || chunks < min(64, (n+15)/16) {
			t.Fatalf("a level of %d states: %d chunks of %d", n, chunks, size)
		}
	}
}
