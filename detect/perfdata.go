package detect

import "encoding/binary"

// perf_event_attr.type values: PERF_TYPE_TRACEPOINT, and the first type
// of a PMU that registers its own (intel_pt).
const (
	perfTypeTracepoint = 2
	perfTypeMax        = 6
)

// PerfDataKind says what the perf.data file whose first bytes are head
// records, from the types of its events' attributes: Events when they
// are tracepoints (user_events, 'perf record -e sched:...': what 'iotap
// events read' reads) and no event of a PMU of its own, PT otherwise
// (intel_pt, or attributes not in head). Head answers PT for every
// perf.data; a command that reads both kinds asks Recognise.
// The attributes are those of the attribute section (file mode; Head
// does not take a perf.data in pipe mode).
func PerfDataKind(head []byte) Kind {
	le := binary.LittleEndian
	if len(head) < 40 || string(head[:8]) != string(perfMag) {
		return PT
	}
	entry, off, size := le.Uint64(head[16:]), le.Uint64(head[24:]), le.Uint64(head[32:])
	if entry < 8 || size%entry != 0 || off > uint64(len(head)) || size > uint64(len(head))-off {
		return PT
	}
	tracepoints := false
	for p := off; p < off+size; p += entry {
		switch t := le.Uint32(head[p:]); {
		case t >= perfTypeMax:
			return PT
		case t == perfTypeTracepoint:
			tracepoints = true
		}
	}
	if tracepoints {
		return Events
	}
	return PT
}

// Recognise is Head for a command that reads every kind (export, report,
// timeline): a perf.data is told apart by PerfDataKind, so that one of
// tracepoints (user_events) is Events, format "perf.data", read as 'iotap
// events read' reads it, and one of Intel PT stays PT.
func Recognise(head []byte, complete bool) (Result, error) {
	res, err := Head(head, complete)
	if err == nil && res.Kind == PT && res.Format == "perf.data" && res.Compression == "" {
		res.Kind = PerfDataKind(head)
	}
	return res, err
}
