package rotate

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestArgs: the flags become a ring of files (sizes in bytes), nothing
// without --file-size or --file-duration, and each mistake names its flag.
func TestArgs(t *testing.T) {
	o, err := Args{Ring: 4, FileSize: "64M", FileDuration: time.Minute}.Options("x.log")
	if err != nil || o == nil || !reflect.DeepEqual(*o, Options{Path: "x.log", Files: 4, Size: 64 << 20, Duration: time.Minute}) {
		t.Errorf("Options = %+v, %v", o, err)
	}
	if o, err := (Args{Interval: time.Second}).Options("-"); o != nil || err != nil {
		t.Errorf("no rotation: %+v, %v", o, err)
	}
	for _, tc := range []struct {
		a    Args
		path string
		want string
	}{
		{Args{Ring: 3}, "x", "--ring 3 needs --file-size or --file-duration"},
		{Args{FileSize: "big"}, "x", `--file-size: bad size "big"`},
		{Args{FileSize: "1M"}, "-", "--file-size/--file-duration write files: give -o FILE"},
		{Args{FileDuration: time.Second, Ring: -1}, "x", "(and --ring N >= 0)"},
	} {
		if o, err := tc.a.Options(tc.path); o != nil || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v, %q: %+v, %v; want %q", tc.a, tc.path, o, err, tc.want)
		}
	}
}
