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
	fmt.Fprintf(c.OutOrStdout(), "ptuprobe %s (%s %s/%s)\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
