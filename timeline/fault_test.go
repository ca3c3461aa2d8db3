package timeline

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/mapfile"
)

// faultSource is a source whose file is cut shorter while it is read
// after n events: its Next returns the *mapfile.FaultError the mapped
// readers give (as the --pt-calls track does), which names the file.
type faultSource struct{ countSource }

func (s *faultSource) Next() (int64, error) {
	if s.i == s.n {
		return 0, &mapfile.FaultError{File: s.in.Path, Offset: 4096}
	}
	return s.countSource.Next()
}

// TestMergeFaultNamedOnce: a source's file cut shorter while it is read
// ends the merge with an error that names the file once, at the first
// event or later.
func TestMergeFaultNamedOnce(t *testing.T) {
	const path = "/traces/perf.data"
	for _, n := range []int64{0, 3} {
		s := &faultSource{countSource{in: &InputStats{Path: path, Kind: KindPT}, n: n}}
		_, err := Merge(context.Background(), io.Discard, []Source{s}, Options{})
		var fe *mapfile.FaultError
		if !errors.As(err, &fe) || strings.Count(err.Error(), path) != 1 {
			t.Errorf("fault after %d events: %v; want %s named once", n, err, path)
		}
	}
}
