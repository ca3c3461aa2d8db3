package capture_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/internal/vmlab"
)

// TestLabCaptureKilledIndex runs 'iotap capture --usb' in the lab while
// the xHCI disk is read whole, twice (about 32 MB of usbmon data), copies
// the trace's index and then the trace while the capture records, and
// kills the capture (SIGKILL). Both the copy taken during the recording
// and what the killed capture left have a partial index of what was
// written (it is updated every few MB as the capture records, not at its
// end), which cut uses: for windows across the trace, the cut with it is
// byte for byte the cut without it, and no warning is given.
func TestLabCaptureKilledIndex(t *testing.T) {
	res := vmlab.Run(t, vmlab.Machine{USB: true, Script: killedScript})
	if res.ExitCode != 0 {
		t.Fatalf("guest script exited %d:\n%s", res.ExitCode, res.Console)
	}
	t.Logf("capture stderr:\n%s", res.ReadOut(t, "capture.err"))
	for _, dir := range []string{"during", "killed"} {
		path := filepath.Join(res.Out, dir, "usb.pcapng")
		var warns []string
		warn := func(m string) { warns = append(warns, m) }
		in, closer, err := cut.OpenFile(path, true, warn)
		if err != nil {
			t.Fatal(err)
		}
		ix := in.Index
		if ix == nil || !ix.Partial || ix.Size > in.Size || ix.Size < 4<<20 || len(warns) > 0 {
			closer.Close()
			t.Fatalf("%s: %d bytes, index %v (warnings %q): want a partial index of at least 4 MiB", dir, in.Size, ix != nil, warns)
		}
		span := ix.Last - ix.First
		cuts := 0
		for _, f := range []float64{0.1, 0.3, 0.5, 0.7, 0.9} {
			from := float64(span) * f / 1e9
			w := [2]string{fmt.Sprintf("%.6f", from), "+0.05s"}
			spec, err := timerange.ParseSpec(w[0], w[1])
			if err != nil {
				t.Fatal(err)
			}
			plain := in
			plain.Index = nil
			var want, got bytes.Buffer
			wres, werr := cut.Cut(context.Background(), plain, &want, cut.Options{Window: spec, Warn: warn})
			gres, gerr := cut.Cut(context.Background(), in, &got, cut.Options{Window: spec, Warn: warn})
			if fmt.Sprint(werr) != fmt.Sprint(gerr) || !bytes.Equal(want.Bytes(), got.Bytes()) || !gres.Indexed || len(warns) > 0 {
				t.Errorf("%s %s..%s: with the index %d bytes (%v, indexed %v), without %d bytes (%v); warnings %q",
					dir, w[0], w[1], got.Len(), gerr, gres.Indexed, want.Len(), werr, warns)
			}
			if gres.Events > 0 {
				cuts++
			}
			t.Logf("%s %s..%s: %d events, %d bytes read with the index, %d without (error %v)", dir, w[0], w[1], gres.Events, gres.BytesRead, wres.BytesRead, gerr)
		}
		closer.Close()
		if cuts < 2 {
			t.Errorf("%s: %d windows with events", dir, cuts)
		}
		t.Logf("%s: %d bytes, partial index of the first %d (%d records, %d checkpoints)", dir, in.Size, ix.Size, ix.Records, len(ix.Checkpoints))
	}
	if !strings.Contains(string(res.ReadOut(t, "ls.txt")), "usb.pcapng.iotapidx") {
		t.Errorf("no index left by the killed capture:\n%s", res.ReadOut(t, "ls.txt"))
	}
}

const killedScript = `
disk=
for d in /sys/block/sd*; do
	case "$(readlink -f $d)" in *0000:00:04.0*) disk=$(basename $d);; esac
done
[ -n "$disk" ] || { echo "no xHCI disk"; ls -l /sys/block; exit 1; }
iotap capture --usb -o /tmp/cap >/out/capture.out 2>/out/capture.err &
pid=$!
i=0
while [ ! -s /tmp/cap/usb.pcapng ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done
for n in 1 2; do
	echo 3 > /proc/sys/vm/drop_caches
	dd if=/dev/$disk of=/dev/null bs=64k 2>/dev/null
done
sleep 1
mkdir /out/during /out/killed
# while it records: the index first, then the trace (which can only be longer)
cp /tmp/cap/usb.pcapng.iotapidx /out/during/
cp /tmp/cap/usb.pcapng /out/during/
kill -9 $pid
wait $pid || true
ls -l /tmp/cap > /out/ls.txt
cp /tmp/cap/usb.pcapng /tmp/cap/usb.pcapng.iotapidx /out/killed/
`
