package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// strictSubcommands makes every command that only groups subcommands
// (iotap usb, iotap pt, ...) reject an unknown subcommand with exit 2 and
// cobra's suggestions, as the root does; without arguments it prints its
// help. Cobra itself prints the help and exits 0 below the root.
func strictSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		strictSubcommands(sub)
	}
	if c.HasParent() && c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return c.Help()
			}
			return unknownSubcommand(c, args[0])
		}
	}
}

func unknownSubcommand(c *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, c.CommandPath())
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2 // cobra's default, set only on the root
	}
	if s := c.SuggestionsFor(name); len(s) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
	}
	return usageErrorf("%s\nsee '%s --help'", msg, c.CommandPath())
}
