package cmd

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A command's --help is what it does in a few lines, its examples, then
// its flags in groups, each flag on one line with the first clause of its
// description; the rarely needed ones are named on an "also" line.
// --help --full gives every description in full. What several commands
// share is said once, in a help topic: 'ptuprobe help simulator' and
// 'ptuprobe help fleet'.

// helpGroups are the flag groups, in the order help prints them; a flag
// no group claims is the command's own and comes first.
var helpGroups = []struct {
	title string
	flags []string
}{
	{"Traffic", []string{
		"burst-size", "burst-waves", "burst-gap", "burst-spread", "burst-wait-wave", "rate", "duration", "phase", "arrival", "replay", "seed",
		"replay-format", "replay-time-scale", "replay-window", "max-tokens-factor",
		"skip-burst", "skip-schedule", "refill-rest", "min-rate", "max-rate", "factor", "probe-duration", "depth", "pause", "max-pause",
		"load", "clients", "repeat", "capacity", "max-duration", "max-requests", "max-work", "max-in-flight", "abort-on-fail", "pace-window", "pace-fixed", "grace", "dry-run"}},
	{"Target (none: the embedded simulator, see 'ptuprobe help simulator')", []string{
		"endpoint", "deployment", "url", "model", "api", "api-key-env", "stream", "prompt-tokens", "max-tokens", "prompts", "timeout",
		"tokenizer", "prompts-order",
		"header", "method", "body", "api-version", "anthropic-version", "max-tokens-field", "shared-prefix-tokens", "fallback-deployment",
		"ca-cert", "insecure", "http1"}},
	{"Retries", []string{"max-attempts", "policy", "retry-budget", "retry-jitter", "retry-max-wait"}},
	{"Outputs", []string{
		"output", "out-dir", "results", "append", "fail-if", "slo", "baseline", "allow-failures", "group", "group-by", "quiet", "metrics-addr", "progress-every", "metrics-linger",
		"label", "columns", "log-x", "min-group", "timeline", "value-column", "value-unit", "status-column", "group-column", "load-window"}},
	{"Fleet (N workers, one plan: 'ptuprobe help fleet')", []string{"shard", "start-at", "coordinate", "coordinate-password-env", "coordinate-timeout"}},
}

// helpMore are the flags the default help names without describing.
var helpMore = map[string]bool{
	"pace-window": true, "pace-fixed": true, "grace": true, "progress-every": true, "metrics-linger": true, "coordinate-password-env": true, "coordinate-timeout": true,
	"api-version": true, "anthropic-version": true, "max-tokens-field": true, "shared-prefix-tokens": true, "method": true, "body": true,
	"retry-jitter": true, "retry-max-wait": true, "seed": true, "replay-format": true, "replay-time-scale": true, "replay-window": true,
	"max-tokens-factor": true, "tokenizer": true, "prompts-order": true, "skip-burst": true, "skip-schedule": true, "refill-rest": true,
	"label": true, "columns": true, "log-x": true, "min-group": true, "timeline": true, "value-column": true, "group-column": true, "load-window": true,
	"value-unit": true, "status-column": true, "ca-cert": true, "insecure": true, "http1": true, "baseline": true, "group-by": true,
}

// simAnnotation marks the simulator's flags, listed in 'ptuprobe help
// simulator' and not in each command's help.
const simAnnotation = "ptuprobe/sim"

// fullFlag is --full, which with --help describes every flag in full.
const fullFlag = "full"

// helpLines bounds the default help of a command: a screen.
const helpLines = 80

// helpFoldFrom is the length from which the default help names the
// helpMore flags on one line instead of a line each.
const helpFoldFrom = 64

// helpForm is how much of each flag a help shows.
type helpForm int

const (
	helpBrief  helpForm = iota // every flag, its description's first clause
	helpFolded                 // helpBrief, the helpMore flags named on one line
	helpFull                   // every flag, its whole description
)

// helpWidth bounds a line of the default help.
const helpWidth = 100

// setHelp gives root and every command under it ptuprobe's help.
func setHelp(root *cobra.Command) {
	root.PersistentFlags().Bool(fullFlag, false, "with --help: every flag's description in full")
	_ = root.PersistentFlags().MarkHidden(fullFlag)
	// A topic is read with 'ptuprobe help NAME', and the root's help says so.
	t := root.UsageTemplate()
	if i := strings.Index(t, "Additional help topics:"); i >= 0 {
		t = t[:i] + strings.Replace(t[i:], "{{rpad .CommandPath .CommandPathPadding}}", `{{rpad (printf "ptuprobe help %s" .Name) 24}}`, 1)
	}
	root.SetUsageTemplate(t)
	def := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c == root {
			def(c, args)
			return
		}
		full, _ := c.Flags().GetBool(fullFlag)
		if full {
			writeHelp(c.OutOrStdout(), c, helpFull)
			return
		}
		// Every flag on its line when that is short, else the rarely
		// needed ones named on the "also" line.
		var b strings.Builder
		writeHelp(&b, c, helpBrief)
		if strings.Count(b.String(), "\n") > helpFoldFrom {
			b.Reset()
			writeHelp(&b, c, helpFolded)
		}
		fmt.Fprint(c.OutOrStdout(), b.String())
	})
}

