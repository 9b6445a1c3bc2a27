package cmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v2"

	"github.com/ptuprobe/ptuprobe/internal/policylab"
	"github.com/ptuprobe/ptuprobe/report"
)

// action is the shape of a composite action's metadata (action.yml).
type action struct {
	Name, Description, Author string
	Branding                  map[string]string
	Inputs                    map[string]struct {
		Description string
		Required    bool
		Default     *string
	}
	Outputs map[string]struct {
		Description string
		Value       string
	}
	Runs struct {
		Using string
		Steps []struct {
			ID    string
			Name  string
			Uses  string
			Run   string
			Shell string
			If    string
			With  map[string]string
			Env   map[string]string
		}
	}
}

// TestActionMetadata checks the repository's GitHub Action, action.yml,
// beyond what actionlint checks of it (that it parses, and the inputs a
// workflow passes it): a composite action with the inputs it promises and
// defaults that work, a report-dir output set by a step, every input and
// step it names declared, a shell on every run step, summary.md appended
// to the job summary and the report uploaded, and characterize.yml using
// it.
func TestActionMetadata(t *testing.T) {
	t.Parallel()
	a, b := readAction(t)
	if a.Name == "" || a.Description == "" || a.Runs.Using != "composite" {
		t.Fatalf("action.yml: name %q, description %q, runs.using %q; want a named, described composite action", a.Name, a.Description, a.Runs.Using)
	}
	for _, in := range []string{"command", "args", "report-dir", "version", "go-version"} {
		if i, ok := a.Inputs[in]; !ok || i.Description == "" || i.Default == nil {
			t.Errorf("input %q missing, undescribed or without a default", in)
		}
	}
	if d := a.Inputs["command"].Default; d != nil {
		if c, _, err := NewRootCommand().Find([]string{*d}); err != nil || c.Name() != *d || !c.Runnable() {
			t.Errorf("the default command %q is not a ptuprobe command", *d)
		}
	}
	if o := a.Outputs["report-dir"]; o.Description == "" || o.Value != "${{ steps.run.outputs.report-dir }}" {
		t.Errorf("output report-dir: %+v", o)
	}
	ids := map[string]bool{}
	var summary, upload bool
	for i, s := range a.Runs.Steps {
		ids[s.ID] = true
		if s.Run != "" && s.Shell == "" {
			t.Errorf("step %d (%s) runs a script without a shell", i, s.Name)
		}
		if (s.Run == "") == (s.Uses == "") {
			t.Errorf("step %d (%s): want either run or uses", i, s.Name)
		}
		summary = summary || strings.Contains(s.Run, `>> "$GITHUB_STEP_SUMMARY"`) && s.If == "always()" // which file: TestActionSteps
		upload = upload || strings.HasPrefix(s.Uses, "actions/upload-artifact@") && strings.HasPrefix(s.If, "always()") && strings.Contains(s.With["path"], "steps.run.outputs.report-dir")
		if strings.Contains(s.Run, "${{") {
			t.Errorf("step %d (%s) expands an expression in its script: pass it through env", i, s.Name)
		}
	}
	if !summary || !upload {
		t.Errorf("summary.md appended to the job summary: %v; the report uploaded: %v (both also on failure)", summary, upload)
	}
	for _, m := range regexp.MustCompile(`inputs\.([a-z-]+)`).FindAllStringSubmatch(string(b), -1) {
		if _, ok := a.Inputs[m[1]]; !ok {
			t.Errorf("action.yml names input %q, which it does not declare", m[1])
		}
	}
	for _, m := range regexp.MustCompile(`steps\.([a-z-]+)\.outputs`).FindAllStringSubmatch(string(b), -1) {
		if !ids[m[1]] {
			t.Errorf("action.yml names step %q, which has no such id", m[1])
		}
	}
	wf, err := os.ReadFile(filepath.Join("..", ".github", "workflows", "characterize.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(wf), "uses: ./\n") {
		t.Error("characterize.yml does not use the action (uses: ./)")
	}
}

// readAction reads ../action.yml, strictly.
func readAction(t *testing.T) (action, []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.UnmarshalStrict(b, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a, b
}

// expression is a value of the one form the action's env and with
// values take: ${{ a.b.c }}.
var expression = regexp.MustCompile(`^\$\{\{ *([a-z][a-z.-]*) *\}\}$`)

// actionRun is one use of the action in a job, its steps run as a runner
// runs them (bash -eo pipefail), ptuprobe a stand-in that records its
// arguments, exits with exit and writes writes (files of the report dir)
// first.
type actionRun struct {
	job       string // the job's directory: RUNNER_TEMP, the working directory
	inputs    map[string]string
	jobIndex  string
	exit      string
	writes    []string
	outputs   map[string]string // the run step's, as $GITHUB_OUTPUT holds them
	lines     []string          // $GITHUB_OUTPUT's lines
	args      []string          // ptuprobe's, nil when it did not run
	summary   string            // what the job summary got
	artifact  string            // the upload step's name, "" when it does not upload
	uploadDir string            // the first line of its path
}

// run runs the action's run step and job summary step for r, and says
// what its upload step would upload.
func (r *actionRun) run(t *testing.T, a action) {
	t.Helper()
	bin := filepath.Join(r.job, "bin")
	os.MkdirAll(bin, 0o755)
	stub := `#!/bin/sh
for f in $STUB_WRITES; do echo "# this run's $f" > "$f"; done
printf '%s\0' "$@" > "$STUB_ARGS"
exit "${STUB_EXIT:-0}"
`
	if err := os.WriteFile(filepath.Join(bin, "ptuprobe"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	inputs := map[string]string{}
	for name, in := range a.Inputs {
		if in.Default != nil {
			inputs[name] = *in.Default
		}
	}
	for k, v := range r.inputs {
		inputs[k] = v
	}
	ghOut, ghSummary, argsFile := filepath.Join(r.job, "output"), filepath.Join(r.job, "step-summary"), filepath.Join(r.job, "args")
	os.Remove(ghOut)
	os.Remove(ghSummary)
	os.Remove(argsFile)
	var writes []string
	for _, w := range r.writes {
		writes = append(writes, filepath.Join(inputs["report-dir"], w))
	}
	context := map[string]string{"github.job": r.job[strings.LastIndex(r.job, "/")+1:], "strategy.job-index": r.jobIndex}
	for k, v := range inputs {
		context["inputs."+k] = v
	}
	eval := func(v string) string {
		m := expression.FindStringSubmatch(v)
		if m == nil {
			t.Fatalf("action.yml: %q is not an expression this test evaluates", v)
		}
		return context[m[1]] // an output not set is empty, as on a runner
	}
	for _, s := range a.Runs.Steps {
		if s.Run == "" {
			if strings.HasPrefix(s.Uses, "actions/upload-artifact@") && (s.If == "always()" || r.outputs["report-dir"] != "") {
				r.artifact, r.uploadDir = eval(s.With["name"]), eval(strings.SplitN(s.With["path"], "\n", 2)[0])
			}
			continue
		}
		if s.ID != "run" && s.Name != "Job summary" {
			continue
		}
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", s.Run)
		cmd.Dir = r.job
		cmd.Env = []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "RUNNER_TEMP=" + r.job, "GITHUB_JOB=" + context["github.job"],
			"GITHUB_OUTPUT=" + ghOut, "GITHUB_STEP_SUMMARY=" + ghSummary,
			"STUB_ARGS=" + argsFile, "STUB_EXIT=" + r.exit, "STUB_WRITES=" + strings.Join(writes, " ")}
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+eval(v))
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("step %q: %v: %s", s.Name, err, stderr.String())
		}
		if s.ID == "run" {
			out, _ := os.ReadFile(ghOut)
			r.lines = strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			r.outputs = map[string]string{}
			for _, l := range r.lines {
				if k, v, ok := strings.Cut(l, "="); ok {
					r.outputs[k] = v
					context["steps.run.outputs."+k] = v
				}
			}
		}
	}
	if b, err := os.ReadFile(argsFile); err == nil {
		r.args = strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	}
	b, _ := os.ReadFile(ghSummary)
	r.summary = string(b)
}

// TestActionSteps runs the action's shell as a runner would, ptuprobe a
// stand-in: args of white space alone are no argument; every use in a
// workflow run (twice in a job, a matrix) uploads under a name of its
// own; a report-dir with a line break writes no line of its own to
// $GITHUB_OUTPUT (and is refused); the job summary gets this run's
// summary, never one an earlier step left in the report dir, and says so
// when there is none.
func TestActionSteps(t *testing.T) {
	t.Parallel()
	a, _ := readAction(t)
	dir := t.TempDir()
	use := func(job string, inputs map[string]string) *actionRun {
		return &actionRun{job: filepath.Join(dir, job), inputs: inputs, jobIndex: "0", writes: []string{report.SummaryFile}}
	}

	// Arguments: white space alone is none; quotes are honoured.
	for args, want := range map[string][]string{
		"":                    {"characterize", "--out-dir", "ptuprobe-report"},
		"   ":                 {"characterize", "--out-dir", "ptuprobe-report"},
		" \t ":                {"characterize", "--out-dir", "ptuprobe-report"},
		`--quiet  'a b' "" x`: {"characterize", "--quiet", "a b", "", "x", "--out-dir", "ptuprobe-report"},
	} {
		r := use("args", map[string]string{"args": args})
		r.run(t, a)
		if !slices.Equal(r.args, want) || r.outputs["exit-code"] != "0" {
			t.Errorf("args %q: ptuprobe got %q, exit %s; want %q", args, r.args, r.outputs["exit-code"], want)
		}
	}
	r := use("quotes", map[string]string{"args": `--label 'a=b`})
	if r.run(t, a); r.args != nil || r.outputs["exit-code"] != "2" {
		t.Errorf("unbalanced quotes: ptuprobe got %q, exit %s; want it not run, exit 2", r.args, r.outputs["exit-code"])
	}

	// Artifact names: each use its own.
	var names []string
	for _, r := range []*actionRun{use("matrix", nil), use("matrix", map[string]string{"report-dir": "second"}), {job: filepath.Join(dir, "matrix-leg-1", "matrix"), jobIndex: "1"}} {
		r.run(t, a)
		names = append(names, r.artifact)
	}
	if want := []string{"ptuprobe-report-matrix-0", "ptuprobe-report-matrix-0-2", "ptuprobe-report-matrix-1"}; !slices.Equal(names, want) {
		t.Errorf("artifact names %q, want %q", names, want)
	}
	r = use("named", map[string]string{"artifact-name": "mine"})
	if r.run(t, a); r.artifact != "mine" || r.outputs["artifact-name"] != "mine" {
		t.Errorf("artifact-name given: uploaded as %q, output %q", r.artifact, r.outputs["artifact-name"])
	}

	// A line break in report-dir: no line of its own, nothing run or uploaded.
	for _, bad := range []string{"out\nexit-code=0", "out\r\nsummary=x", "\n"} {
		r := use("newline", map[string]string{"report-dir": bad})
		r.run(t, a)
		if !slices.Equal(r.lines, []string{"exit-code=2"}) || r.args != nil || r.artifact != "" {
			t.Errorf("report-dir %q: $GITHUB_OUTPUT %q, ptuprobe got %q, uploaded %q; want exit-code=2 alone", bad, r.lines, r.args, r.artifact)
		}
	}

	// The job summary is this run's, or a line that says there is none.
	for _, c := range []struct {
		command, exit string
		writes        []string
		want          string // in the job summary
	}{
		{"characterize", "0", []string{report.SummaryFile}, "# this run's"},
		{"analyze", "1", nil, "ptuprobe analyze wrote no summary in this step (exit status 1)."},
		{"policies", "0", []string{report.SummaryFile, policylab.MarkdownFile}, "# this run's ptuprobe-report/" + policylab.MarkdownFile},
		{"policies", "2", nil, "ptuprobe policies wrote no summary"},
		{"burst", "0", nil, "ptuprobe burst wrote no summary"},
	} {
		r := use("summary-"+c.command+c.exit, map[string]string{"command": c.command})
		r.exit, r.writes = c.exit, c.writes
		report := filepath.Join(r.job, "ptuprobe-report")
		os.MkdirAll(report, 0o755)
		for _, f := range []string{"summary.md", "policies.md"} {
			os.WriteFile(filepath.Join(report, f), []byte("# an earlier step's\n"), 0o644)
		}
		r.run(t, a)
		if strings.Contains(r.summary, "earlier") || !strings.Contains(r.summary, c.want) || strings.Count(r.summary, "\n") != 1 {
			t.Errorf("%s exit %s: job summary %q, want one line with %q", c.command, c.exit, r.summary, c.want)
		}
	}
}
