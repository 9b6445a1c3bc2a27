package cmd

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

func init() {
	register(func() *cobra.Command {
		return &cobra.Command{
			Use:     "version",
			Short:   "Print the ptuprobe version",
			Args:    noArgs,
			Example: "  ptuprobe version",
			RunE:    printVersion,
		}
	})
}

func printVersion(c *cobra.Command, _ []string) error {
	fmt.Fprintln(c.OutOrStdout(), versionLine())
	return nil
}

// versionLine is what the version command and --version print.
func versionLine() string {
	return fmt.Sprintf("ptuprobe %s (%s %s/%s)", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
