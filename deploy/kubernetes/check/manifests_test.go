// Package check decodes the manifests of deploy/kubernetes strictly against
// the Kubernetes API types and asserts the invariants a fleet run relies on.
// It renders the kustomizations the way `kubectl apply -k` does (kustomize's
// krusty), so what is checked is what a cluster would be sent. It never
// talks to a cluster and never runs ptuprobe.
package check

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// root is deploy/kubernetes, the parent of this module.
const root = ".."

const (
	fleetJob   = "ptuprobe-fleet"
	mergeJob   = "ptuprobe-merge"
	runCM      = "ptuprobe-run"
	targetCM   = "ptuprobe-target"
	secretName = "ptuprobe-azure"
	keyEnv     = "AZURE_OPENAI_API_KEY"
	claimName  = "ptuprobe-results"
	redisName  = "ptuprobe-redis"
	indexEnv   = "JOB_COMPLETION_INDEX"
	indexAnno  = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
)

// rendered is one kustomization's output, decoded strictly by kind.
type rendered struct {
	jobs        map[string]*batchv1.Job
	configMaps  map[string]*corev1.ConfigMap // by generated name (with hash)
	deployments map[string]*appsv1.Deployment
	services    map[string]*corev1.Service
}

// configMap returns the generated ConfigMap whose name starts with base-.
func (r rendered) configMap(t *testing.T, base string) *corev1.ConfigMap {
	t.Helper()
	var found *corev1.ConfigMap
	for name, cm := range r.configMaps {
		if name == base || strings.HasPrefix(name, base+"-") {
			if found != nil {
				t.Fatalf("two ConfigMaps named %s*", base)
			}
			found = cm
		}
	}
	if found == nil {
		t.Fatalf("no ConfigMap %s in the render", base)
	}
	return found
}

func (r rendered) job(t *testing.T, name string) *batchv1.Job {
	t.Helper()
	j, ok := r.jobs[name]
	if !ok {
		t.Fatalf("no Job %s in the render", name)
	}
	return j
}

// render runs kustomize over dir (as kubectl apply -k would) and decodes
// every resource strictly into its API type. Any kind other than Job and
// ConfigMap fails: in particular no Secret may ever be rendered from files.
func render(t *testing.T, dir string) rendered {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize %s: %v", dir, err)
	}
	out := rendered{jobs: map[string]*batchv1.Job{}, configMaps: map[string]*corev1.ConfigMap{},
		deployments: map[string]*appsv1.Deployment{}, services: map[string]*corev1.Service{}}
	for _, res := range m.Resources() {
		doc, err := res.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		switch kind := res.GetKind(); kind {
		case "Job":
			var j batchv1.Job
			decodeStrict(t, dir+": Job "+res.GetName(), doc, &j)
			checkTypeMeta(t, j.APIVersion, j.Kind, "batch/v1", "Job")
			out.jobs[j.Name] = &j
		case "ConfigMap":
			var cm corev1.ConfigMap
			decodeStrict(t, dir+": ConfigMap "+res.GetName(), doc, &cm)
			checkTypeMeta(t, cm.APIVersion, cm.Kind, "v1", "ConfigMap")
			out.configMaps[cm.Name] = &cm
		case "Deployment":
			var d appsv1.Deployment
			decodeStrict(t, dir+": Deployment "+res.GetName(), doc, &d)
			checkTypeMeta(t, d.APIVersion, d.Kind, "apps/v1", "Deployment")
			out.deployments[d.Name] = &d
		case "Service":
			var svc corev1.Service
			decodeStrict(t, dir+": Service "+res.GetName(), doc, &svc)
			checkTypeMeta(t, svc.APIVersion, svc.Kind, "v1", "Service")
			out.services[svc.Name] = &svc
		default:
			t.Fatalf("%s renders a %s (%s); only Jobs, ConfigMaps and the Redis's Deployment and Service are expected (a Secret is never rendered from a file)", dir, kind, res.GetName())
		}
	}
	return out
}

// decodeStrict fails on unknown or duplicate fields, so a misspelt or
// misplaced field (which the API server would drop or refuse) is caught.
func decodeStrict(t *testing.T, what string, doc []byte, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(doc, into); err != nil {
		t.Fatalf("%s does not decode strictly: %v", what, err)
	}
}

