package cmd

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// maxHelpLines bounds every command's default --help: a screen.
const maxHelpLines = helpLines

// TestHelpFits: every command's default --help is at most maxHelpLines
// lines: a description, examples, the flags in groups; no line of it
// lists a --sim-* flag or repeats the fleet explanation, each of which
// is referred to in one line; --full describes every flag.
func TestHelpFits(t *testing.T) {
	t.Parallel()
	root := NewRootCommand()
	seen := 0
	for _, c := range root.Commands() {
		if !c.Runnable() || c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		seen++
		code, stdout, stderr := runCLI(context.Background(), c.Name(), "--help")
		lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
		if code != 0 || stderr != "" || len(lines) > maxHelpLines {
			t.Errorf("%s --help: exit %d, %d lines (at most %d), stderr %q", c.Name(), code, len(lines), maxHelpLines, stderr)
		}
		for _, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), "--sim-") && c.Name() != "referee" {
				t.Errorf("%s --help lists a simulator flag: %q", c.Name(), l)
			}
			if strings.Contains(l, "each at --start-at + its") {
				t.Errorf("%s --help repeats the fleet explanation", c.Name())
			}
		}
		_, full, _ := runCLI(context.Background(), c.Name(), "--help", "--full")
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && f.Annotations[simAnnotation] == nil && !strings.Contains(full, "--"+f.Name+" ") {
				t.Errorf("%s --help --full does not describe --%s", c.Name(), f.Name)
			}
		})
	}
	if seen < 9 {
		t.Fatalf("only %d commands", seen)
	}
}

// TestHelpTopics: 'ptuprobe help simulator' lists every --sim-* flag and
// 'ptuprobe help fleet' explains --shard and --start-at; the root's help
// names both topics as they are typed.
func TestHelpTopics(t *testing.T) {
	t.Parallel()
	_, sim, _ := runCLI(context.Background(), "help", "simulator")
	for _, name := range simFlags {
		if !strings.Contains(sim, "--sim-"+name+" ") {
			t.Errorf("help simulator does not list --sim-%s", name)
		}
	}
	_, fleet, _ := runCLI(context.Background(), "help", "fleet")
	for _, want := range []string{"--shard I/N", "--start-at", "clocks", "--coordinate"} {
		if !strings.Contains(fleet, want) {
			t.Errorf("help fleet does not say %q", want)
		}
	}
	_, root, _ := runCLI(context.Background(), "--help")
	for _, want := range []string{"ptuprobe help simulator", "ptuprobe help fleet"} {
		if !strings.Contains(root, want) {
			t.Errorf("ptuprobe --help does not name %q", want)
		}
	}
}

// TestExamplesUseCurrentNames: every flag in every command's examples is
// one its command has under that name, not an old name kept as an alias.
func TestExamplesUseCurrentNames(t *testing.T) {
	t.Parallel()
	root := NewRootCommand()
	cmdRe, flagRe := regexp.MustCompile(`ptuprobe ([a-z]+)`), regexp.MustCompile(`(?:^|\s)--([a-z0-9-]+)`)
	for _, c := range root.Commands() {
		var cur *cobra.Command
		for _, line := range strings.Split(c.Example, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			if m := cmdRe.FindStringSubmatch(line); m != nil {
				cur, _, _ = root.Find([]string{m[1]})
			}
			if cur == nil {
				continue
			}
			if i := strings.Index(line, " -- "); i >= 0 {
				line = line[:i] // the rest is the graded command's
			}
			for _, m := range flagRe.FindAllStringSubmatch(line, -1) {
				name := m[1]
				if _, old := cur.Annotations[aliasAnnotation+name]; old || cur.Flags().Lookup(name) == nil {
					t.Errorf("%s's examples: %s has no flag --%s (or it is an old name)", c.Name(), cur.Name(), name)
				}
			}
		}
	}
}
