package cut_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/internal/timerange"
)

// A window that does not resolve is a *WindowError naming its input
// exactly once, whoever reads the window: OpenWindow and OpenStream (the
// readers' cuts), CutFile ('iotap cut') and ResolveWindow. The expected
// messages are written out here, not taken from the code.
func TestWindowErrorNamesInputOnce(t *testing.T) {
	const (
		ptMarks   = "../intelpt/testdata/libipt/cbr-tsc-tma-mtc-cyc.pt"
		ptUntimed = "../intelpt/testdata/libipt/call_direct-ret_compressed.pt"
		perfPT    = "../intelpt/testdata/libipt/two-cpus.perf.data"
		mmioLog   = "../testdata/mmiotrace/e1000-probe.log"
		pcapng    = "../testdata/usbmon/lab-capture.pcapng"
		capture   = "../testdata/capture"
	)
	noMarker := "--from: mark:x: no marker of that name in the trace"
	for _, c := range []struct {
		path, from, want string
		file             bool // CutFile and OpenStream cut it too (not a directory)
	}{
		{ptMarks, "mark:x", ptMarks + ": an Intel PT trace has no markers (mark:NAME)", true},
		{ptUntimed, "0", ptUntimed + ": the trace has no time (no TSC packet): a time window cannot be placed in it", true},
		{perfPT, "mark:x", perfPT + ": an Intel PT trace has no markers (mark:NAME)", true},
		{mmioLog, "mark:x", mmioLog + ": " + noMarker, true},
		{pcapng, "mark:x", pcapng + ": " + noMarker, true},
		{capture, "mark:x", "mark:x: no marker of that name in the capture " + capture + " (its traces and clocks.json)", false},
	} {
		spec, err := timerange.ParseSpec(c.from, "")
		if err != nil {
			t.Fatal(err)
		}
		check := func(how string, err error) {
			t.Helper()
			var we *cut.WindowError
			if !errors.As(err, &we) || err.Error() != c.want {
				t.Errorf("%s %s --from %s:\n got %v\nwant %s", how, c.path, c.from, err, c.want)
			}
		}
		w, err := cut.OpenWindow(context.Background(), c.path, spec, nil)
		if err == nil {
			w.Close()
		}
		check("OpenWindow", err)
		if !c.file {
			continue
		}
		s, err := cut.OpenStream(context.Background(), c.path, spec, nil)
		if err == nil {
			s.Close()
		}
		check("OpenStream", err)
		_, err = cut.CutFile(context.Background(), c.path, io.Discard, false, nil, cut.Options{Window: spec})
		check("CutFile", err)
		if c.path != ptUntimed && c.path != perfPT { // ResolveWindow places the window, Cut refuses these
			_, err = cut.ResolveWindow(context.Background(), c.path, spec, nil)
			check("ResolveWindow", err)
		}
	}
}