func checkTypeMeta(t *testing.T, apiVersion, kind, wantAPI, wantKind string) {
	t.Helper()
	if apiVersion != wantAPI || kind != wantKind {
		t.Errorf("apiVersion/kind = %s/%s, want %s/%s", apiVersion, kind, wantAPI, wantKind)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runEnv reads run/run.env as kustomize's env files are read: KEY=VALUE
// lines, # comments and blank lines skipped.
func runEnv(t *testing.T, dir string) map[string]string {
	t.Helper()
	env := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(readFile(t, filepath.Join(dir, "run", "run.env"))))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("run.env: %q is not KEY=VALUE", line)
		}
		if _, dup := env[k]; dup {
			t.Fatalf("run.env sets %s twice", k)
		}
		env[k] = v
	}
	return env
}

func shards(t *testing.T, env map[string]string) int {
	t.Helper()
	n, err := strconv.Atoi(env["SHARDS"])
	if err != nil || n < 1 {
		t.Fatalf("run.env: SHARDS=%q is not a positive integer", env["SHARDS"])
	}
	return n
}

func onlyContainer(t *testing.T, j *batchv1.Job) corev1.Container {
	t.Helper()
	cs := j.Spec.Template.Spec.Containers
	if len(cs) != 1 || len(j.Spec.Template.Spec.InitContainers) != 0 {
		t.Fatalf("Job %s: want exactly one container, got %d (+%d init)", j.Name, len(cs), len(j.Spec.Template.Spec.InitContainers))
	}
	return cs[0]
}

func envVar(c corev1.Container, name string) (corev1.EnvVar, bool) {
	n := 0
	var found corev1.EnvVar
	for _, e := range c.Env {
		if e.Name == name {
			found = e
			n++
		}
	}
	return found, n == 1
}

// flag returns the values of --name=VALUE (or --name VALUE) in args.
func flag(args []string, name string) []string {
	var vals []string
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			vals = append(vals, v)
		} else if a == "--"+name && i+1 < len(args) {
			vals = append(vals, args[i+1])
		}
	}
	return vals
}

func oneFlag(t *testing.T, job string, args []string, name string) string {
	t.Helper()
	v := flag(args, name)
	if len(v) != 1 {
		t.Fatalf("Job %s: --%s given %d times (%q), want once", job, name, len(v), v)
	}
	return v[0]
}

func TestSourcesDecodeStrictly(t *testing.T) {
	for path, into := range map[string]any{
		"fleet/job.yaml":      &batchv1.Job{},
		"merge/job.yaml":      &batchv1.Job{},
		"results-pvc.yaml":    &corev1.PersistentVolumeClaim{},
		"results-reader.yaml": &corev1.Pod{},
	} {
		decodeStrict(t, path, readFile(t, filepath.Join(root, path)), into)
	}
}

func TestFleetJob(t *testing.T) { checkFleet(t, "fleet") }

