package intelpt

import (
	"errors"
	"io"
)

// TruncatedFrom says where trace ends inside a packet, reading its
// packets from off to the end as ComputeStats reads them (a bad packet
// resynchronised at the next PSB): the offset of the packet cut, or -1
// when the trace ends at a packet boundary or off is beyond it. off is a
// packet boundary after the trace's first PSB, such as where a flow
// decoder stopped (BlockDecoder.Offset at the end of its trace, or before
// a SyncForward that found no further PSB), or -1: from the first PSB.
// The answer is ComputeStats(trace, cfg).TruncatedAt (when Truncated),
// for the cost of the bytes after off, not a second reading of the trace.
func TruncatedFrom(trace []byte, off int64, cfg Config) int64 {
	d := NewDecoder(trace, cfg)
	if off < 0 {
		if d.SyncForward() != nil {
			return -1 // no PSB: nothing decoded, nothing cut
		}
	} else {
		if d.SetOffset(off) != nil {
			return -1
		}
		d.sync = -1 // a boundary, not a PSB: a bad packet there resyncs as in ComputeStats
	}
	var p Packet
	for {
		at := d.Offset()
		err := d.Next(&p)
		switch {
		case err == nil:
			continue
		case err == io.EOF:
			return -1
		case errors.Is(err, ErrTruncated):
			return at
		}
		if d.SyncForward() != nil {
			return -1
		}
	}
}
