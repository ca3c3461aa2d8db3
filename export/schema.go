package export

// SchemaVersion is the version of the tables' schemas (docs/parquet.md).
// It is written in every file's key/value metadata ("iotap.schema_version")
// and in the captures table. It changes when a column is removed, renamed
// or changes type; added columns keep it.
const SchemaVersion = 3

// Table names: the first directory level under the output directory.
const (
	TableCaptures     = "captures"
	TableUSBEvents    = "usb_events"
	TableUSBTransfers = "usb_transfers"
	TableMMIOAccesses = "mmio_accesses"
	TableMMIOMaps     = "mmio_maps"
	TableMMIOFields   = "mmio_fields"
	TableUserEvents   = "user_events"
	TablePTStats      = "pt_stats"
	TablePTCalls      = "pt_calls"
)

// Tables lists every table this version writes.
var Tables = []string{TableCaptures, TableUSBEvents, TableUSBTransfers, TableMMIOAccesses, TableMMIOMaps, TableMMIOFields, TableUserEvents, TablePTStats, TablePTCalls}

// Identity is the capture identity: the leading columns of every table.
// None is null; an unknown value is "".
type Identity struct {
	Host          string `parquet:"host,dict"`
	BootID        string `parquet:"boot_id,dict"`
	KernelRelease string `parquet:"kernel_release,dict"`
	CaptureID     string `parquet:"capture_id,dict"`
	// SourceFile is the input file the row was read from (as given on
	// the command line).
	SourceFile string `parquet:"source_file,dict"`
	// ClockDomain names the clock of ts_ns columns: "realtime" (wall
	// clock, ns since the Unix epoch), "usbmon-text" (usbmon text stamps:
	// monotonic µs modulo 4096 s, unwrapped), "trace-local" (the tracefs
	// trace clock, ns since boot), "tsc" (Intel PT TSC ticks).
	ClockDomain string `parquet:"clock_domain,dict"`
}

// CaptureRow is a row of the captures table: one per exported input.
type CaptureRow struct {
	Identity
	Source        string `parquet:"source,dict"` // usb, mmio, events, pt
	Format        string `parquet:"format,dict"` // pcapng, pcap, 1u, 1t, binary, mmiotrace, ndjson, ...
	Compression   string `parquet:"compression,dict"`
	InputBytes    int64  `parquet:"input_bytes"`
	Records       int64  `parquet:"records"` // records read from the input
	FirstTSNS     *int64 `parquet:"first_ts_ns,optional"`
	LastTSNS      *int64 `parquet:"last_ts_ns,optional"`
	CaptureDate   int32  `parquet:"capture_date,date"` // the date= partition value
	CommonClock   string `parquet:"common_clock,dict"` // clocks.json "common", "" without one
	CommonOffset  *int64 `parquet:"common_offset_ns,optional"`
	LostEvents    int64  `parquet:"lost_events"`   // events the kernel reports lost/dropped
	SkippedLines  int64  `parquet:"skipped_lines"` // unreadable lines skipped (--keep-going)
	Truncated     bool   `parquet:"truncated"`
	Complete      bool   `parquet:"complete"` // the whole input was read (no decode error)
	Loss          string `parquet:"loss"`     // human description of what was lost, "" when nothing
	ExportedAt    int64  `parquet:"exported_at,timestamp(microsecond)"`
	SchemaVersion int32  `parquet:"schema_version"`
	IotapVersion  string `parquet:"iotap_version,dict"`
}

// USBEventRow is a row of usb_events: one usbmon event (URB submission,
// completion or submission error). Column names are those of the
// usb_event NDJSON record (docs/ndjson.md).
type USBEventRow struct {
	Identity
	Seq        int64   `parquet:"seq"`           // 1-based position in the input (tshark's frame.number)
	TSNS       int64   `parquet:"ts_ns"`         // event time, clock_domain clock, ns (µs resolution)
	URBType    string  `parquet:"urb_type,dict"` // S, C, E
	URBID      uint64  `parquet:"urb_id"`        // kernel URB pointer (tag)
	Transfer   string  `parquet:"transfer,dict"` // ctrl, bulk, intr, iso
	Bus        int32   `parquet:"bus"`
	Dev        int32   `parquet:"dev"`
	EP         int32   `parquet:"ep"`              // endpoint address byte: bit 7 (0x80) set for IN
	Status     *int32  `parquet:"status,optional"` // null for submissions
	StatusName *string `parquet:"status_name,optional,dict"`
	Length     int64   `parquet:"length"`      // urb length (requested on S, actual on C)
	DataLength int64   `parquet:"data_length"` // bytes captured
	Setup      []byte  `parquet:"setup,optional"`
	Request    *string `parquet:"request,optional,dict"` // control request name
	Summary    *string `parquet:"summary,optional"`      // class-decoded summary
	LatencyNS  *int64  `parquet:"latency_ns,optional"`   // completions paired with their submission
	SubmitSeq  *int64  `parquet:"submit_seq,optional"`
	VIDPID     *string `parquet:"vidpid,optional,dict"`
	VendorID   *int32  `parquet:"vendor_id,optional"`
	ProductID  *int32  `parquet:"product_id,optional"`
	// Synthesized: written at capture start from sysfs descriptors, not
	// captured traffic (never paired).
	Synthesized bool `parquet:"synthesized"`
}

