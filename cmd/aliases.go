package cmd

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// renames are the flag names of the last release that a command still
// accepts, each mapped to its new name (docs/flags.md): the old name is
// parsed as the new flag, is listed nowhere, and prints one deprecation
// line on stderr when used. They go in the release after next.
type renames map[string]string

// burstRenames are burst's plan flags before they took characterize's
// names: one name for one thing in every command.
var burstRenames = renames{
	"size": "burst-size", "waves": "burst-waves", "gap": "burst-gap",
	"spread": "burst-spread", "wait-wave": "burst-wait-wave",
}

// simRenames are serve's simulator flags before they took the --sim-
// prefix the traffic commands give them (not those born with it).
func simRenames() renames {
	r := renames{}
	for _, name := range simFlags {
		if !slices.Contains(bornPrefixed, name) {
			r[name] = "sim-" + name
		}
	}
	return r
}

// bornPrefixed are the simulator flags added after the rename: they
// never had a bare name.
var bornPrefixed = []string{"neighbour-first", "neighbour-every", "neighbour-min", "neighbour-max", "cold-drain-pct", "cold-after", "tokenizer", "refusal-cost"}

// alias makes c accept every old name in r as its new name. The note is
// printed before c runs, once per old name typed.
func alias(c *cobra.Command, r renames) {
	var typed []string
	c.Flags().SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if to, ok := r[name]; ok {
			if !slices.Contains(typed, name) {
				typed = append(typed, name)
			}
			return pflag.NormalizedName(to)
		}
		return pflag.NormalizedName(name)
	})
	prev := c.PreRunE
	c.PreRunE = func(c *cobra.Command, args []string) error {
		for _, old := range typed {
			fmt.Fprintf(c.ErrOrStderr(), "ptuprobe: note: --%s is now --%s; the old name goes in the release after next (docs/flags.md)\n", old, r[old])
		}
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	for old, to := range r {
		c.Annotations[aliasAnnotation+old] = to
	}
}

// aliasAnnotation prefixes a command annotation that records an old flag
// name (the key's rest) and its new name (the value), for suggestions and
// docs/flags.md's test.
const aliasAnnotation = "ptuprobe/alias:"

// oldNames are c's old flag names, sorted.
func oldNames(c *cobra.Command) []string {
	var out []string
	for k := range c.Annotations {
		if old, ok := strings.CutPrefix(k, aliasAnnotation); ok {
			out = append(out, old)
		}
	}
	slices.Sort(out)
	return out
}

// flagError is every command's flag error: a usage error (exit 2) on one
// line; an unknown flag gets the nearest name c knows, hidden ones and
// old names included.
func flagError(c *cobra.Command, err error) error {
	var unknown *pflag.NotExistError
	if errors.As(err, &unknown) && unknown.GetSpecifiedName() != "" {
		name := unknown.GetSpecifiedName()
		hint := ""
		if s := suggestFlag(c, name); s != "" {
			hint = fmt.Sprintf("; did you mean --%s?", s)
		}
		return usageError("unknown flag: --%s%s (see '%s --help')", clipArg(name), hint, c.CommandPath())
	}
	return asUsage(fmt.Errorf("%w (see '%s --help')", err, c.CommandPath()))
}

// suggestFlag is the flag of c nearest to name, or "" when none is near:
// within an edit distance of 2 (3 for a name of 10 letters or more), or one
// whose name ends in -NAME (--size for --burst-size).
func suggestFlag(c *cobra.Command, name string) string {
	suggest := map[string]string{} // a name c knows → the flag to suggest
	c.Flags().VisitAll(func(f *pflag.Flag) { suggest[f.Name] = f.Name })
	c.InheritedFlags().VisitAll(func(f *pflag.Flag) { suggest[f.Name] = f.Name })
	for _, old := range oldNames(c) {
		suggest[old] = c.Annotations[aliasAnnotation+old]
	}
	delete(suggest, "help")
	names := slices.Sorted(maps.Keys(suggest))
	limit := 2
	if len(name) >= 10 {
		limit = 3
	}
	best, bestD := "", limit+1
	for _, n := range names {
		if d := levenshtein(name, n); d < bestD {
			best, bestD = suggest[n], d
		}
	}
	if best != "" {
		return best
	}
	for _, n := range names {
		if strings.HasSuffix(n, "-"+name) {
			return suggest[n]
		}
	}
	return ""
}

// levenshtein is the edit distance between a and b (insertions,
// deletions and substitutions of bytes; flag names are ASCII).
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// joinRenames is the union of rename tables.
func joinRenames(rs ...renames) renames {
	out := renames{}
	for _, r := range rs {
		maps.Copy(out, r)
	}
	return out
}
