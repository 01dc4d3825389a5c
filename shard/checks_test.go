package shard_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
)

// editShard writes a copy of shard file src as dir/name with f applied
// to its JSON object (numbers kept as written).
func editShard(t *testing.T, src, dir, name string, f func(m map[string]any)) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func obj(m map[string]any, key string) map[string]any { return m[key].(map[string]any) }

// Issue 25, item 4: merge checks what it can. A shard whose config was
// edited under its config hash, shards split at different depths, a
// shard naming another shard's fingerprint file, an ok shard whose
// search is not complete, shards of two executables: each was merged,
// to an "ok" (and a wrong exact union); each is now refused, a damaged
// file with exit 2, shards that do not make one check with exit 3, in
// one line that says why.
func TestMergeChecksWhatItCan(t *testing.T) {
	dir := t.TempDir()
	files := shards(t, dir, 2, []string{"randtree", "--nodes", "3", "--depth", "6"}, "--save-fingerprints")
	if code, rep, stderr := mergeJSON(t, files...); code != livecheck.ExitOK || !rep.Merge.UnionExact || rep.Merge.SplitDepth < 1 {
		t.Fatalf("the shards as written: exit %d %s", code, stderr)
	}
	for _, tc := range []struct {
		name  string
		shard int
		f     func(m map[string]any)
		code  int
		want  string
	}{
		{"config edited", 1, func(m map[string]any) { obj(m, "config")["depth"] = 20 }, livecheck.ExitUsage,
			"not a valid shard file: its config does not hash to its identity's config_sha256: the file was edited or damaged"},
		{"another split depth", 1, func(m map[string]any) { m["split_depth"] = 3 }, livecheck.ExitInconclusive,
			"the shards split the search at different depths: " + files[0] + " at 4, "},
		{"another shard's fingerprints", 0, func(m map[string]any) {
			data, _ := os.ReadFile(files[1])
			var other map[string]any
			json.Unmarshal(data, &other)
			m["fingerprints"] = other["fingerprints"]
		}, livecheck.ExitUsage, "shard-1.fingerprints: holds the fingerprints of shard 1/2 of the check with config_sha256 "},
		{"not complete", 0, func(m map[string]any) { obj(m, "report")["complete"] = false }, livecheck.ExitUsage,
			"not a valid shard file: its result is ok, yet its search is not complete"},
		{"another executable", 1, func(m map[string]any) { obj(m, "identity")["executable_sha256"] = strings.Repeat("ab", 32) }, livecheck.ExitInconclusive,
			"the shards come from different executables: " + files[0] + " from one with SHA-256 "},
		{"no executable", 1, func(m map[string]any) { delete(obj(m, "identity"), "executable_sha256") }, livecheck.ExitUsage,
			"its identity has no executable_sha256"},
		{"a report of another configuration", 1, func(m map[string]any) { obj(m, "report")["nodes"] = 4 }, livecheck.ExitUsage,
			"its report is of another configuration than its config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]string{}, files...)
			in[tc.shard] = editShard(t, files[tc.shard], dir, "edited.json", tc.f)
			code, _, stderr := mergeJSON(t, in...)
			if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Fatalf("exit %d, want %d; stderr %q, want one line with %q", code, tc.code, stderr, tc.want)
			}
		})
	}
}
