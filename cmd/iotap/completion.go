package main

import (
	"github.com/spf13/cobra"

	"github.com/iotap/iotap/filter"
	"github.com/iotap/iotap/regdb"
	"github.com/iotap/iotap/usb"
	"github.com/iotap/iotap/userevents"
)

// Completion of flag values (cobra's __complete, used by the scripts of
// 'iotap completion bash|zsh|fish|powershell'): each value is one the
// flag's parser accepts, with its meaning after a tab.
var (
	complTransfer = []string{"ctrl\tcontrol", "bulk", "intr\tinterrupt", "iso\tisochronous"}
	complDir      = []string{"in\tdevice to host", "out\thost to device"}
	complUSBFmt   = []string{"pcapng", "pcap", "1u\tusbmon text with bus numbers", "1t\tusbmon text, old"}
	complReport   = []string{"html\tthe page with charts", "perfetto\tPerfetto trace", "json\tNDJSON"}
	complMethod   = []string{"mmap\tmapped ring (fastest)", "read\tMON_IOCX_GETX reads", "text\tthe 0u text file"}
	complKind     = []string{"R", "W", "MAP", "UNMAP", "MARK", "VERSION", "LSPCI", "PCIDEV", "UNKNOWN", "comment", "other"}
	complLinkType = []string{"220\t64-byte headers, ISO descriptors", "189\t48-byte headers"}
	complPart     = []string{"host", "date", "host,date"}
	complTime     = []string{"0\tseconds from the first event (1.5, 200ms)", "+1s\tduration after --from",
		"@\tthe capture's own clock (@1700000000.5)", "mark:\ta marker of the capture", "2026-01-02T15:04:05Z\twall clock (RFC 3339)"}
)

// registerCompletions gives every flag with a fixed set of values its
// completion, in every command that has it.
func registerCompletions(root *cobra.Command) {
	fixed := func(vals []string, dir cobra.ShellCompDirective) cobra.CompletionFunc {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) { return vals, dir }
	}
	const noFile = cobra.ShellCompDirectiveNoFileComp
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		reg := func(name string, fn cobra.CompletionFunc) {
			if c.Flags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, fn)
			}
		}
		reg("type", fixed(complTransfer, noFile))
		reg("dir", fixed(complDir, noFile))
		reg("status", fixed(append([]string{"stall\t-EPIPE"}, usb.KnownStatuses()...), noFile))
		reg("method", fixed(complMethod, noFile))
		reg("kind", fixed(complKind, noFile))
		reg("link-type", fixed(complLinkType, noFile))
		reg("partition", fixed(complPart, noFile))
		reg("from", fixed(complTime, noFile))
		// --db takes a shipped name or a file: files are completed too.
		reg("db", fixed(regdb.Builtins(), cobra.ShellCompDirectiveDefault))
		switch {
		case c.Name() == "report":
			reg("format", fixed(complReport, noFile))
		case c.Parent() != nil && c.Parent().Name() == "usb":
			reg("format", fixed(complUSBFmt, noFile))
		}
		if c.Name() == "convert" {
			reg("to", fixed(complUSBFmt, noFile)) // the old name of --format
		} else {
			reg("to", fixed(complTime, noFile))
		}
		reg("filter", filterCompletion(c))
	}
	walk(root)
}

// filterCompletion completes the field name being typed at the end of a
// -Y expression with the fields of the command's records.
func filterCompletion(c *cobra.Command) cobra.CompletionFunc {
	var fields []filter.FieldInfo
	switch {
	case c.Parent() != nil && c.Parent().Name() == "usb":
		fields = usb.FilterFields(nil).Fields()
	case c.Parent() != nil && c.Parent().Name() == "mmio":
		fields = regdb.FilterFields(&regdb.Binder{}, nil).Fields()
	case c.Parent() != nil && c.Parent().Name() == "events":
		fields = userevents.FilterFields().Fields()
	}
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return filter.Complete(fields, toComplete), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}
