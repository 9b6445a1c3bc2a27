package cmd

import "github.com/spf13/cobra"

// NewRootCommand builds the whole command tree. Tests build a fresh tree per
// run so flag state never leaks between them.
func NewRootCommand() *cobra.Command {
	root, _ := newRoot()
	return root
}
