package regdb

import (
	"bytes"
	"compress/gzip"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestNameInput: a gzip-compressed log with a bad line and a kernel "Lost
// N events." mark, named as NDJSON: the input record first, then one
// record per access (gawk's count of the R and W lines that parse); the
// loss names the lost events and the skipped line. With KeepGoing false
// the bad line ends the naming with an error.
func TestNameInput(t *testing.T) {
	gawk, err := exec.LookPath("gawk")
	if err != nil {
		t.Skip("gawk (the oracle) not installed")
	}
	log := strings.Replace(namesLog, "R 4 12.228438", "R 4 oops\nMARK 12.2284 Lost 3 events.\nR 4 12.228438", 1)
	cmd := exec.Command(gawk, `/^[RW] [0-9]+ [0-9.]+ [0-9]+ 0x/ { n++ } END { print n }`)
	cmd.Stdin = strings.NewReader(log)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(log))
	zw.Close()

	var w bytes.Buffer
	n := NewNamer(Binder{})
	loss, err := n.NameInput(context.Background(), bytes.NewReader(z.Bytes()), &w, LogInput{File: "x.log.gz", Format: "mmiotrace log (gzip)", KeepGoing: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	recs := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	if !strings.HasPrefix(recs[0], `{"kind":"input",`) || !strings.Contains(recs[0], `"file":"x.log.gz"`) {
		t.Errorf("first record %s", recs[0])
	}
	if len(recs)-1 != want || int(n.Accesses) != want {
		t.Errorf("%d records, %d accesses counted; gawk counts %d accesses", len(recs)-1, n.Accesses, want)
	}
	if l := strings.Join(loss, "; "); !strings.Contains(l, "3 lost events") || !strings.Contains(l, "1 bad lines skipped") {
		t.Errorf("loss %q", l)
	}

	if _, err := NewNamer(Binder{}).NameInput(context.Background(), strings.NewReader(log), &w, LogInput{}, false); err == nil {
		t.Error("KeepGoing false: no error at the bad line")
	}
}