// checkFleet checks the fleet Job that the kustomization in dir renders.
func checkFleet(t *testing.T, dir string) rendered {
	t.Helper()
	env := runEnv(t, root)
	n := shards(t, env)
	r := render(t, filepath.Join(root, dir))
	if len(r.jobs) != 1 {
		t.Fatalf("fleet renders %d Jobs, want 1", len(r.jobs))
	}
	j := r.job(t, fleetJob)
	s := j.Spec

	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode = %v, want Indexed", s.CompletionMode)
	}
	if s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism {
		t.Errorf("completions %v != parallelism %v", s.Completions, s.Parallelism)
	} else if int(*s.Completions) != n {
		t.Errorf("completions = %d, want SHARDS = %d from run.env", *s.Completions, n)
	}
	checkJobBounds(t, j)
	checkPodSecurity(t, j.Name, j.Spec.Template.Spec)

	c := onlyContainer(t, j)
	if len(c.Command) != 0 {
		t.Errorf("command = %q: the image's ENTRYPOINT is ptuprobe, give args only", c.Command)
	}
	if len(c.Args) == 0 || c.Args[0] != "characterize" {
		t.Fatalf("args = %q, want characterize first", c.Args)
	}
	if got := oneFlag(t, j.Name, c.Args, "shard"); got != "/$(SHARDS)" {
		t.Errorf("--shard=%s, want /$(SHARDS) (the index from %s)", got, indexEnv)
	}
	if got := oneFlag(t, j.Name, c.Args, "start-at"); got != "$(START_AT)" {
		t.Errorf("--start-at=%s, want $(START_AT)", got)
	}
	if got := oneFlag(t, j.Name, c.Args, "out-dir"); !strings.Contains(got, "$("+indexEnv+")") || !strings.Contains(got, "$(START_AT)") {
		t.Errorf("--out-dir=%s: each worker needs its own folder per run ($(%s), $(START_AT))", got, indexEnv)
	}
	if e, ok := envVar(c, indexEnv); !ok || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != indexAnno {
		t.Errorf("%s must be set once from the downward API (%s), got %+v", indexEnv, indexAnno, e)
	}
	for _, name := range []string{"AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_DEPLOYMENT"} {
		e, ok := envVar(c, name)
		if !ok || e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef == nil || !strings.HasPrefix(e.ValueFrom.ConfigMapKeyRef.Name, targetCM) {
			t.Errorf("%s must come from the ConfigMap %s, got %+v", name, targetCM, e)
		}
	}
	if got := oneFlag(t, j.Name, c.Args, "endpoint"); got != "$(AZURE_OPENAI_ENDPOINT)" {
		t.Errorf("--endpoint=%s, want $(AZURE_OPENAI_ENDPOINT)", got)
	}
	if got := oneFlag(t, j.Name, c.Args, "deployment"); got != "$(AZURE_OPENAI_DEPLOYMENT)" {
		t.Errorf("--deployment=%s, want $(AZURE_OPENAI_DEPLOYMENT)", got)
	}

	// The key: from the Secret, by secretKeyRef, and nowhere else.
	e, ok := envVar(c, keyEnv)
	if !ok || e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil ||
		e.ValueFrom.SecretKeyRef.Name != secretName || e.ValueFrom.SecretKeyRef.Key != keyEnv {
		t.Errorf("%s must come from secretKeyRef %s/%s, got %+v", keyEnv, secretName, keyEnv, e)
	}
	checkNoSecretsInline(t, j.Name, c)
	checkExpansions(t, j.Name, c)
	checkEnvRefs(t, r, j.Name, c)
	checkResultsVolume(t, j, oneFlag(t, j.Name, c.Args, "out-dir"))
	return r
}

// TestRedisForTheFleet: the optional Redis is a Deployment and a Service
// that selects its pods, non-root, without persistence or a volume.
func TestRedisForTheFleet(t *testing.T) {
	r := render(t, filepath.Join(root, "redis"))
	d, svc := r.deployments[redisName], r.services[redisName]
	if len(r.deployments) != 1 || len(r.services) != 1 || d == nil || svc == nil || len(r.jobs) != 0 {
		t.Fatalf("redis renders %d Deployments and %d Services, want %s of each", len(r.deployments), len(r.services), redisName)
	}
	spec := d.Spec.Template.Spec
	checkPodSecurity(t, d.Name, spec)
	if len(spec.Volumes) != 0 {
		t.Errorf("the Redis has volumes %v: it keeps nothing worth keeping", spec.Volumes)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers", len(spec.Containers))
	}
	c := spec.Containers[0]
	if args := strings.Join(c.Args, " "); !strings.Contains(args, "--save ") || !strings.Contains(args, "--appendonly no") {
		t.Errorf("redis args %q: want no persistence (--save \"\", --appendonly no)", c.Args)
	}
	for k, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[k] != v || d.Spec.Selector.MatchLabels[k] != v {
			t.Errorf("the Service selects %s=%s, which the Deployment's pods do not carry", k, v)
		}
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 6379 || len(c.Ports) != 1 || c.Ports[0].ContainerPort != 6379 {
		t.Errorf("ports: Service %v, container %v; want 6379", svc.Spec.Ports, c.Ports)
	}
}