// USBTransferRow is a row of usb_transfers: a completion (or submission
// error) paired with its submission. Column names are those of the
// usb_pair NDJSON record (docs/ndjson.md).
type USBTransferRow struct {
	Identity
	SubmitSeq      int64   `parquet:"submit_seq"`
	CompleteSeq    int64   `parquet:"complete_seq"`
	SubmitTSNS     int64   `parquet:"submit_ts_ns"`
	TSNS           int64   `parquet:"ts_ns"` // the completion's time
	LatencyNS      int64   `parquet:"latency_ns"`
	URBID          uint64  `parquet:"urb_id"`
	Transfer       string  `parquet:"transfer,dict"`
	Bus            int32   `parquet:"bus"`
	Dev            int32   `parquet:"dev"`
	EP             int32   `parquet:"ep"` // address byte: number | 0x80 for IN (as usb stats prints)
	Status         int32   `parquet:"status"`
	StatusName     string  `parquet:"status_name,dict"`
	Outcome        string  `parquet:"outcome,dict"` // ok, stall, cancelled, error, submit_error
	Requested      int64   `parquet:"requested"`    // length asked for at submission
	Actual         int64   `parquet:"actual"`       // actual length at completion
	VIDPID         *string `parquet:"vidpid,optional,dict"`
	VendorID       *int32  `parquet:"vendor_id,optional"`
	ProductID      *int32  `parquet:"product_id,optional"`
	Manufacturer   *string `parquet:"manufacturer,optional,dict"`
	Product        *string `parquet:"product,optional,dict"`
	InterfaceClass *int32  `parquet:"interface_class,optional"`
	Request        *string `parquet:"request,optional,dict"`
	Summary        *string `parquet:"summary,optional"`
}

// MMIOFieldRow is a row of mmio_fields: one bitfield of a register value
// seen in mmio_accesses, once per capture, register and value (join on
// capture_id, bar, register, value). Kept out of mmio_accesses: a
// nested list per access costs more than the rest of the row to write.
type MMIOFieldRow struct {
	Identity
	PCI        string `parquet:"pci,dict"`
	VendorID   int32  `parquet:"vendor_id"`
	DeviceID   int32  `parquet:"device_id"`
	BAR        string `parquet:"bar,dict"` // "0000:00:03.0/0": PCI address / BAR index
	BARIndex   int32  `parquet:"bar_index"`
	Register   string `parquet:"register,dict"`
	Value      uint64 `parquet:"value"`
	Field      string `parquet:"field,dict"` // "" for a whole-register enum; nested bitsets as OUTER.INNER
	Low        int32  `parquet:"low"`        // lowest bit
	High       int32  `parquet:"high"`       // highest bit
	FieldValue uint64 `parquet:"field_value"`
	Enum       string `parquet:"enum,dict"` // the value's name, "" when none
}

// MMIOAccessRow is a row of mmio_accesses: one R, W or UNKNOWN record.
// Column names are those of the mmio_access NDJSON record
// (docs/ndjson.md).
type MMIOAccessRow struct {
	Identity
	Line     int64   `parquet:"line"`        // input line number
	TSNS     int64   `parquet:"ts_ns"`       // trace clock, ns
	Access   string  `parquet:"access,dict"` // R, W, UNKNOWN
	Width    int32   `parquet:"width"`       // bytes
	MapID    int32   `parquet:"map_id"`
	Phys     uint64  `parquet:"phys"`
	Value    uint64  `parquet:"value"`
	PC       *uint64 `parquet:"pc,optional"` // null when not recorded
	PID      int32   `parquet:"pid"`
	CPU      *int32  `parquet:"cpu,optional"` // not in mmiotrace logs of this version: null
	PCI      *string `parquet:"pci,optional,dict"`
	VendorID *int32  `parquet:"vendor_id,optional"`
	DeviceID *int32  `parquet:"device_id,optional"`
	Driver   *string `parquet:"driver,optional,dict"`
	BAR      *string `parquet:"bar,optional,dict"` // "0000:00:03.0/0"
	BARIndex *int32  `parquet:"bar_index,optional"`
	Offset   *uint64 `parquet:"offset,optional"`
	Register *string `parquet:"register,optional,dict"`
	Decoded  *string `parquet:"decoded,optional,dict"` // the value's fields, compact: {SLU, SPEED=1000}; mmio_fields has them as rows
}

