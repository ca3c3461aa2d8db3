package userevents

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Ring-buffer page format (kernel/trace/ring_buffer.c), as read from
// per_cpu/cpuN/trace_pipe_raw: a page header (u64 timestamp, local_t
// commit) then events. Each event starts with a u32 whose low 5 bits are
// type_len and high 27 bits time_delta.
const (
	typeLenMax     = 28 // 1..28: data of type_len*4 bytes follows the header
	typePadding    = 29
	typeTimeExtend = 30
	typeTimeStamp  = 31

	missedEvents = 1 << 31 // commit flag: events were lost before this page
	missedStored = 1 << 30 // commit flag: their count follows the data
	commitMask   = missedStored - 1
)

// PageLayout is where the page header fields are (events/header_page).
type PageLayout struct {
	CommitSize int // size of local_t commit: 8 on 64-bit kernels
	DataOffset int // start of the events: 16 on 64-bit kernels
}

// DefaultPageLayout is the layout of 64-bit kernels.
var DefaultPageLayout = PageLayout{CommitSize: 8, DataOffset: 16}

// ParseHeaderPage reads events/header_page.
func ParseHeaderPage(data []byte) (PageLayout, error) {
	l := PageLayout{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "field:") {
			continue
		}
		var name string
		var off, size int
		for _, p := range strings.Split(line, ";") {
			p = strings.TrimSpace(p)
			switch {
			case strings.HasPrefix(p, "field:"):
				w := strings.Fields(p)
				name = w[len(w)-1]
			case strings.HasPrefix(p, "offset:"):
				off, _ = strconv.Atoi(strings.TrimPrefix(p, "offset:"))
			case strings.HasPrefix(p, "size:"):
				size, _ = strconv.Atoi(strings.TrimPrefix(p, "size:"))
			}
		}
		switch name {
		case "commit":
			if size != 4 && size != 8 || off != 8 {
				return l, &FormatError{i + 1, fmt.Sprintf("commit at %d size %d", off, size)}
			}
			l.CommitSize = size
		case "data":
			if off < 12 || off > 64 {
				return l, &FormatError{i + 1, fmt.Sprintf("data at %d", off)}
			}
			l.DataOffset = off
		}
	}
	if l.CommitSize == 0 || l.DataOffset == 0 {
		return l, &FormatError{1, "header_page lacks commit or data"}
	}
	return l, nil
}

// RawRecord is one data event of a page.
type RawRecord struct {
	TS   uint64 // trace clock, nanoseconds with the default local clock
	Data []byte // the record: common fields then payload (may carry up to 3 bytes of alignment padding)
}

// PageInfo describes a decoded page.
type PageInfo struct {
	Timestamp uint64
	Length    int    // bytes of events
	Missed    bool   // events were lost before this page
	Lost      uint64 // how many, when the kernel stored the count (else 0)
	Discarded int    // discarded (filtered) events skipped
}

// PageError reports a malformed page with the byte offset of the problem.
type PageError struct {
	Offset int
	Msg    string
}

func (e *PageError) Error() string {
	return fmt.Sprintf("userevents: ring-buffer page byte %d: %s", e.Offset, e.Msg)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *PageError) Unwrap() error { return ErrInvalid }

// DecodePage decodes one ring-buffer page and appends its data events to
// dst. Record data aliases page.
func DecodePage(page []byte, l PageLayout, dst []RawRecord) (PageInfo, []RawRecord, error) {
	var info PageInfo
	if l.DataOffset < 8+l.CommitSize || len(page) < l.DataOffset {
		return info, dst, &PageError{0, fmt.Sprintf("page of %d bytes is shorter than its header", len(page))}
	}
	info.Timestamp = binary.LittleEndian.Uint64(page)
	var commit uint64
	if l.CommitSize == 8 {
		commit = binary.LittleEndian.Uint64(page[8:])
	} else {
		commit = uint64(binary.LittleEndian.Uint32(page[8:]))
	}
	info.Missed = commit&missedEvents != 0
	n := int(commit & commitMask)
	end := l.DataOffset + n
	if end > len(page) {
		return info, dst, &PageError{8, fmt.Sprintf("commit %d beyond the %d-byte page", n, len(page))}
	}
	info.Length = n
	if commit&missedStored != 0 && end+8 <= len(page) {
		info.Lost = binary.LittleEndian.Uint64(page[end:])
	}
	ts := info.Timestamp
	off := l.DataOffset
	for off < end {
		if end-off < 4 {
			return info, dst, &PageError{off, "truncated event header"}
		}
		h := binary.LittleEndian.Uint32(page[off:])
		typeLen, delta := h&31, uint64(h>>5)
		switch {
		case typeLen == typePadding:
			if delta == 0 { // rest of the page is padding
				return info, dst, nil
			}
			if end-off < 8 {
				return info, dst, &PageError{off, "truncated padding event"}
			}
			size := int(binary.LittleEndian.Uint32(page[off+4:]))
			if size < 4 || size > end-off-4 {
				return info, dst, &PageError{off, fmt.Sprintf("padding of %d bytes overruns the page", size)}
			}
			info.Discarded++
			off += 4 + size
		case typeLen == typeTimeExtend, typeLen == typeTimeStamp:
			if end-off < 8 {
				return info, dst, &PageError{off, "truncated time event"}
			}
			v := uint64(binary.LittleEndian.Uint32(page[off+4:]))<<27 | delta
			if typeLen == typeTimeExtend {
				ts += v
			} else {
				// Absolute stamp of 59 bits; the top bits come from the page.
				const low = 1<<59 - 1
				nts := v
				if ts&^low != 0 {
					nts |= ts &^ low
					if nts < ts {
						nts += 1 << 59
					}
				}
				ts = nts
			}
			off += 8
		case typeLen == 0:
			if end-off < 8 {
				return info, dst, &PageError{off, "truncated event length"}
			}
			size := int(binary.LittleEndian.Uint32(page[off+4:]))
			if size < 4 || size > end-off-4 {
				return info, dst, &PageError{off, fmt.Sprintf("event of %d bytes overruns the page", size)}
			}
			ts += delta
			dst = append(dst, RawRecord{TS: ts, Data: page[off+8 : off+4+size]})
			off += 4 + size
		default: // 1..28
			size := int(typeLen) * 4
			if size > end-off-4 {
				return info, dst, &PageError{off, fmt.Sprintf("event of %d bytes overruns the page", size)}
			}
			ts += delta
			dst = append(dst, RawRecord{TS: ts, Data: page[off+4 : off+4+size]})
			off += 4 + size
		}
	}
	return info, dst, nil
}