// TestCoordinatedFleet: the fleet with --coordinate keeps every invariant
// of the fleet, and names the Redis's Service, once.
func TestCoordinatedFleet(t *testing.T) {
	r := checkFleet(t, "fleet-coordinated")
	c := onlyContainer(t, r.job(t, fleetJob))
	if got, want := oneFlag(t, fleetJob, c.Args, "coordinate"), "redis://"+redisName+":6379/0"; got != want {
		t.Errorf("--coordinate=%s, want %s (the Service of ../redis)", got, want)
	}
	if got := oneFlag(t, fleetJob, c.Args, "policy"); got != "slots" {
		t.Errorf("--policy=%s, want slots: the policy coordination was measured to help", got)
	}
	oneFlag(t, fleetJob, c.Args, "max-attempts")
}

func TestMergeJob(t *testing.T) {
	n := shards(t, runEnv(t, root))
	fleet := render(t, filepath.Join(root, "fleet"))
	merge := render(t, filepath.Join(root, "merge"))
	if len(merge.jobs) != 1 {
		t.Fatalf("merge renders %d Jobs, want 1", len(merge.jobs))
	}
	j := merge.job(t, mergeJob)
	if j.Spec.CompletionMode != nil && *j.Spec.CompletionMode != batchv1.NonIndexedCompletion {
		t.Errorf("the merge is one pod, got completionMode %v", *j.Spec.CompletionMode)
	}
	if (j.Spec.Completions != nil && *j.Spec.Completions != 1) || (j.Spec.Parallelism != nil && *j.Spec.Parallelism != 1) {
		t.Errorf("the merge is one pod: completions %v parallelism %v", j.Spec.Completions, j.Spec.Parallelism)
	}
	checkJobBounds(t, j)
	checkPodSecurity(t, j.Name, j.Spec.Template.Spec)
	c := onlyContainer(t, j)
	if len(c.Args) == 0 || c.Args[0] != "analyze" {
		t.Fatalf("args = %q, want analyze first", c.Args)
	}
	if _, ok := envVar(c, keyEnv); ok {
		t.Errorf("the merge sends nothing and needs no key")
	}
	checkNoSecretsInline(t, j.Name, c)
	checkExpansions(t, j.Name, c)
	checkEnvRefs(t, merge, j.Name, c)

	// Inputs: exactly the file each worker writes, for every index.
	fc := onlyContainer(t, fleet.job(t, fleetJob))
	workerDir := oneFlag(t, fleetJob, fc.Args, "out-dir")
	var want []string
	for i := range n {
		want = append(want, strings.ReplaceAll(workerDir, "$("+indexEnv+")", strconv.Itoa(i))+"/results.csv")
	}
	var inputs []string
	for i := 1; i < len(c.Args); i++ {
		a := c.Args[i]
		if strings.HasPrefix(a, "--") {
			if !strings.Contains(a, "=") && a != "--log-x" && a != "--timeline" {
				t.Fatalf("merge: write %s as --flag=value, so inputs can be told from values", a)
			}
			continue
		}
		inputs = append(inputs, a)
	}
	if strings.Join(inputs, "\n") != strings.Join(want, "\n") {
		t.Errorf("merge inputs (SHARDS=%d):\n  %s\nwant:\n  %s", n, strings.Join(inputs, "\n  "), strings.Join(want, "\n  "))
	}
	out := oneFlag(t, j.Name, c.Args, "out-dir")
	if !strings.Contains(out, "$(START_AT)") || strings.Contains(out, "$("+indexEnv+")") {
		t.Errorf("merge --out-dir=%s: want the run's folder, $(START_AT), shared by no worker", out)
	}
	checkResultsVolume(t, j, out)

	// The merge sees the very run the fleet ran: same start time, same image.
	if a, b := fleet.configMap(t, runCM).Name, merge.configMap(t, runCM).Name; a != b {
		t.Errorf("fleet and merge render different run settings: %s vs %s", a, b)
	}
	if c.Image != fc.Image {
		t.Errorf("merge image %q != fleet image %q", c.Image, fc.Image)
	}
	if fc.Image == "ptuprobe" || !strings.Contains(fc.Image, ":") {
		t.Errorf("image %q: the images transformer of run/ was not applied", fc.Image)
	}
}

