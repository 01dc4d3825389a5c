//go:build linux

package search

import (
	"syscall"
	"testing"
)

// A fresh table's pages fault once each, not twice, when a probe reads
// a page before an insert writes it (freshTable). 256 MB: more than the
// test's heap holds free, so the pages come new from the kernel.
func TestFreshTableFaultsOnce(t *testing.T) {
	const words = 32 << 20
	var before, after syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &before); err != nil {
		t.Skip(err)
	}
	s := freshTable(words)
	for i := 0; i < words; i += pageWords {
		if s[i+1] == 0 { // a probe, then an insert
			s[i+1] = uint64(i)
		}
	}
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &after); err != nil {
		t.Skip(err)
	}
	pages := int64(words / pageWords)
	faults := after.Minflt - before.Minflt
	t.Logf("%d pages, %d faults", pages, faults)
	if faults > pages*5/4 {
		t.Fatalf("%d faults for a table of %d pages: a page read before it is written faults twice", faults, pages)
	}
}
