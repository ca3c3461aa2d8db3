package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/regdb"
	"github.com/iotap/iotap/timeline"
)

// TestMMIONamingAgrees: 'iotap mmio names', 'iotap mmio stats' and the
// timeline name every access of the bundled MMIO logs the same way (they
// share regdb.Binder; before issue 11 each had its own BAR binding).
func TestMMIONamingAgrees(t *testing.T) {
	for _, log := range []string{"../../testdata/mmiotrace/e1000-probe.log", "../../mmiotrace/testdata/e1000-bind.log", "../../testdata/capture/mmio.log.zst"} {
		t.Run(log, func(t *testing.T) {
			out, errs, code := usbRun(t, "mmio", "names", "--json", log)
			if code != 0 {
				t.Fatalf("mmio names: exit %d: %s", code, errs)
			}
			// names: per BAR, offset and width, the register.
			names := map[string]string{}
			var accesses, named int64
			sc := bufio.NewScanner(strings.NewReader(out))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var r regdb.NameRecord
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
					t.Fatal(err)
				}
				if r.Kind != regdb.NDJSONName || (r.Access != "R" && r.Access != "W") {
					continue
				}
				accesses++
				reg := ""
				if r.Register != nil {
					reg = *r.Register
					named++
				}
				if r.Offset == nil {
					continue
				}
				k := fmt.Sprintf("%s+%s/%d", *r.BAR, *r.Offset, r.Width)
				if old, ok := names[k]; ok && old != reg {
					t.Fatalf("names: %s named %q and %q", k, old, reg)
				}
				names[k] = reg
			}
			if named == 0 {
				t.Fatal("names named nothing")
			}

			// stats: the register of every (BAR, offset, width).
			in, err := mmioOpenInput(log) // decompressed as 'mmio stats' reads it
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			st, err := mmiotrace.Analyze(in, mmiotrace.StatsOptions{KeepGoing: true})
			if err != nil {
				t.Fatal(err)
			}
			name := new(regdb.Binder).RegisterNames(st)
			checked := 0
			for _, r := range st.Regs {
				if !r.Key.HasBAR {
					continue
				}
				k := fmt.Sprintf("%s/%d+0x%x/%d", r.Key.Dev, r.Key.BAR, r.Key.Offset, r.Key.Width)
				want, ok := names[k]
				if !ok {
					t.Errorf("stats has %s, names has no access there", k)
					continue
				}
				if got := name(r.Key); got != want {
					t.Errorf("%s: stats names it %q, names %q", k, got, want)
				}
				checked++
			}
			if checked != len(names) {
				t.Errorf("stats has %d registers with a BAR, names %d", checked, len(names))
			}

			// timeline: the same accesses, the same ones named.
			tst, err := timeline.Export(context.Background(), io.Discard, []string{log}, timeline.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if in := tst.Inputs[0]; in.Accesses != accesses || in.Named != named {
				t.Errorf("timeline: %d accesses, %d named; names: %d, %d", in.Accesses, in.Named, accesses, named)
			}
		})
	}
}
