package deploy

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// readJob parses a manifest into the Kubernetes API's Job, refusing any
// field the type does not have.
func readJob(t *testing.T, file string) *batchv1.Job {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(data, &job); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		t.Fatalf("%s: %s %s, want batch/v1 Job", file, job.APIVersion, job.Kind)
	}
	return &job
}

// flag returns the value of --name=VALUE among args.
func flag(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// The shards' Job is Indexed, runs as many pods at once as it has
// shards, passes each its index as --shard $(JOB_COMPLETION_INDEX)/N with
// N its completions, and writes each result to a file of its own on a
// mounted volume; the merge Job reads every one of them from the same
// volume, with the same image.
func TestJobManifests(t *testing.T) {
	job := readJob(t, "k8s/job.yaml")
	merge := readJob(t, "k8s/merge-job.yaml")
	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("completionMode %v, want Indexed", s.CompletionMode)
	}
	if s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism || *s.Completions < 1 {
		t.Fatalf("completions %v, parallelism %v: want them equal, the shard count", s.Completions, s.Parallelism)
	}
	n := int(*s.Completions)
	if p := s.Template.Spec.RestartPolicy; p != corev1.RestartPolicyNever && p != corev1.RestartPolicyOnFailure {
		t.Fatalf("restartPolicy %q: a Job's pods must not restart always", p)
	}
	if len(s.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(s.Template.Spec.Containers))
	}
	c := s.Template.Spec.Containers[0]
	if len(c.Args) < 2 || c.Args[0] != "check" {
		t.Fatalf("args %q: want check SYSTEM ...", c.Args)
	}
	shard, ok := flag(c.Args, "shard")
	if want := "$(JOB_COMPLETION_INDEX)/" + strconv.Itoa(n); !ok || shard != want {
		t.Fatalf("--shard=%q, want %q (completions %d)", shard, want, n)
	}
	var env *corev1.EnvVar
	for i := range c.Env {
		if c.Env[i].Name == "JOB_COMPLETION_INDEX" {
			env = &c.Env[i]
		}
	}
	if env == nil || env.ValueFrom == nil || env.ValueFrom.FieldRef == nil ||
		env.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Fatalf("JOB_COMPLETION_INDEX is not mapped from the job-completion-index annotation: %+v", env)
	}
	out, ok := flag(c.Args, "out")
	if !ok || !strings.Contains(out, "$(JOB_COMPLETION_INDEX)") {
		t.Fatalf("--out=%q: each shard needs a file of its own", out)
	}
	if !mounted(s.Template.Spec, c, out) {
		t.Fatalf("--out=%q is on no volume mounted in the container", out)
	}
	const image = "livecheck:latest"
	mc := merge.Spec.Template.Spec.Containers
	if c.Image != image || len(mc) != 1 || mc[0].Image != image {
		t.Fatalf("images %q and %v, want %q", c.Image, mc, image)
	}
	if merge.Spec.CompletionMode != nil && *merge.Spec.CompletionMode == batchv1.IndexedCompletion {
		t.Fatalf("the merge Job is one pod, not Indexed")
	}
	args := mc[0].Args
	if len(args) < 1+n || args[0] != "merge" {
		t.Fatalf("merge args %q: want merge and the %d shard files", args, n)
	}
	var files []string
	for _, a := range args[1:] {
		if !strings.HasPrefix(a, "-") {
			files = append(files, a)
		}
	}
	re := regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(out), regexp.QuoteMeta("$(JOB_COMPLETION_INDEX)"), "([0-9]+)") + "$")
	for i, f := range files {
		m := re.FindStringSubmatch(f)
		if m == nil || m[1] != strconv.Itoa(i) {
			t.Fatalf("merge file %d is %q, want the shard file %s of index %d", i, f, out, i)
		}
		if !mounted(merge.Spec.Template.Spec, mc[0], f) {
			t.Fatalf("merge reads %q from no mounted volume", f)
		}
	}
	if len(files) != n {
		t.Fatalf("merge reads %d shard files, the Job writes %d", len(files), n)
	}
	if claim(s.Template.Spec) == "" || claim(s.Template.Spec) != claim(merge.Spec.Template.Spec) {
		t.Fatalf("the Jobs use the claims %q and %q: they must share one volume", claim(s.Template.Spec), claim(merge.Spec.Template.Spec))
	}
}

// mounted says whether path is under one of the container's volume
// mounts, of a volume the pod has.
func mounted(pod corev1.PodSpec, c corev1.Container, path string) bool {
	for _, m := range c.VolumeMounts {
		if !strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/") {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name == m.Name {
				return true
			}
		}
	}
	return false
}

// claim is the persistent volume claim the pod's first volume uses.
func claim(pod corev1.PodSpec) string {
	for _, v := range pod.Volumes {
		if v.PersistentVolumeClaim != nil {
			return v.PersistentVolumeClaim.ClaimName
		}
	}
	return ""
}