// TestStartTimeInOnePlace: START_AT is written in run/run.env and nowhere
// else; the Jobs take it only through the generated ConfigMap.
func TestStartTimeInOnePlace(t *testing.T) {
	env := runEnv(t, root)
	start, ok := env["START_AT"]
	if !ok {
		t.Fatal("run.env sets no START_AT")
	}
	if _, err := time.Parse(time.RFC3339, start); err != nil {
		t.Errorf("run.env: START_AT=%q is not RFC 3339: %v", start, err)
	}
	// No other file of deploy/kubernetes (but its docs) holds a time.
	stamp := regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}`)
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "check" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".md") || filepath.Clean(path) == filepath.Join(root, "run", "run.env") {
			return nil
		}
		if loc := stamp.Find(readFile(t, path)); loc != nil {
			t.Errorf("%s holds a time (%s): the start time belongs in run/run.env only", path, loc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"fleet", "merge"} {
		r := render(t, filepath.Join(root, dir))
		cm := r.configMap(t, runCM)
		if cm.Data["START_AT"] != start {
			t.Errorf("%s: ConfigMap START_AT = %q, want %q from run.env", dir, cm.Data["START_AT"], start)
		}
		for _, j := range r.jobs {
			c := onlyContainer(t, j)
			e, ok := envVar(c, "START_AT")
			if !ok || e.Value != "" || e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef == nil ||
				e.ValueFrom.ConfigMapKeyRef.Name != cm.Name || e.ValueFrom.ConfigMapKeyRef.Key != "START_AT" {
				t.Errorf("%s: START_AT must come from ConfigMap %s, got %+v", j.Name, cm.Name, e)
			}
			for _, a := range c.Args {
				if stamp.MatchString(a) {
					t.Errorf("%s: argument %q holds a time", j.Name, a)
				}
			}
		}
	}
}

// TestShardCountFollowsRunEnv renders a copy with another SHARDS: the Job's
// completions and parallelism follow, so N is written once.
func TestShardCountFollowsRunEnv(t *testing.T) {
	tmp := t.TempDir()
	for _, f := range []string{"run/kustomization.yaml", "run/run.env", "run/target.env", "fleet/kustomization.yaml", "fleet/job.yaml"} {
		b := readFile(t, filepath.Join(root, f))
		if f == "run/run.env" {
			b = regexp.MustCompile(`(?m)^SHARDS=.*$`).ReplaceAll(b, []byte("SHARDS=7"))
		}
		if err := os.MkdirAll(filepath.Join(tmp, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	j := render(t, filepath.Join(tmp, "fleet")).job(t, fleetJob)
	if j.Spec.Completions == nil || *j.Spec.Completions != 7 || j.Spec.Parallelism == nil || *j.Spec.Parallelism != 7 {
		t.Errorf("with SHARDS=7: completions %v, parallelism %v", j.Spec.Completions, j.Spec.Parallelism)
	}
}

func TestResultsClaim(t *testing.T) {
	var pvc corev1.PersistentVolumeClaim
	decodeStrict(t, "results-pvc.yaml", readFile(t, filepath.Join(root, "results-pvc.yaml")), &pvc)
	checkTypeMeta(t, pvc.APIVersion, pvc.Kind, "v1", "PersistentVolumeClaim")
	if pvc.Name != claimName {
		t.Errorf("claim %q, want %q", pvc.Name, claimName)
	}
	rwx := false
	for _, m := range pvc.Spec.AccessModes {
		rwx = rwx || m == corev1.ReadWriteMany
	}
	if !rwx {
		t.Errorf("access modes %v: workers on several nodes need ReadWriteMany", pvc.Spec.AccessModes)
	}
	if q := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; q.IsZero() {
		t.Errorf("no storage request")
	}
}

func TestResultsReader(t *testing.T) {
	var pod corev1.Pod
	decodeStrict(t, "results-reader.yaml", readFile(t, filepath.Join(root, "results-reader.yaml")), &pod)
	checkTypeMeta(t, pod.APIVersion, pod.Kind, "v1", "Pod")
	checkPodSecurity(t, pod.Name, pod.Spec)
	if pod.Spec.ActiveDeadlineSeconds == nil || *pod.Spec.ActiveDeadlineSeconds <= 0 {
		t.Errorf("the reader pod must end by itself (activeDeadlineSeconds)")
	}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && (v.PersistentVolumeClaim.ClaimName != claimName || !v.PersistentVolumeClaim.ReadOnly) {
			t.Errorf("reader volume %s: want %s read-only", v.Name, claimName)
		}
	}
	for _, c := range pod.Spec.Containers {
		for _, m := range c.VolumeMounts {
			if !m.ReadOnly {
				t.Errorf("reader mount %s is writable", m.MountPath)
			}
		}
	}
}

// checkJobBounds: never re-run, always ends, cleaned up after.
func checkJobBounds(t *testing.T, j *batchv1.Job) {
	t.Helper()
	s := j.Spec
	if s.BackoffLimit == nil || *s.BackoffLimit != 0 {
		t.Errorf("%s: backoffLimit %v, want 0 (a load test is never re-run silently)", j.Name, s.BackoffLimit)
	}
	if s.BackoffLimitPerIndex != nil && *s.BackoffLimitPerIndex != 0 {
		t.Errorf("%s: backoffLimitPerIndex %d re-runs a worker", j.Name, *s.BackoffLimitPerIndex)
	}
	if s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("%s: restartPolicy %q, want Never", j.Name, s.Template.Spec.RestartPolicy)
	}
	if s.TTLSecondsAfterFinished == nil || *s.TTLSecondsAfterFinished <= 0 {
		t.Errorf("%s: ttlSecondsAfterFinished %v, want a positive number", j.Name, s.TTLSecondsAfterFinished)
	}
	if s.ActiveDeadlineSeconds == nil || *s.ActiveDeadlineSeconds <= 0 {
		t.Errorf("%s: activeDeadlineSeconds %v, want a bound", j.Name, s.ActiveDeadlineSeconds)
	}
}

// checkPodSecurity: non-root, read-only root, no capabilities, bounded.
func checkPodSecurity(t *testing.T, name string, p corev1.PodSpec) {
	t.Helper()
	sc := p.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Errorf("%s: pod securityContext must set runAsNonRoot and a non-zero runAsUser, got %+v", name, sc)
	}
	if sc != nil && (sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault) {
		t.Errorf("%s: seccompProfile RuntimeDefault expected", name)
	}
	if p.AutomountServiceAccountToken == nil || *p.AutomountServiceAccountToken {
		t.Errorf("%s: automountServiceAccountToken must be false (the tool needs no API access)", name)
	}
	if p.HostNetwork || p.HostPID || p.HostIPC {
		t.Errorf("%s: host namespaces", name)
	}
	for _, c := range append(append([]corev1.Container{}, p.InitContainers...), p.Containers...) {
		cs := c.SecurityContext
		if cs == nil {
			t.Errorf("%s/%s: no securityContext", name, c.Name)
			continue
		}
		if cs.RunAsUser != nil && *cs.RunAsUser == 0 || cs.RunAsNonRoot != nil && !*cs.RunAsNonRoot {
			t.Errorf("%s/%s: runs as root", name, c.Name)
		}
		if cs.Privileged != nil && *cs.Privileged {
			t.Errorf("%s/%s: privileged", name, c.Name)
		}
		if cs.ReadOnlyRootFilesystem == nil || !*cs.ReadOnlyRootFilesystem {
			t.Errorf("%s/%s: readOnlyRootFilesystem must be true", name, c.Name)
		}
		if cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation {
			t.Errorf("%s/%s: allowPrivilegeEscalation must be false", name, c.Name)
		}
		if cs.Capabilities == nil || len(cs.Capabilities.Add) != 0 ||
			len(cs.Capabilities.Drop) != 1 || cs.Capabilities.Drop[0] != "ALL" {
			t.Errorf("%s/%s: capabilities must drop ALL and add none, got %+v", name, c.Name, cs.Capabilities)
		}
		for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, okR := c.Resources.Requests[res]
			lim, okL := c.Resources.Limits[res]
			if !okR || !okL || req.IsZero() || lim.Cmp(req) < 0 {
				t.Errorf("%s/%s: %s request %v and limit %v must be set, request ≤ limit", name, c.Name, res, req.String(), lim.String())
			}
		}
	}
}

var secretish = regexp.MustCompile(`(?i)(^|_)(key|token|secret|password)(_|$)`)

// checkNoSecretsInline: a secret-like variable comes from a Secret, and no
// argument expands one (arguments are visible to anyone who can read pods).
func checkNoSecretsInline(t *testing.T, job string, c corev1.Container) {
	t.Helper()
	fromSecret := map[string]bool{}
	for _, e := range c.Env {
		isSecret := e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil
		fromSecret[e.Name] = isSecret
		if secretish.MatchString(e.Name) && (e.Value != "" || !isSecret) {
			t.Errorf("%s: env %s must come from a secretKeyRef", job, e.Name)
		}
	}
	if len(c.EnvFrom) != 0 {
		t.Errorf("%s: envFrom hides which variables a pod gets; list them", job)
	}
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		for _, m := range ref.FindAllStringSubmatch(a, -1) {
			if fromSecret[m[1]] || secretish.MatchString(m[1]) {
				t.Errorf("%s: argument %q expands the secret $(%s); keys are read from the environment", job, a, m[1])
			}
		}
		if strings.Contains(a, keyEnv) || strings.HasPrefix(a, "--api-key=") {
			t.Errorf("%s: argument %q names the key", job, a)
		}
	}
}

var ref = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// checkExpansions: every $(VAR) in the arguments is a variable of the
// container. The kubelet leaves an unknown one as literal text, so a typo
// would reach ptuprobe as "$(STRAT_AT)" instead of failing here.
func checkExpansions(t *testing.T, job string, c corev1.Container) {
	t.Helper()
	defined := map[string]bool{}
	for _, e := range c.Env {
		defined[e.Name] = true
	}
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		if strings.Contains(a, "$$") {
			t.Errorf("%s: %q escapes a $; not expected here", job, a)
		}
		for _, m := range ref.FindAllStringSubmatch(a, -1) {
			if !defined[m[1]] {
				t.Errorf("%s: argument %q expands $(%s), which is not in the container's env", job, a, m[1])
			}
		}
		if strings.Count(a, "$") != len(ref.FindAllString(a, -1)) {
			t.Errorf("%s: argument %q has a $ that is not a $(VAR)", job, a)
		}
	}
}

// checkEnvRefs: every configMapKeyRef names a rendered ConfigMap and one of
// its keys (else the pod waits in CreateContainerConfigError).
func checkEnvRefs(t *testing.T, r rendered, job string, c corev1.Container) {
	t.Helper()
	for _, e := range c.Env {
		if e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef == nil {
			continue
		}
		ref := e.ValueFrom.ConfigMapKeyRef
		cm, ok := r.configMaps[ref.Name]
		if !ok {
			t.Errorf("%s: env %s refers to ConfigMap %s, not rendered (generated names carry a hash)", job, e.Name, ref.Name)
			continue
		}
		if _, ok := cm.Data[ref.Key]; !ok {
			t.Errorf("%s: env %s refers to key %s, which ConfigMap %s lacks", job, e.Name, ref.Key, ref.Name)
		}
	}
}

// checkResultsVolume: dir is under a mount of the results claim, and
// nothing else is writable (the root filesystem is read-only).
func checkResultsVolume(t *testing.T, j *batchv1.Job, dir string) {
	t.Helper()
	p := j.Spec.Template.Spec
	vols := map[string]corev1.Volume{}
	for _, v := range p.Volumes {
		vols[v.Name] = v
	}
	c := onlyContainer(t, j)
	under := false
	for _, m := range c.VolumeMounts {
		v, ok := vols[m.Name]
		if !ok {
			t.Errorf("%s: mount %s has no volume", j.Name, m.Name)
			continue
		}
		if v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != claimName {
			t.Errorf("%s: volume %s is not the claim %s", j.Name, m.Name, claimName)
			continue
		}
		if strings.HasPrefix(dir, strings.TrimSuffix(m.MountPath, "/")+"/") && !m.ReadOnly {
			under = true
		}
	}
	if !under {
		t.Errorf("%s: %s is not on a writable mount of the claim %s", j.Name, dir, claimName)
	}
}

func TestMain(m *testing.M) {
	if _, err := os.Stat(filepath.Join(root, "fleet", "kustomization.yaml")); err != nil {
		fmt.Fprintln(os.Stderr, "run from deploy/kubernetes/check:", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}
