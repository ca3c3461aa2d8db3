package usb

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/iotap/iotap/rotate"
	"github.com/iotap/iotap/usbmon"
)

// TestCaptureArgs: the flag values of usb capture become the capture's
// options (sizes in bytes, the queue only for mmap, no ring for text, a
// wall clock for pcap/pcapng text captures); bad values are errors naming
// the flag that match ErrSelection; an unreadable sysfs is not the user's
// mistake.
func TestCaptureArgs(t *testing.T) {
	base := CaptureArgs{Path: "x.pcapng", Method: "mmap", Format: "pcapng", RingSize: "1200K", Queue: "32M", Nice: "auto", Bus: 3, Snaplen: 64, Count: 9, NoInject: true, Duration: 30 * time.Second}
	for _, tc := range []struct {
		change func(*CaptureArgs)
		want   usbmon.CaptureOptions
	}{
		{func(*CaptureArgs) {}, usbmon.CaptureOptions{Bus: 3, Method: usbmon.MethodMmap, RingSize: 1200 << 10, Queue: 32 << 20, TextWallClock: true}},
		{func(a *CaptureArgs) { a.Queue = "0" }, usbmon.CaptureOptions{Bus: 3, Method: usbmon.MethodMmap, RingSize: 1200 << 10, TextWallClock: true}},
		{func(a *CaptureArgs) { a.Method = "read"; a.RingSize = "8K" }, usbmon.CaptureOptions{Bus: 3, Method: usbmon.MethodRead, RingSize: 8 << 10, TextWallClock: true}},
		{func(a *CaptureArgs) { a.Method = "text"; a.Format = "1u" }, usbmon.CaptureOptions{Bus: 3, Method: usbmon.MethodText}},
		{func(a *CaptureArgs) { a.Method = "text"; a.Format = "pcap" }, usbmon.CaptureOptions{Bus: 3, Method: usbmon.MethodText, TextWallClock: true}},
	} {
		a := base
		tc.change(&a)
		o, err := a.FileOptions(t.TempDir(), nil)
		if err != nil || !reflect.DeepEqual(o.Capture, tc.want) || o.Path != a.Path || o.Record.Snaplen != 64 || o.Record.Count != 9 || o.Duration != 30*time.Second || o.Prelude != nil {
			t.Errorf("%+v: %+v, %v; want %+v", a, o.Capture, err, tc.want)
		}
		if o.Nice != usbmon.AutoNice || !o.NiceIfAllowed {
			t.Errorf("--nice auto: %d, if allowed %v", o.Nice, o.NiceIfAllowed)
		}
	}
	for _, tc := range []struct {
		change func(*CaptureArgs)
		want   string
	}{
		{func(a *CaptureArgs) { a.Path = "" }, "-o FILE is required"},
		{func(a *CaptureArgs) { a.Method = "dma" }, `unknown capture method "dma"`},
		{func(a *CaptureArgs) { a.Format = "json" }, `unknown format "json"`},
		{func(a *CaptureArgs) { a.RingSize = "4K" }, "--ring-size 4096: the kernel accepts 8192 (8K) to 1228800 (1200K) bytes"},
		{func(a *CaptureArgs) { a.Queue = "lots" }, "--queue: "},
		{func(a *CaptureArgs) { a.Nice = "20" }, `--nice "20": want -20..19 or auto`},
		{func(a *CaptureArgs) { a.Snaplen = -1 }, "--snaplen -1"},
		{func(a *CaptureArgs) { a.Bus = 256 }, "--bus 256"},
		{func(a *CaptureArgs) { a.Duration = -time.Second }, "--duration -1s: want 0 (no limit) or more"},
		{func(a *CaptureArgs) { a.Device = 128 }, "--dev 128"},
		{func(a *CaptureArgs) { a.VIDPID = "xyz" }, "--vidpid: "},
		{func(a *CaptureArgs) { a.Rotate.Ring = 3 }, "--ring 3 needs --file-size or --file-duration"},
		{func(a *CaptureArgs) { a.Path = "-"; a.Rotate.FileSize = "1M" }, "--file-size/--file-duration write files: give -o FILE"},
	} {
		a := base
		tc.change(&a)
		_, err := a.FileOptions(t.TempDir(), nil)
		if !errors.Is(err, ErrSelection) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want ErrSelection with %q", a, err, tc.want)
		}
	}
	// Rotate: a ring of files named after -o, the interval counts.
	a := base
	a.Rotate = rotate.Args{Ring: 4, FileSize: "1M", Interval: time.Second}
	o, err := a.FileOptions(t.TempDir(), nil)
	if err != nil || o.Rotate == nil || !reflect.DeepEqual(*o.Rotate, rotate.Options{Path: "x.pcapng", Files: 4, Size: 1 << 20}) || o.Record.Interval != time.Second {
		t.Errorf("%+v: rotate %+v, interval %v, %v", a.Rotate, o.Rotate, o.Record.Interval, err)
	}
	if o, err := base.FileOptions(t.TempDir(), nil); err != nil || o.Rotate != nil || o.Record.Interval != 0 {
		t.Errorf("no rotation: %+v, %v, %v", o.Rotate, o.Record.Interval, err)
	}
	a = base
	a.VIDPID = "0627:0001"
	if _, err := a.FileOptions(t.TempDir()+"/none", nil); err == nil || errors.Is(err, ErrSelection) || !strings.HasPrefix(err.Error(), "--vidpid: ") {
		t.Errorf("--vidpid without sysfs: %v; want an error that is not ErrSelection", err)
	}
}
