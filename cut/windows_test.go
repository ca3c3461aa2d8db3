//go:build unix

package cut_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/internal/timerange"
)

// OpenAll gives a cut per input, whose bytes are the window 'iotap cut'
// writes; Run's reader prints and fails naming the inputs, not the cuts;
// a closed pipe removes the cuts and calls broken.
func TestWindowsOpenAllRun(t *testing.T) {
	const bind, kinds = "../mmiotrace/testdata/e1000-bind.log", "../mmiotrace/testdata/kinds.log"
	spec, err := timerange.ParseSpec("0.18s", "")
	if err != nil {
		t.Fatal(err)
	}
	var ws cut.Windows
	defer ws.Close()
	cuts, err := ws.OpenAll(context.Background(), []string{bind, kinds}, spec, nil)
	if err != nil || len(cuts) != 2 {
		t.Fatalf("%v, %v", cuts, err)
	}
	for i, in := range []string{bind, kinds} {
		var want bytes.Buffer
		if _, err := cut.CutFile(context.Background(), in, &want, false, nil, cut.Options{Window: spec}); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(cuts[i]); err != nil || !bytes.Equal(got, want.Bytes()) || cuts[i] == in {
			t.Errorf("%s: the cut %s holds %d bytes, cut writes %d (%v)", in, cuts[i], len(got), want.Len(), err)
		}
	}
	var out, errs bytes.Buffer
	err = ws.Run(&out, &errs, func() { t.Error("broken called") }, func(o, e io.Writer) error {
		fmt.Fprintf(o, "reading %s\n", cuts[0])
		fmt.Fprintf(e, "warning: %s", cuts[1]) // no newline: flushed at the end
		return fmt.Errorf("%s: bad", cuts[1])
	})
	if out.String() != "reading "+bind+"\n" || errs.String() != "warning: "+kinds || err == nil || err.Error() != kinds+": bad" {
		t.Errorf("stdout %q, stderr %q, error %v", out.String(), errs.String(), err)
	}
	if _, err := ws.OpenAll(context.Background(), []string{bind, "nosuchfile.log"}, spec, nil); err == nil || !strings.Contains(err.Error(), "nosuchfile.log") {
		t.Errorf("a missing input: %v", err)
	}

	broken := 0
	err = ws.Run(closedPipe(t), &errs, func() { broken++ }, func(o, e io.Writer) error {
		_, err := fmt.Fprintln(o, cuts[0])
		return err
	})
	if broken != 1 || !errors.Is(err, syscall.EPIPE) {
		t.Errorf("a closed pipe: broken %d times, %v", broken, err)
	}
	for _, c := range cuts {
		if _, err := os.Stat(c); err == nil {
			t.Errorf("%s left after a closed pipe", c)
		}
	}
}
