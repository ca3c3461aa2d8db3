package usbmon

import (
	"context"
	"fmt"
	"io"
)

// ConvertOptions control Convert.
type ConvertOptions struct {
	// Format and LinkType are the output's (LinkType for pcap/pcapng:
	// LinkTypeUSBLinux or LinkTypeUSBLinuxMmapped).
	Format   Format
	LinkType int
	// KeepGoing skips text lines that do not parse, each reported to
	// OnSkip (ReaderOptions).
	KeepGoing bool
	OnSkip    func(error)
	// Keep, when set, writes only the events it keeps.
	Keep func(*Event) bool
}

// ConvertResult is what Convert did.
type ConvertResult struct {
	CopyResult
	// From is the input's format.
	From Format
	// Unheld is what the output format cannot hold (Writer.Loss).
	Unheld Loss
	to     Format
	keep   bool
}

// Convert reads a capture in any format NewReader detects from src and
// writes it to dst in opt.Format ('iotap usb convert'). A read error
// that stops the copy is in the result (CopyResult.Loss), not returned:
// err is an error of the input's head or of the output.
func Convert(ctx context.Context, src io.Reader, dst io.Writer, opt ConvertOptions) (ConvertResult, error) {
	res := ConvertResult{to: opt.Format, keep: opt.Keep != nil}
	r, from, err := NewReaderOptions(src, ReaderOptions{KeepGoing: opt.KeepGoing, OnSkip: opt.OnSkip})
	if err != nil {
		return res, err
	}
	res.From = from
	w, err := NewWriterLinkType(dst, opt.Format, opt.LinkType)
	if err != nil {
		return res, err
	}
	res.CopyResult, err = CopyIf(ctx, w, r, opt.Keep)
	res.Unheld = w.Loss()
	return res, err
}

// Summary says what was converted, and what the output could not hold,
// one line each.
func (r ConvertResult) Summary() []string {
	s := fmt.Sprintf("converted %d events (%s to %s)", r.Events, r.From, r.to)
	if r.keep {
		s = fmt.Sprintf("converted %d of %d events (%s to %s)", r.Events, r.Read, r.From, r.to)
	}
	lines := []string{s}
	if r.Unheld.Total() > 0 {
		lines = append(lines, fmt.Sprintf("%s cannot hold everything: %s", r.to, r.Unheld))
	}
	return lines
}
