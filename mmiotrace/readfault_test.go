package mmiotrace

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/mapfile"
)

// failAfter reads s, then fails with err.
type failAfter struct {
	r   io.Reader
	err error
}

func (f *failAfter) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

// TestReaderFaultError: a file cut shorter while read through Reader
// (read(2) ending before the size it had, a *mapfile.FaultError naming
// the file and the offset) is the Reader's error as it is, as a mapped
// log's fault is (Do), so that one message names the file once; any
// other read error says the line it came after.
func TestReaderFaultError(t *testing.T) {
	const log = "MARK 1.000000 a\nMARK 2.000000 b\n"
	fe := &mapfile.FaultError{File: "x.log", Offset: 4096}
	other := errors.New("input/output error")
	for _, c := range []struct {
		err  error
		want string
	}{
		{fe, "x.log: truncated while reading at offset 4096"},
		{other, "mmiotrace: read after line 2: input/output error"},
	} {
		rd := NewReader(&failAfter{strings.NewReader(log), c.err})
		var rec Record
		var err error
		for err == nil {
			err = rd.ReadInto(&rec)
		}
		rd.Close()
		if !errors.Is(err, c.err) || err.Error() != c.want {
			t.Errorf("error %q, want %q", err, c.want)
		}
	}
}
