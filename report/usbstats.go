package report

import (
	"io"

	"github.com/iotap/iotap/usb"
)

// WriteUSBStats writes the whole output of 'iotap usb stats' of st, the
// statistics of the pipeline pl (usb.Pipeline.Stats) over the capture
// file: the table of WriteUSBTable, whose devices without identity say
// how to get one, or with json the "input" record and
// usb.AppendStatsNDJSON's records.
func WriteUSBStats(w io.Writer, st *usb.Stats, pl *usb.Pipeline, file string, json bool) error {
	if json {
		in := usb.AppendInput(nil, file, pl.Reader.Format())
		_, err := w.Write(usb.AppendStatsNDJSON(in, "", st, pl.Pairer.Counts(), pl.Identities))
		return err
	}
	return WriteUSBTable(w, st, pl.Pairer.Counts(), pl.Identities, USBTableOptions{
		Unidentified: "identity not captured (enumeration not in the capture; try --sysfs on a live system)",
	})
}
