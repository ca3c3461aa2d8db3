package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/capture"
)

// captureFlagCases are command lines of the capture commands that are
// wrong before any kernel access, with the exact message and exit code
// (pinned before their checks moved into the packages). OUT is a path
// in a temporary directory.
var captureFlagCases = []struct {
	args []string
	code int
	msg  string
}{
	// usb capture
	{[]string{"usb", "capture"}, 2, "iotap: -o FILE is required (- for stdout)\n"},
	{[]string{"usb", "capture", "-o", "OUT", "--method", "dma"}, 2, "iotap: usbmon: unknown capture method \"dma\" (want mmap, read or text)\n"},
	{[]string{"usb", "capture", "-o", "OUT", "--format", "json"}, 2, "iotap: usbmon: unknown format \"json\" (want 1u, 1t, pcap or pcapng)\n"},
	{[]string{"usb", "capture", "-o", "OUT", "--ring-size", "lots"}, 2, "iotap: --ring-size: bad size \"lots\" (want bytes, or a number with K or M)\n"},
	{[]string{"usb", "capture", "-o", "OUT", "--ring-size", "4K"}, 2, "iotap: --ring-size 4096: the kernel accepts 8192 (8K) to 1228800 (1200K) bytes\n"},
	{[]string{"usb", "capture", "-o", "OUT", "--ring-size", "2M"}, 2, "iotap: --ring-size 2097152: the kernel accepts 8192 (8K) to 1228800 (1200K) bytes\n"},
	{[]string{"usb", "capture", "-o", "OUT", "--queue", "lots"}, 2, "iotap: --queue: bad size \"lots\" (want bytes, or a number with K or M)\n"},
	{[]string{"usb", "capture", "-o", "OUT", "--nice", "fast"}, 2, "iotap: --nice \"fast\": want -20..19 or auto\n"},
	{[]string{"usb", "capture", "-o", "OUT", "--nice", "-30"}, 2, "iotap: --nice \"-30\": want -20..19 or auto\n"},
	{[]string{"usb", "capture", "-o", "OUT", "--snaplen", "-1"}, 2, "iotap: --snaplen -1: want 0 (all) or more\n"},
	{[]string{"usb", "capture", "-o", "OUT", "--bus", "256"}, 2, "iotap: --bus 256: want 0 (all buses) to 255\n"},
	{[]string{"usb", "capture", "-o", "OUT", "--bus", "-1"}, 2, "iotap: --bus -1: want 0 (all buses) to 255\n"},
	{[]string{"usb", "capture", "-o", "OUT", "--dev", "128"}, 2, "iotap: --dev 128: want a device address, 1 to 127\n"},
	{[]string{"usb", "capture", "-o", "OUT", "--vidpid", "xyz"}, 2, "iotap: --vidpid: usb: vendor:product \"xyz\": want hexadecimal VVVV:PPPP\n"},
	{[]string{"usb", "capture", "-o", "OUT", "--ring", "3"}, 2, "iotap: --ring 3 needs --file-size or --file-duration\n"},
	{[]string{"usb", "capture", "-o", "OUT", "--file-size", "big"}, 2, "iotap: --file-size: bad size \"big\" (want bytes, or a number with K or M)\n"},
	{[]string{"usb", "capture", "-o", "-", "--file-size", "1M"}, 2, "iotap: --file-size/--file-duration write files: give -o FILE (and --ring N >= 0)\n"},
	{[]string{"usb", "capture", "-o", "OUT", "--file-duration", "1s", "--ring", "-1"}, 2, "iotap: --file-size/--file-duration write files: give -o FILE (and --ring N >= 0)\n"},
	{[]string{"usb", "capture", "-o", "OUT", "stray"}, 2, "iotap: unknown command \"stray\" for \"iotap usb capture\"\n"},
	// mmio capture
	{[]string{"mmio", "capture"}, 2, "iotap: capture needs -o FILE\n"},
	{[]string{"mmio", "capture", "-o", "-", "--bundle", "OUT"}, 2, "iotap: --bundle needs the log in a file (-o FILE)\n"},
	{[]string{"mmio", "capture", "-o", "OUT", "--buffer-kb", "-1"}, 2, "iotap: --buffer-kb -1: must be positive\n"},
	{[]string{"mmio", "capture", "-o", "OUT", "stray", "--", "true"}, 2, "iotap: unexpected arguments before --: [\"stray\"]\n"},
	{[]string{"mmio", "capture", "-o", "OUT", "--bind", "nonsense"}, 2, "iotap: --bind: bad PCI address \"nonsense\": want DDDD:BB:DD.F\n"},
	{[]string{"mmio", "capture", "-o", "OUT", "--driver", "a/b"}, 2, "iotap: --driver \"a/b\": not a driver name\n"},
	{[]string{"mmio", "capture", "-o", "OUT", "--ring", "2"}, 2, "iotap: --ring 2 needs --file-size or --file-duration\n"},
	{[]string{"mmio", "capture", "-o", "OUT", "--file-size", "1M", "--bundle", "OUT.tar.gz"}, 2, "iotap: --bundle needs the log in one file, not --file-size/--file-duration\n"},
	{[]string{"mmio", "capture", "-o", "OUT/x.log"}, 1, "iotap: mmio: open DIR/out/x.log: no such file or directory\n"},
	// events record
	{[]string{"events", "record", "x"}, 2, "iotap: events record: -o FILE is required (- for stdout)\n"},
	{[]string{"events", "record", "-o", "OUT", "bad-name"}, 2, "iotap: events record: \"bad-name\": letters, digits and '_' only\n"},
	{[]string{"events", "record", "-o", "OUT", "x u99 y"}, 2, "iotap: events record: \"x u99 y\": userevents: bad command at byte 2: field \"u99 y\": unknown type \"u99\" (want u8/s8/u16/s16/u32/s32/u64/s64, int, short, char, char[N], __rel_loc char[], struct NAME SIZE)\n"},
	{[]string{"events", "record", "-o", "OUT", "--ring", "2", "x"}, 2, "iotap: --ring 2 needs --file-size or --file-duration\n"},
	// events write
	{[]string{"events", "write", "bad/name"}, 2, "iotap: bad event name \"bad/name\"\n"},
	{[]string{"events", "write", "--register", "x u99 y", "x"}, 2, "iotap: --register: userevents: bad command at byte 2: field \"u99 y\": unknown type \"u99\" (want u8/s8/u16/s16/u32/s32/u64/s64, int, short, char, char[N], __rel_loc char[], struct NAME SIZE)\n"},
	{[]string{"events", "write", "--register", "y u32 a", "x"}, 2, "iotap: --register names \"y\", not \"x\"\n"},
	{[]string{"events", "write", "--register", "x u32 a", "x", "a=zz"}, 2, "iotap: field a (u32): \"zz\" is not a 32-bit unsigned integer\n"},
	{[]string{"events", "write", "--register", "x u32 a", "x", "b=1"}, 2, "iotap: x has no field \"b\" (fields: a)\n"},
	{[]string{"events", "write", "--eventheader", "nocolon"}, 2, "iotap: --eventheader: \"nocolon\" is not PROVIDER:EVENT\n"},
	{[]string{"events", "write", "--eventheader", "P:E", "n:u8=300"}, 2, "iotap: eventheader: field \"n\": \"300\" is not a u8: strconv.ParseUint: parsing \"300\": value out of range\n"},
	{[]string{"events", "delete", "bad/name"}, 2, "iotap: bad event name \"bad/name\"\n"},
	{[]string{"events", "register", "x u99 y"}, 2, "iotap: userevents: bad command at byte 2: field \"u99 y\": unknown type \"u99\" (want u8/s8/u16/s16/u32/s32/u64/s64, int, short, char, char[N], __rel_loc char[], struct NAME SIZE)\n"},
	// capture
	{[]string{"capture", "--usb"}, 2, "iotap: capture: -o DIR is required\n"},
	{[]string{"capture", "-o", "OUT"}, 2, "iotap: capture: choose at least one source: --usb, --mmio, --events NAME\n"},
	{[]string{"capture", "--usb", "--bind", "0000:00:03.0", "-o", "OUT"}, 2, "iotap: capture: --bind needs --mmio\n"},
	{[]string{"capture", "--mmio", "--bind", "nonsense", "-o", "OUT"}, 2, "iotap: capture: --bind: bad PCI address \"nonsense\": want DDDD:BB:DD.F\n"},
	{[]string{"capture", "--usb", "--bus", "300", "-o", "OUT"}, 2, "iotap: capture: --bus 300: want 0 (all buses) to 255\n"},
	{[]string{"capture", "--usb", "stray", "-o", "OUT"}, 2, "iotap: capture: unexpected argument \"stray\" (put the command after --)\n"},
	{[]string{"capture", "--usb", "-o", "OUT", "--duration", "-1s"}, 2, "iotap: capture: --duration -1s: want 0 (no limit) or more\n"},
	{[]string{"usb", "capture", "-o", "OUT", "--duration", "-1s"}, 2, "iotap: --duration -1s: want 0 (no limit) or more\n"},
	{[]string{"events", "record", "-o", "OUT", "--duration", "-1s", "x"}, 2, "iotap: events record: --duration -1s: want 0 (no limit) or more\n"},
	// pt capture
	{[]string{"pt", "capture", "-o", "OUT", "--duration", "-1s"}, 2, "iotap: pt capture: --duration -1s: want 0 (no limit) or more\n"},
}

