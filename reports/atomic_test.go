package reports_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/livecheck/livecheck/reports"
)

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func text(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

// Files that belong together are written all or none: a write that fails
// (a full disk) leaves none of them, nor a temporary file; a rename that
// fails takes back the files the set made, and leaves those that were
// there before it.
func TestWriteFilesAtomic(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	full := errors.New("no space left on device")
	err := reports.WriteFilesAtomic([]string{a, b}, []func(io.Writer) error{text("a"), func(io.Writer) error { return full }})
	if !errors.Is(err, full) || len(names(t, dir)) != 0 {
		t.Fatalf("a failed write: %v, left %q", err, names(t, dir))
	}
	if err := os.Mkdir(b, 0o755); err != nil { // in b's way
		t.Fatal(err)
	}
	if err := reports.WriteFilesAtomic([]string{a, b}, []func(io.Writer) error{text("a"), text("b")}); err == nil {
		t.Fatal("a rename onto a directory succeeded")
	}
	if got := names(t, dir); !slices.Equal(got, []string{"b.json"}) {
		t.Fatalf("a failed rename left %q, want only the directory", got)
	}
	if err := os.WriteFile(a, []byte("before"), 0o644); err != nil {
		t.Fatal(err)
	}
	reports.WriteFilesAtomic([]string{a, b}, []func(io.Writer) error{text("a"), text("b")})
	if got, _ := os.ReadFile(a); len(names(t, dir)) != 2 || string(got) != "a" {
		t.Fatalf("a file there before: %q, holding %q", names(t, dir), got)
	}
	os.Remove(b)
	if err := reports.WriteFilesAtomic([]string{a, b}, []func(io.Writer) error{text("A"), text("B")}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{a: "A", b: "B"} {
		if got, _ := os.ReadFile(p); string(got) != want {
			t.Errorf("%s holds %q, want %q", p, got, want)
		}
	}
}

// Issue 26: report files are readable by others (0644), as files
// os.Create makes, not the owner's only as CreateTemp's are.
func TestWriteFileAtomicMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	file := filepath.Join(t.TempDir(), "r.html")
	if err := reports.WriteFileAtomic(file, text("x")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v (%v), want 0644", fi.Mode().Perm(), err)
	}
}