// MMIOMapRow is a row of mmio_maps: one MAP or UNMAP record, named as the
// mmio_map and mmio_unmap NDJSON records.
type MMIOMapRow struct {
	Identity
	Line     int64   `parquet:"line"`
	TSNS     int64   `parquet:"ts_ns"`
	Kind     string  `parquet:"kind,dict"` // mmio_map, mmio_unmap
	MapID    int32   `parquet:"map_id"`
	Phys     uint64  `parquet:"phys"`
	Virt     uint64  `parquet:"virt"`
	Length   uint64  `parquet:"length"`
	PC       *uint64 `parquet:"pc,optional"`
	PCI      *string `parquet:"pci,optional,dict"`
	VendorID *int32  `parquet:"vendor_id,optional"`
	DeviceID *int32  `parquet:"device_id,optional"`
	Driver   *string `parquet:"driver,optional,dict"`
	BAR      *string `parquet:"bar,optional,dict"`
	BARIndex *int32  `parquet:"bar_index,optional"`
	Offset   *uint64 `parquet:"offset,optional"`
}

// UserEventRow is a row of user_events: one recorded event. Fields are
// in three typed maps by the JSON type of their value, so that one schema
// holds every event of every capture (see docs/parquet.md).
type UserEventRow struct {
	Identity
	Line       int64             `parquet:"line"`
	TSNS       int64             `parquet:"ts_ns"`
	WallNS     *int64            `parquet:"wall_ns,optional"` // ns since the Unix epoch, when the recording relates its clock to it
	System     string            `parquet:"system,dict"`
	Name       string            `parquet:"name,dict"`
	CPU        int32             `parquet:"cpu"`
	TID        int32             `parquet:"tid"`          // the task id (the tracepoint's common_pid)
	PID        *int32            `parquet:"pid,optional"` // the process, when the recording has it (perf)
	IntFields  map[string]int64  `parquet:"int_fields"`
	UintFields map[string]uint64 `parquet:"uint_fields"` // integers above the int64 range
	StrFields  map[string]string `parquet:"str_fields"`
}

// PTStatsRow is a row of pt_stats: the packet statistics of one Intel PT
// stream (a CPU's or a thread's trace, or a raw file), as 'iotap pt stats
// --json' prints them.
type PTStatsRow struct {
	Identity
	Stream           string           `parquet:"stream,dict"`  // the stream: "cpu N", "tid N", or the raw file
	CPU              *int32           `parquet:"cpu,optional"` // null when not per CPU
	Bytes            int64            `parquet:"bytes"`
	Packets          int64            `parquet:"packets"`
	Kinds            map[string]int64 `parquet:"kinds"` // packets by kind (TNT, TIP, PSB, ...)
	PSBs             int64            `parquet:"psbs"`
	PSBGapMin        *int64           `parquet:"psb_gap_min,optional"` // bytes between PSBs; null with fewer than 2 PSBs
	PSBGapMean       *int64           `parquet:"psb_gap_mean,optional"`
	PSBGapMax        *int64           `parquet:"psb_gap_max,optional"`
	Overflows        int64            `parquet:"overflows"`
	Errors           int64            `parquet:"errors"`
	FirstErrorOffset *int64           `parquet:"first_error_offset,optional"`
	SkippedBytes     int64            `parquet:"skipped_bytes"`
	Truncated        bool             `parquet:"truncated"`
	FirstTSC         *uint64          `parquet:"first_tsc,optional"`
	LastTSC          *uint64          `parquet:"last_tsc,optional"`
}

// PTCallRow is a row of pt_calls: one function call of a traced thread,
// as 'iotap pt calls --json' prints it, with its self time.
type PTCallRow struct {
	Identity
	TID       int32  `parquet:"tid"`
	Depth     int32  `parquet:"depth"` // 0 for the bottom of the stack
	Func      string `parquet:"func,dict"`
	Entry     uint64 `parquet:"entry"`     // run-time address of the function
	BeginTSC  uint64 `parquet:"begin_tsc"` // trace time (TSC ticks)
	EndTSC    uint64 `parquet:"end_tsc"`
	BeginNS   *int64 `parquet:"begin_ns,optional"` // on the perf clock; null without TIME_CONV (clock_domain tsc)
	EndNS     *int64 `parquet:"end_ns,optional"`
	SelfNS    *int64 `parquet:"self_ns,optional"` // end - begin less the callees' time
	SelfTSC   uint64 `parquet:"self_tsc"`         // the same in ticks
	CallKind  string `parquet:"call_kind,dict"`
	EndReason string `parquet:"end_reason,dict"`
	Insns     int64  `parquet:"insns"`
	SelfInsns int64  `parquet:"self_insns"`
}