// TestCaptureFlagMessages: each bad command line of the capture commands
// exits with its code and exactly its message, and leaves no output.
func TestCaptureFlagMessages(t *testing.T) {
	for _, tc := range captureFlagCases {
		dir := t.TempDir()
		out := filepath.Join(dir, "out")
		args := make([]string, len(tc.args))
		for i, a := range tc.args {
			args[i] = strings.ReplaceAll(a, "OUT", out)
		}
		var stdout bytes.Buffer
		var stderr bytes.Buffer
		code := exitCode(run(context.Background(), args, &stdout, &stderr), &stderr)
		msg := strings.ReplaceAll(stderr.String(), dir, "DIR")
		if code != tc.code || msg != tc.msg || stdout.Len() > 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d, stderr %q", tc.args, code, stdout.String(), msg, tc.code, tc.msg)
		}
		if ents, _ := os.ReadDir(dir); len(ents) > 0 {
			t.Errorf("%q: left %v", tc.args, ents)
		}
	}
}

// TestLinuxOnly: on another system the capture commands are listed,
// marked Linux only, and fail with ErrNotSupported naming the command
// before anything else (here before their flags are checked).
func TestLinuxOnly(t *testing.T) {
	defer func(g string) { goos = g }(goos)
	goos = "darwin"
	for _, args := range [][]string{
		{"usb", "capture", "-o", "OUT"}, {"mmio", "capture"}, {"capture", "--usb", "-o", "OUT"},
		{"events", "record", "x", "-o", "OUT"}, {"events", "write", "x"}, {"events", "register", "x u8 a"},
		{"events", "delete", "x"}, {"events", "status"}, {"events", "list"},
	} {
		dir := t.TempDir()
		for i, a := range args {
			args[i] = strings.ReplaceAll(a, "OUT", filepath.Join(dir, "out"))
		}
		var stderr bytes.Buffer
		err := run(context.Background(), args, &bytes.Buffer{}, &stderr)
		want := "not supported: iotap " + strings.Join(args[:2], " ")
		if args[0] == "capture" {
			want = "not supported: iotap capture needs Linux"
		}
		if code := exitCode(err, &stderr); code != 1 || !errors.Is(err, capture.ErrNotSupported) || !strings.Contains(stderr.String(), want) {
			t.Errorf("%q: exit %d, %q; want exit 1 and %q", args, code, stderr.String(), want)
		}
		if ents, _ := os.ReadDir(dir); len(ents) > 0 {
			t.Errorf("%q: left %v", args, ents)
		}
	}
	var help bytes.Buffer
	run(context.Background(), []string{"events", "--help"}, &help, &help)
	if n := strings.Count(help.String(), "(Linux only)"); n != 6 {
		t.Errorf("events --help marks %d commands Linux only, want 6:\n%s", n, help.String())
	}
}
