package userevents

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
)

// TracingData is the tracing-data blob that perf record stores in
// perf.data (the HEADER_TRACING_DATA feature section, or a
// PERF_RECORD_HEADER_TRACING_DATA record in pipe mode) and trace-cmd in
// trace.dat: the ring-buffer page header, the format file of every event
// recorded, and what the kernel knew about symbols and printk formats.
// Only what decoding samples needs is kept.
type TracingData struct {
	Version    string
	BigEndian  bool
	LongSize   int
	PageSize   int
	HeaderPage []byte
	// Formats maps an event id (common_type) to its parsed format;
	// Systems maps it to the event's system ("user_events", "sched").
	Formats map[int]*Format
	Systems map[int]string
	// Bad lists format files that did not parse (the events of those
	// ids are then counted as undecodable, never guessed).
	Bad []error
}

// TracingDataError is malformed tracing data at byte Offset of the blob.
type TracingDataError struct {
	Offset int
	Msg    string
}

func (e *TracingDataError) Error() string {
	return fmt.Sprintf("userevents: tracing data at byte %d: %s", e.Offset, e.Msg)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *TracingDataError) Unwrap() error { return ErrInvalid }

// tracingMagic starts the blob: 0x17 0x08 0x44 then "tracing".
var tracingMagic = []byte("\x17\x08\x44tracing")

// maxFormats bounds the event formats read from one blob (a kernel has a
// few thousand events; a corrupt count could claim billions).
const maxFormats = 1 << 16

// ParseTracingData parses a tracing-data blob. Sections after the event
// formats (kallsyms, printk formats, saved command lines) are not needed
// and not read, so a blob cut after the formats still parses.
func ParseTracingData(b []byte) (*TracingData, error) {
	t := &TracingData{Formats: map[int]*Format{}, Systems: map[int]string{}}
	off := 0
	fail := func(msg string, args ...any) (*TracingData, error) {
		return nil, &TracingDataError{off, fmt.Sprintf(msg, args...)}
	}
	if !bytes.HasPrefix(b, tracingMagic) {
		return fail("no tracing-data magic")
	}
	off = len(tracingMagic)
	cstr := func() (string, bool) {
		i := bytes.IndexByte(b[off:], 0)
		if i < 0 {
			return "", false
		}
		s := string(b[off : off+i])
		off += i + 1
		return s, true
	}
	var ok bool
	if t.Version, ok = cstr(); !ok {
		return fail("version string not terminated")
	}
	if len(b)-off < 6 {
		return fail("short header after the version")
	}
	t.BigEndian = b[off] != 0
	t.LongSize = int(b[off+1])
	var bo binary.ByteOrder = binary.LittleEndian
	if t.BigEndian {
		bo = binary.BigEndian
	}
	t.PageSize = int(bo.Uint32(b[off+2:]))
	off += 6
	u32 := func() (uint32, bool) {
		if len(b)-off < 4 {
			return 0, false
		}
		v := bo.Uint32(b[off:])
		off += 4
		return v, true
	}
	// sized reads a u64 length and that many bytes.
	sized := func(what string) ([]byte, error) {
		if len(b)-off < 8 {
			return nil, &TracingDataError{off, what + ": size cut short"}
		}
		n := bo.Uint64(b[off:])
		if n > uint64(len(b)-off-8) {
			return nil, &TracingDataError{off, fmt.Sprintf("%s: size %d, only %d bytes left", what, n, len(b)-off-8)}
		}
		off += 8
		s := b[off : off+int(n)]
		off += int(n)
		return s, nil
	}
	for _, name := range []string{"header_page", "header_event"} {
		at := off
		got, ok := cstr()
		if !ok || got != name {
			off = at
			return fail("expected %q", name)
		}
		s, err := sized(name)
		if err != nil {
			return nil, err
		}
		if name == "header_page" {
			t.HeaderPage = s
		}
	}
	// ftrace's own events (function, ...), then the event systems.
	n, ok := u32()
	if !ok || n > maxFormats {
		return fail("bad ftrace format count")
	}
	for i := uint32(0); i < n; i++ {
		at := off
		s, err := sized("ftrace format")
		if err != nil {
			return nil, err
		}
		t.add("ftrace", s, at)
	}
	systems, ok := u32()
	if !ok || systems > maxFormats {
		return fail("bad system count")
	}
	for i := uint32(0); i < systems; i++ {
		sys, ok := cstr()
		if !ok {
			return fail("system name not terminated")
		}
		n, ok := u32()
		if !ok || n > maxFormats || len(t.Formats)+int(n) > maxFormats {
			return fail("bad format count for system %q", sys)
		}
		for j := uint32(0); j < n; j++ {
			at := off
			s, err := sized("format of system " + sys)
			if err != nil {
				return nil, err
			}
			t.add(sys, s, at)
		}
	}
	return t, nil
}

func (t *TracingData) add(sys string, text []byte, at int) {
	f, err := ParseFormat(text)
	if err != nil {
		t.Bad = append(t.Bad, fmt.Errorf("userevents: tracing data at byte %d: system %s: %w", at, sys, err))
		return
	}
	if f.ID < 0 {
		t.Bad = append(t.Bad, &TracingDataError{at, fmt.Sprintf("system %s: format of %q has no ID", sys, f.Name)})
		return
	}
	t.Formats[f.ID] = f
	t.Systems[f.ID] = strings.TrimSpace(sys)
}