// writeHelp is c's help: a topic's text, or a command's description,
// usage, examples and flags.
func writeHelp(w io.Writer, c *cobra.Command, form helpForm) {
	fmt.Fprintln(w, strings.TrimSpace(c.Long))
	if !c.Runnable() {
		return
	}
	fmt.Fprintf(w, "\nUsage:\n  %s\n", c.UseLine())
	if c.Example != "" {
		fmt.Fprintf(w, "\nExamples:\n%s\n", c.Example)
	}
	groups, more := groupFlags(c)
	for _, g := range groups {
		if len(g.flags) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, f := range g.flags {
			if form != helpFolded || !helpMore[f.Name] {
				writeFlag(w, f, form == helpFull)
			}
		}
	}
	fmt.Fprintln(w)
	if len(more) > 0 && form == helpFolded {
		writeWrapped(w, "Also: ", strings.Join(more, " "), "  ")
	}
	fmt.Fprintf(w, "Every flag in full: %s --help --full (names: docs/flags.md).\n", c.CommandPath())
}

type flagGroup struct {
	title string
	flags []*pflag.Flag
}

// groupFlags sorts c's visible flags into helpGroups, the command's own
// first; more are the helpMore flags' names, for the "also" line.
func groupFlags(c *cobra.Command) (groups []flagGroup, more []string) {
	group := map[string]int{}
	groups = []flagGroup{{title: "Flags"}}
	for i, g := range helpGroups {
		groups = append(groups, flagGroup{title: g.title})
		for _, name := range g.flags {
			group[name] = i + 1
		}
	}
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" || f.Annotations[simAnnotation] != nil {
			return
		}
		g := group[f.Name]
		groups[g].flags = append(groups[g].flags, f)
		if helpMore[f.Name] {
			more = append(more, "--"+f.Name)
		}
	})
	// Within a group, helpGroups' order: the flags that matter first.
	for gi := range groups[1:] {
		order := helpGroups[gi].flags
		fl := groups[gi+1].flags
		sorted := make([]*pflag.Flag, 0, len(fl))
		for _, name := range order {
			for _, f := range fl {
				if f.Name == name {
					sorted = append(sorted, f)
				}
			}
		}
		groups[gi+1].flags = sorted
	}
	return groups, more
}

// writeFlag writes f's line: its name, its type, its description and its
// default; in full, the whole description wrapped, else its first clause
// on one line.
func writeFlag(w io.Writer, f *pflag.Flag, full bool) {
	varname, usage := pflag.UnquoteUsage(f)
	name := "    --" + f.Name
	if f.Shorthand != "" {
		name = "-" + f.Shorthand + ", --" + f.Name
	}
	if varname != "" {
		name += " " + varname
	}
	head := fmt.Sprintf("  %-30s ", name)
	if len(head) > 33 {
		head = "  " + name + " "
	}
	if full {
		if !isZeroDefault(f) {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		writeWrapped(w, head, usage, strings.Repeat(" ", 33))
		return
	}
	fmt.Fprintln(w, head+briefUsage(usage, helpWidth-utf8.RuneCountInString(head), f))
}

// briefUsage cuts usage to its first clause and to width, keeping f's
// default.
func briefUsage(usage string, width int, f *pflag.Flag) string {
	def := ""
	if !isZeroDefault(f) {
		def = fmt.Sprintf(" (default %s)", f.DefValue)
	}
	usage = withoutAsides(usage)
	if i := strings.Index(usage, "; "); i >= 16 {
		usage = usage[:i]
	}
	width -= utf8.RuneCountInString(def)
	if r := []rune(usage); len(r) > width {
		cut := strings.LastIndex(string(r[:width-1]), " ")
		if cut < width/2 {
			cut = len(string(r[:width-1]))
		}
		usage = usage[:cut] + "…"
	}
	usage += def
	return usage
}

// withoutAsides is s without its parenthesized asides.
func withoutAsides(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	out := strings.Join(strings.Fields(b.String()), " ")
	return strings.NewReplacer(" ,", ",", " :", ":", " ;", ";", " .", ".").Replace(out)
}

// isZeroDefault: a default help need not print.
func isZeroDefault(f *pflag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "[]", "0s":
		return true
	}
	return false
}

// writeWrapped writes first then s, wrapped at helpWidth, continuation
// lines indented.
func writeWrapped(w io.Writer, first, s, indent string) {
	line, empty := first, true
	for _, word := range strings.Fields(s) {
		if !empty && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > helpWidth {
			fmt.Fprintln(w, line)
			line, empty = indent+word, false
			continue
		}
		if empty {
			line, empty = line+word, false
		} else {
			line += " " + word
		}
	}
	fmt.Fprintln(w, line)
}
