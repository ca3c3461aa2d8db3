// Package report summarises directories of traces of every source iotap
// reads — usbmon captures, mmiotrace logs, Intel PT traces and user_events
// records — for people (text, a self-contained HTML page with charts) and
// for programs (NDJSON). It is what 'iotap report' runs.
//
// Build walks directories and .tar.gz bundles, recognises each file by its
// content (Sniff) and summarises every trace with its source's analysis:
// usb.Stats per endpoint, mmiotrace.Analyze with register names from the
// shipped register databases, intelpt packet statistics, user_events
// counts. Next to the counts the summaries keep what the HTML report
// plots, aggregated so that its size does not grow with the input: time
// series of at most MaxBins bins (Series, ValueSeries), logarithmic
// latency histograms (LogHist), and per-register series for at most
// MaxTrackedRegs registers.
//
// Traces whose directory holds a clocks.json (written by 'iotap capture')
// are placed on that file's common clock (Trace.Aligned); the others start
// at 0, as in 'iotap timeline'.
//
// The renderers of the per-source summaries (WriteUSBTable, WriteMMIOText,
// WritePTText) are also those of 'iotap usb stats', 'iotap mmio stats' and
// 'iotap pt stats'.
package report
