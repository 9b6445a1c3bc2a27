package cmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v2"
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
	b, err := os.ReadFile(filepath.Join("..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.UnmarshalStrict(b, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
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
		summary = summary || strings.Contains(s.Run, "summary.md") && strings.Contains(s.Run, `>> "$GITHUB_STEP_SUMMARY"`) && s.If == "always()"
		upload = upload || strings.HasPrefix(s.Uses, "actions/upload-artifact@") && s.If == "always()" && strings.Contains(s.With["path"], "inputs.report-dir")
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
