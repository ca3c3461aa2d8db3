package capture

import (
	"strings"
	"testing"
	"time"
)

// TestArgs: the flags of 'iotap capture' become Run's options (the PCI
// address and the events parsed), and each mistake names its flag.
func TestArgs(t *testing.T) {
	o, err := Args{Dir: "cap", USB: true, Bus: 3, MMIO: true, Bind: "0000:00:03.0", Events: []string{" iotap_marker ", "req u32 id"}, Duration: time.Second, BufferKB: 64}.Options()
	if err != nil || o.Dir != "cap" || !o.USB || o.Bus != 3 || !o.MMIO || o.Bind == nil || o.Bind.String() != "0000:00:03.0" ||
		len(o.Events) != 2 || o.Events[0].Name != "iotap_marker" || o.Events[0].Schema != nil || o.Events[1].Name != "req" || o.Events[1].Schema == nil ||
		o.Duration != time.Second || o.BufferKB != 64 {
		t.Errorf("Options = %+v, %v", o, err)
	}
	for _, tc := range []struct {
		a    Args
		want string
	}{
		{Args{USB: true}, "-o DIR is required"},
		{Args{Dir: "cap"}, "choose at least one source"},
		{Args{Dir: "cap", USB: true, Bind: "0000:00:03.0"}, "--bind needs --mmio"},
		{Args{Dir: "cap", USB: true, Bus: 256}, "--bus 256: want 0 (all buses) to 255"},
		{Args{Dir: "cap", USB: true, Duration: -time.Second}, "--duration -1s: want 0 (no limit) or more"},
		{Args{Dir: "cap", MMIO: true, Bind: "x"}, "--bind: "},
		{Args{Dir: "cap", Events: []string{"bad-name"}}, `--events "bad-name": letters, digits and '_' only`},
	} {
		if _, err := tc.a.Options(); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want %q", tc.a, err, tc.want)
		}
	}
}
