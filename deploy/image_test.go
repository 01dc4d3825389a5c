package deploy

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The image the Dockerfile describes, built with no daemon and nothing
// pulled: a static livecheck binary (CGO_ENABLED=0) as the only layer of
// an empty image (FROM scratch), itself the entrypoint, written as an
// OCI image layout and read back.
func TestImageFromScratch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the livecheck binary")
	}
	dockerfile, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"FROM scratch", "CGO_ENABLED=0", `ENTRYPOINT ["/livecheck"]`} {
		if !bytes.Contains(dockerfile, []byte(want)) {
			t.Fatalf("the Dockerfile does not say %s", want)
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "livecheck")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/livecheck")
	build.Dir = ".." // livecheck's own module
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if f, err := elf.Open(bin); err == nil {
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Fatalf("the binary asks for a dynamic loader: it would not run FROM scratch")
			}
		}
		f.Close()
	}

	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var layerTar bytes.Buffer
	tw := tar.NewWriter(&layerTar)
	tw.WriteHeader(&tar.Header{Name: "livecheck", Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg})
	tw.Write(data)
	tw.Close()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(layerTar.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	img, err = mutate.Config(img, v1.Config{Entrypoint: []string{"/livecheck"}})
	if err != nil {
		t.Fatal(err)
	}
	cf, _ := img.ConfigFile()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	p, err := layout.Write(filepath.Join(dir, "oci"), empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img); err != nil {
		t.Fatal(err)
	}

	// Read back from the layout, as a registry or runtime would.
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil || len(m.Manifests) != 1 {
		t.Fatalf("the layout's index: %v, %+v", err, m)
	}
	got, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := got.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Config.Entrypoint, []string{"/livecheck"}) || cfg.OS != "linux" {
		t.Fatalf("entrypoint %q, os %q", cfg.Config.Entrypoint, cfg.OS)
	}
	layers, err := got.Layers()
	if err != nil || len(layers) != 1 || len(cfg.RootFS.DiffIDs) != 1 {
		t.Fatalf("%d layers (%v): want the binary's alone, no base layers", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	if strings.Join(names, ",") != "livecheck" {
		t.Fatalf("the layer holds %q, want the binary alone", names)
	}
}
