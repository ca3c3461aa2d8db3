package capture

import (
	"errors"
	"fmt"
	"time"

	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/userevents"
)

// Args are the options of 'iotap capture' in the form its flags give
// them (the field comments name the flags); Options checks them, and its
// errors name the flags.
type Args struct {
	Dir      string        // -o
	USB      bool          // --usb
	Bus      int           // --bus: 0 (all buses) to 255
	MMIO     bool          // --mmio
	Bind     string        // --bind: a PCI device, DDDD:BB:DD.F (with MMIO)
	Events   []string      // --events: NAME or 'NAME FIELDS' (userevents.ParseTarget)
	Duration time.Duration // --duration
	BufferKB int           // --buffer-kb
}

// Options checks a and returns Run's options (without the command and
// its output).
func (a Args) Options() (Options, error) {
	o := Options{Dir: a.Dir, USB: a.USB, Bus: a.Bus, MMIO: a.MMIO, Duration: a.Duration, BufferKB: a.BufferKB}
	switch {
	case a.Dir == "":
		return o, errors.New("-o DIR is required")
	case !a.USB && !a.MMIO && len(a.Events) == 0:
		return o, errors.New("choose at least one source: --usb, --mmio, --events NAME")
	case a.Bind != "" && !a.MMIO:
		return o, errors.New("--bind needs --mmio")
	case a.Bus < 0 || a.Bus > 255:
		return o, fmt.Errorf("--bus %d: want 0 (all buses) to 255", a.Bus)
	case a.Duration < 0:
		return o, fmt.Errorf("--duration %v: want 0 (no limit) or more", a.Duration)
	}
	if a.Bind != "" {
		addr, err := mmiotrace.ParsePCIAddr(a.Bind)
		if err != nil {
			return o, fmt.Errorf("--bind: %v", err)
		}
		o.Bind = &addr
	}
	var err error
	if o.Events, err = userevents.ParseTargets(a.Events); err != nil {
		return o, fmt.Errorf("--events %w", err)
	}
	return o, nil
}
