package timeline

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of Perfetto's trace protos (protos/perfetto/trace/
// perfetto_trace.proto; a copy is in testdata/perfetto).
const (
	fTracePacket = 1 // Trace.packet

	fPacketTimestamp       = 8  // TracePacket.timestamp
	fPacketSequenceID      = 10 // TracePacket.trusted_packet_sequence_id
	fPacketTrackEvent      = 11 // TracePacket.track_event
	fPacketInternedData    = 12 // TracePacket.interned_data
	fPacketSequenceFlags   = 13 // TracePacket.sequence_flags
	fPacketPrevDropped     = 42 // TracePacket.previous_packet_dropped
	fPacketTrackDescriptor = 60 // TracePacket.track_descriptor
	fPacketFirstOnSequence = 87 // TracePacket.first_packet_on_sequence

	seqIncrementalStateCleared = 1 // TracePacket.SequenceFlags
	seqNeedsIncrementalState   = 2

	fTrackUUID        = 1  // TrackDescriptor.uuid
	fTrackName        = 2  // TrackDescriptor.name
	fTrackParentUUID  = 5  // TrackDescriptor.parent_uuid
	fTrackCounter     = 8  // TrackDescriptor.counter
	fTrackDescription = 14 // TrackDescriptor.description
	fTrackChildOrder  = 11 // TrackDescriptor.child_ordering
	fTrackSiblingRank = 12 // TrackDescriptor.sibling_order_rank

	childOrderExplicit = 3 // TrackDescriptor.ChildTracksOrdering.EXPLICIT

	fCounterUnit     = 3 // CounterDescriptor.unit
	fCounterUnitName = 6 // CounterDescriptor.unit_name

	fEventCategoryIIDs = 3  // TrackEvent.category_iids
	fEventAnnotations  = 4  // TrackEvent.debug_annotations
	fEventType         = 9  // TrackEvent.type
	fEventNameIID      = 10 // TrackEvent.name_iid
	fEventTrackUUID    = 11 // TrackEvent.track_uuid
	fEventCategories   = 22 // TrackEvent.categories
	fEventName         = 23 // TrackEvent.name
	fEventDoubleValue  = 44 // TrackEvent.double_counter_value

	typeSliceBegin = 1 // TrackEvent.Type
	typeSliceEnd   = 2
	typeInstant    = 3
	typeCounter    = 4

	fInternedCategories = 1  // InternedData.event_categories
	fInternedNames      = 2  // InternedData.event_names
	fInternedArgNames   = 3  // InternedData.debug_annotation_names
	fInternedArgStrings = 29 // InternedData.debug_annotation_string_values
	fInternedIID        = 1  // EventName/EventCategory/DebugAnnotationName.iid
	fInternedName       = 2  // ... .name (InternedString.str)

	fArgNameIID = 1  // DebugAnnotation.name_iid
	fArgBool    = 2  // DebugAnnotation.bool_value
	fArgUint    = 3  // DebugAnnotation.uint_value
	fArgInt     = 4  // DebugAnnotation.int_value
	fArgDouble  = 5  // DebugAnnotation.double_value
	fArgString  = 6  // DebugAnnotation.string_value
	fArgPointer = 7  // DebugAnnotation.pointer_value
	fArgStrIID  = 17 // DebugAnnotation.string_value_iid
	fArgName    = 10 // DebugAnnotation.name
)

// CounterUnit is the unit of a counter track (CounterDescriptor.Unit).
type CounterUnit uint8

// Counter units.
const (
	UnitUnspecified CounterUnit = 0
	UnitTimeNS      CounterUnit = 1
	UnitCount       CounterUnit = 2
	UnitSizeBytes   CounterUnit = 3
)

// ArgKind is the type of an Arg's value.
type ArgKind uint8

// Argument kinds.
const (
	ArgString ArgKind = iota
	ArgInt
	ArgUint
	ArgDouble
	ArgBool
	ArgHex // Uint, shown in hexadecimal (a pointer_value)
	// ArgInterned is a string written once per file and referred to by
	// its id (DebugAnnotation.string_value_iid): for values that repeat,
	// such as the decoded value of a polled register.
	ArgInterned
)

// Arg is a debug annotation: a named value attached to a slice or instant.
// For ArgString the value is Str, or Bytes when Str is empty (no
// conversion needed for text held in a reader's buffer).
type Arg struct {
	Name   string
	Kind   ArgKind
	Str    string
	Bytes  []byte
	Int    int64
	Uint   uint64
	Double float64
	Bool   bool
}

// Str returns a string argument.
func Str(name, v string) Arg { return Arg{Name: name, Kind: ArgString, Str: v} }

// Bytes returns a string argument whose text is b (not copied: the
// Writer uses it before returning).
func Bytes(name string, b []byte) Arg { return Arg{Name: name, Kind: ArgString, Bytes: b} }

// Int returns a signed integer argument.
func Int(name string, v int64) Arg { return Arg{Name: name, Kind: ArgInt, Int: v} }

// Uint returns an unsigned integer argument.
func Uint(name string, v uint64) Arg { return Arg{Name: name, Kind: ArgUint, Uint: v} }

// Hex returns an unsigned integer argument shown in hexadecimal: a
// DebugAnnotation.pointer_value, which Perfetto shows as "0x..." (its
// integers are shown in decimal).
func Hex(name string, v uint64) Arg { return Arg{Name: name, Kind: ArgHex, Uint: v} }

// Interned returns a string argument whose text is interned: written
// once per file (InternedData.debug_annotation_string_values) and
// referred to by its id, for values that repeat. Past MaxInterned
// distinct values it is written inline.
func Interned(name, v string) Arg { return Arg{Name: name, Kind: ArgInterned, Str: v} }

// Double returns a floating-point argument.
func Double(name string, v float64) Arg { return Arg{Name: name, Kind: ArgDouble, Double: v} }

// Bool returns a boolean argument.
func Bool(name string, v bool) Arg { return Arg{Name: name, Kind: ArgBool, Bool: v} }

// MaxInterned bounds each table of interned strings (event names,
// categories, argument names) so that memory stays flat whatever the input:
// strings seen after a table is full are written inline.
const MaxInterned = 1 << 14

// WriterStats counts what a Writer wrote.
type WriterStats struct {
	Packets  int64 `json:"packets"`  // TracePackets
	Tracks   int64 `json:"tracks"`   // track descriptors (counter tracks included)
	Slices   int64 `json:"slices"`   // slices begun
	Ends     int64 `json:"ends"`     // slices ended
	Instants int64 `json:"instants"` // instant events
	Counters int64 `json:"counters"` // counter values
	Interned int64 `json:"interned"` // strings interned
	Bytes    int64 `json:"bytes"`    // bytes written
}

// Writer writes a Perfetto trace (a perfetto.protos.Trace message) as a
// stream: every TracePacket is encoded into a reused buffer and written as
// soon as it is complete, so memory does not grow with the trace. All
// events go on one packet sequence whose first packet clears the
// incremental state; event names, categories and argument names are
// interned on it.
//
// Timestamps are nanoseconds of the trace's clock (Perfetto's default,
// BOOTTIME, as far as the viewer is concerned). A Writer is not safe for
// concurrent use. Errors are sticky: after a write fails, every method
// does nothing and Close returns the error.
type Writer struct {
	w     *bufio.Writer
	seqID uint32
	began bool
	uuid  uint64
	err   error

	names, cats, argNames, argStrs intern
	interned                       []byte // InternedData of the packet being built
	ev, ann, pkt                   []byte
	hdr                            [16]byte

	stats WriterStats

	rot *rotation // nil unless EnableRotation

	// epoch changes whenever the interned strings or the declared tracks
	// are forgotten (a new file, a data loss): EventCaches of another
	// epoch are stale.
	epoch uint64
}

// An EventCache remembers how an instant (its track, category, name and
// arguments) was encoded, so that the same instant at another time is
// written by copying it (InstantAgain): a polled register read again
// with the same value costs a copy. It refers to the Writer's interned
// strings and declared tracks, so it is valid only until they are
// forgotten (a Rotate or DataLost), which the Writer detects. Its memory
// is the encoded event: keep a bounded number of them.
type EventCache struct {
	epoch uint64
	tail  []byte // the packet after its timestamp
}

// rotation is the state a Writer keeps to continue in another file: every
// track's descriptor (declared again, with its parents, in each file where
// it is used) and the slices still open.
type rotation struct {
	descs  [][]byte // TrackDescriptor by uuid-1
	parent []uint64
	shown  []uint32 // file (epoch) where each track was last declared
	epoch  uint32
	open   map[uint64][]openSlice
	base   int64 // stats.Bytes when the current file began
}

type openSlice struct{ cat, name string }

type intern struct {
	ids  map[string]uint64
	next uint64
	// recent is a direct-mapped cache in front of ids, indexed by the
	// string's length and last bytes: the few names a source repeats hit
	// it without hashing their text (a string held by the source compares
	// equal by its address).
	recent [64]struct {
		s   string
		iid uint64
	}
}

// reset forgets every interned string.
func (t *intern) reset() {
	t.ids = nil
	t.recent = [64]struct {
		s   string
		iid uint64
	}{}
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 256<<10), seqID: 1, epoch: 1}
}

// Stats returns what has been written so far.
func (w *Writer) Stats() WriterStats { return w.stats }

// Err returns the first write error.
func (w *Writer) Err() error { return w.err }

// Close flushes buffered packets. It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if !w.began {
		// An empty trace still says its sequence starts clean.
		w.begin()
	}
	if err := w.w.Flush(); err != nil && w.err == nil {
		w.err = fmt.Errorf("perfetto: %w", err)
	}
	return w.err
}

// TrackOptions are the optional parts of a track descriptor.
type TrackOptions struct {
	// Description is shown in the track's details.
	Description string
	// Counter makes it a counter track with this unit; UnitName (e.g.
	// "B/s") labels the values.
	Counter  bool
	Unit     CounterUnit
	UnitName string
	// Rank orders the track among its siblings when its parent was
	// created with Ordered (lower first).
	Rank int32
	// Ordered asks for children shown in Rank order rather than by name.
	Ordered bool
}

// Track declares a track named name under parent (0 for a top-level
// track) and returns its uuid.
func (w *Writer) Track(parent uint64, name string, opt TrackOptions) uint64 {
	w.uuid++
	id := w.uuid
	if w.err != nil {
		return id
	}
	b := w.ev[:0]
	b = protowire.AppendTag(b, fTrackUUID, protowire.VarintType)
	b = protowire.AppendVarint(b, id)
	b = protowire.AppendTag(b, fTrackName, protowire.BytesType)
	b = protowire.AppendString(b, name)
	if parent != 0 {
		b = protowire.AppendTag(b, fTrackParentUUID, protowire.VarintType)
		b = protowire.AppendVarint(b, parent)
	}
	if opt.Counter {
		c := w.ann[:0]
		if opt.Unit != UnitUnspecified {
			c = protowire.AppendTag(c, fCounterUnit, protowire.VarintType)
			c = protowire.AppendVarint(c, uint64(opt.Unit))
		}
		if opt.UnitName != "" {
			c = protowire.AppendTag(c, fCounterUnitName, protowire.BytesType)
			c = protowire.AppendString(c, opt.UnitName)
		}
		b = protowire.AppendTag(b, fTrackCounter, protowire.BytesType)
		b = protowire.AppendBytes(b, c)
		w.ann = c
	}
	if opt.Ordered {
		b = protowire.AppendTag(b, fTrackChildOrder, protowire.VarintType)
		b = protowire.AppendVarint(b, childOrderExplicit)
	}
	if opt.Rank != 0 {
		b = protowire.AppendTag(b, fTrackSiblingRank, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(int64(opt.Rank)))
	}
	if opt.Description != "" {
		b = protowire.AppendTag(b, fTrackDescription, protowire.BytesType)
		b = protowire.AppendString(b, opt.Description)
	}
	w.ev = b
	if r := w.rot; r != nil {
		r.descs = append(r.descs, append([]byte(nil), b...))
		r.parent = append(r.parent, parent)
		r.shown = append(r.shown, r.epoch)
	}
	w.emitTrack(b)
	return id
}

func (w *Writer) emitTrack(desc []byte) {
	p := w.packetHeader(false, 0, false)
	p = protowire.AppendTag(p, fPacketTrackDescriptor, protowire.BytesType)
	p = protowire.AppendBytes(p, desc)
	w.emit(p)
	w.stats.Tracks++
}

// declare writes the descriptor of track (parents first) in the current
// file of a rotating Writer, once per file.
func (w *Writer) declare(track uint64) {
	r := w.rot
	if track == 0 || track > uint64(len(r.descs)) || r.shown[track-1] == r.epoch {
		return
	}
	r.shown[track-1] = r.epoch
	w.declare(r.parent[track-1])
	w.emitTrack(r.descs[track-1])
}

// EnableRotation makes w able to continue in another file (Rotate). It
// must be called before the first track is declared. Memory then grows
// with the number of tracks and of slices open at once, not with events.
func (w *Writer) EnableRotation() {
	if w.rot == nil {
		w.rot = &rotation{open: map[uint64][]openSlice{}}
	}
}

// FileBytes returns the bytes written to the current file (since the last
// Rotate).
func (w *Writer) FileBytes() int64 {
	if w.rot == nil {
		return w.stats.Bytes
	}
	return w.stats.Bytes - w.rot.base
}

// Rotate ends the current file at ts and continues the trace in next, a
// trace that opens on its own: its first packet clears the incremental
// state, names are interned again, and each track is declared again (with
// its parents) before its first event in next. Slices open at ts end
// there with the argument window="continues in the next file" and begin
// again at ts in next (window="continued from the previous file"). The
// current file is flushed; the caller closes it. EnableRotation must have
// been called.
func (w *Writer) Rotate(next io.Writer, ts uint64) error {
	r := w.rot
	if r == nil {
		return errors.New("perfetto: Rotate without EnableRotation")
	}
	if w.err != nil {
		return w.err
	}
	tracks := make([]uint64, 0, len(r.open))
	for t, st := range r.open {
		if len(st) > 0 {
			tracks = append(tracks, t)
		}
	}
	sort.Slice(tracks, func(i, j int) bool { return tracks[i] < tracks[j] })
	for _, t := range tracks {
		for range r.open[t] {
			w.event(typeSliceEnd, t, ts, "", "", []Arg{Str("window", "continues in the next file")}, 0)
		}
	}
	if !w.began {
		w.begin()
	}
	if err := w.w.Flush(); err != nil {
		w.err = fmt.Errorf("perfetto: %w", err)
		return w.err
	}
	w.w.Reset(next)
	w.began = false
	w.names, w.cats, w.argNames, w.argStrs = intern{}, intern{}, intern{}, intern{}
	w.epoch++
	r.epoch++
	r.base = w.stats.Bytes
	for _, t := range tracks {
		for _, sl := range r.open[t] {
			w.event(typeSliceBegin, t, ts, sl.cat, sl.name, []Arg{Str("window", "continued from the previous file")}, 0)
		}
	}
	return w.err
}

// Begin begins a slice named name (category cat, may be empty) on track
// at ts. Slices on one track must nest: End closes the innermost.
func (w *Writer) Begin(track, ts uint64, cat, name string, args ...Arg) {
	w.event(typeSliceBegin, track, ts, cat, name, args, 0)
	w.stats.Slices++
	if w.rot != nil {
		w.rot.open[track] = append(w.rot.open[track], openSlice{cat, name})
	}
}

// End ends the innermost open slice of track at ts. Its args are added
// to the slice's.
func (w *Writer) End(track, ts uint64, args ...Arg) {
	w.event(typeSliceEnd, track, ts, "", "", args, 0)
	w.stats.Ends++
	if r := w.rot; r != nil {
		if st := r.open[track]; len(st) > 0 {
			r.open[track] = st[:len(st)-1]
		}
	}
}

// Instant writes an instant event on track at ts.
func (w *Writer) Instant(track, ts uint64, cat, name string, args ...Arg) {
	w.event(typeInstant, track, ts, cat, name, args, 0)
	w.stats.Instants++
}

// InstantCached is Instant, and remembers the encoding in c for
// InstantAgain.
func (w *Writer) InstantCached(c *EventCache, track, ts uint64, cat, name string, args ...Arg) {
	w.Instant(track, ts, cat, name, args...)
	if w.err != nil {
		return
	}
	// What follows the timestamp in the packet, as packetHeader and
	// event write it.
	t := c.tail[:0]
	t = protowire.AppendTag(t, fPacketSequenceID, protowire.VarintType)
	t = protowire.AppendVarint(t, uint64(w.seqID))
	t = protowire.AppendTag(t, fPacketSequenceFlags, protowire.VarintType)
	t = protowire.AppendVarint(t, seqNeedsIncrementalState)
	t = protowire.AppendTag(t, fPacketTrackEvent, protowire.BytesType)
	c.tail = protowire.AppendBytes(t, w.ev)
	c.epoch = w.epoch
}

// InstantAgain writes at ts the instant c remembers and reports true,
// or writes nothing and reports false when c holds none or is stale:
// the caller then writes it with InstantCached.
func (w *Writer) InstantAgain(c *EventCache, ts uint64) bool {
	if c.epoch != w.epoch || c.tail == nil || w.err != nil || !w.began {
		return false
	}
	// The packet is assembled in the buffered writer's free space: one
	// copy of the cached bytes.
	n := 1 + protowire.SizeVarint(ts) + len(c.tail)
	need := 1 + protowire.SizeVarint(uint64(n)) + n
	if w.w.Available() < need {
		if err := w.w.Flush(); err != nil {
			w.err = fmt.Errorf("perfetto: %w", err)
			return true
		}
	}
	b := w.w.AvailableBuffer()
	b = protowire.AppendTag(b, fTracePacket, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(n))
	b = protowire.AppendTag(b, fPacketTimestamp, protowire.VarintType)
	b = protowire.AppendVarint(b, ts)
	b = append(b, c.tail...)
	if _, err := w.w.Write(b); err != nil {
		w.err = fmt.Errorf("perfetto: %w", err)
		return true
	}
	w.stats.Packets++
	w.stats.Bytes += int64(len(b))
	w.stats.Instants++
	return true
}

// Counter sets the value of a counter track at ts.
func (w *Writer) Counter(track, ts uint64, v float64) {
	w.event(typeCounter, track, ts, "", "", nil, v)
	w.stats.Counters++
}

func (w *Writer) event(typ uint64, track, ts uint64, cat, name string, args []Arg, v float64) {
	if w.err != nil {
		return
	}
	if w.rot != nil {
		w.declare(track)
	}
	w.interned = w.interned[:0]
	b := w.ev[:0]
	b = protowire.AppendTag(b, fEventType, protowire.VarintType)
	b = protowire.AppendVarint(b, typ)
	b = protowire.AppendTag(b, fEventTrackUUID, protowire.VarintType)
	b = protowire.AppendVarint(b, track)
	if cat != "" {
		if iid, ok := w.intern(&w.cats, fInternedCategories, cat); ok {
			b = protowire.AppendTag(b, fEventCategoryIIDs, protowire.VarintType)
			b = protowire.AppendVarint(b, iid)
		} else {
			b = protowire.AppendTag(b, fEventCategories, protowire.BytesType)
			b = protowire.AppendString(b, cat)
		}
	}
	if name != "" {
		if iid, ok := w.intern(&w.names, fInternedNames, name); ok {
			b = protowire.AppendTag(b, fEventNameIID, protowire.VarintType)
			b = protowire.AppendVarint(b, iid)
		} else {
			b = protowire.AppendTag(b, fEventName, protowire.BytesType)
			b = protowire.AppendString(b, name)
		}
	}
	for i := range args {
		a := w.annotation(w.ann[:0], &args[i])
		b = protowire.AppendTag(b, fEventAnnotations, protowire.BytesType)
		b = protowire.AppendBytes(b, a)
		w.ann = a
	}
	if typ == typeCounter {
		b = protowire.AppendTag(b, fEventDoubleValue, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(v))
	}
	w.ev = b
	p := w.packetHeader(true, ts, true)
	if len(w.interned) > 0 {
		p = protowire.AppendTag(p, fPacketInternedData, protowire.BytesType)
		p = protowire.AppendBytes(p, w.interned)
	}
	p = protowire.AppendTag(p, fPacketTrackEvent, protowire.BytesType)
	p = protowire.AppendBytes(p, b)
	w.emit(p)
}

func (w *Writer) annotation(a []byte, arg *Arg) []byte {
	name := arg.Name
	if name == "" {
		// Perfetto keys arguments by name: an empty one would be lost.
		name = "_"
	}
	if iid, ok := w.intern(&w.argNames, fInternedArgNames, name); ok {
		a = protowire.AppendTag(a, fArgNameIID, protowire.VarintType)
		a = protowire.AppendVarint(a, iid)
	} else {
		a = protowire.AppendTag(a, fArgName, protowire.BytesType)
		a = protowire.AppendString(a, name)
	}
	switch arg.Kind {
	case ArgInt:
		a = protowire.AppendTag(a, fArgInt, protowire.VarintType)
		a = protowire.AppendVarint(a, uint64(arg.Int))
	case ArgUint:
		a = protowire.AppendTag(a, fArgUint, protowire.VarintType)
		a = protowire.AppendVarint(a, arg.Uint)
	case ArgDouble:
		a = protowire.AppendTag(a, fArgDouble, protowire.Fixed64Type)
		a = protowire.AppendFixed64(a, math.Float64bits(arg.Double))
	case ArgBool:
		a = protowire.AppendTag(a, fArgBool, protowire.VarintType)
		a = protowire.AppendVarint(a, protowire.EncodeBool(arg.Bool))
	case ArgHex:
		a = protowire.AppendTag(a, fArgPointer, protowire.VarintType)
		a = protowire.AppendVarint(a, arg.Uint)
	case ArgInterned:
		if iid, ok := w.intern(&w.argStrs, fInternedArgStrings, arg.Str); ok {
			a = protowire.AppendTag(a, fArgStrIID, protowire.VarintType)
			a = protowire.AppendVarint(a, iid)
		} else {
			a = protowire.AppendTag(a, fArgString, protowire.BytesType)
			a = protowire.AppendString(a, arg.Str)
		}
	default:
		a = protowire.AppendTag(a, fArgString, protowire.BytesType)
		if arg.Str != "" || arg.Bytes == nil {
			a = protowire.AppendString(a, arg.Str)
		} else {
			a = protowire.AppendBytes(a, arg.Bytes)
		}
	}
	return a
}

// intern returns the iid of s in table t, adding it (and its definition
// to the packet's InternedData under field) when new. It reports false
// when the table is full: the caller writes s inline.
//
// The entries (EventName, EventCategory, DebugAnnotationName and
// InternedString) all have the iid as field 1 and the text as field 2.
func (w *Writer) intern(t *intern, field protowire.Number, s string) (uint64, bool) {
	h := uint(len(s)) * 7
	if n := len(s); n > 0 {
		h += uint(s[n-1]) * 3
		if n > 1 {
			h += uint(s[n-2])
		}
	}
	slot := &t.recent[h&63]
	if slot.iid != 0 && slot.s == s {
		return slot.iid, true
	}
	if iid, ok := t.ids[s]; ok {
		slot.s, slot.iid = s, iid
		return iid, true
	}
	if len(t.ids) >= MaxInterned {
		return 0, false
	}
	if t.ids == nil {
		t.ids = make(map[string]uint64)
	}
	t.next++
	t.ids[s] = t.next
	var m []byte
	m = protowire.AppendTag(m, fInternedIID, protowire.VarintType)
	m = protowire.AppendVarint(m, t.next)
	m = protowire.AppendTag(m, fInternedName, protowire.BytesType)
	m = protowire.AppendString(m, s)
	w.interned = protowire.AppendTag(w.interned, field, protowire.BytesType)
	w.interned = protowire.AppendBytes(w.interned, m)
	w.stats.Interned++
	return t.next, true
}

// packetHeader starts a packet in w.pkt: the sequence id, the clearing of
// incremental state on the sequence's first packet, and the timestamp.
func (w *Writer) packetHeader(needsState bool, ts uint64, hasTS bool) []byte {
	if !w.began {
		w.begin()
	}
	p := w.pkt[:0]
	if hasTS {
		p = protowire.AppendTag(p, fPacketTimestamp, protowire.VarintType)
		p = protowire.AppendVarint(p, ts)
	}
	p = protowire.AppendTag(p, fPacketSequenceID, protowire.VarintType)
	p = protowire.AppendVarint(p, uint64(w.seqID))
	if needsState {
		p = protowire.AppendTag(p, fPacketSequenceFlags, protowire.VarintType)
		p = protowire.AppendVarint(p, seqNeedsIncrementalState)
	}
	return p
}

// begin writes the sequence's first packet, which clears its incremental
// state (the interning tables).
func (w *Writer) begin() {
	w.began = true
	p := w.pkt[:0]
	p = protowire.AppendTag(p, fPacketSequenceID, protowire.VarintType)
	p = protowire.AppendVarint(p, uint64(w.seqID))
	p = protowire.AppendTag(p, fPacketSequenceFlags, protowire.VarintType)
	p = protowire.AppendVarint(p, seqIncrementalStateCleared)
	p = protowire.AppendTag(p, fPacketFirstOnSequence, protowire.VarintType)
	p = protowire.AppendVarint(p, 1)
	w.emit(p)
}

// DataLost records that data was lost before this point: a packet with
// TracePacket.previous_packet_dropped. Perfetto then drops the sequence's
// incremental state, so DataLost also clears it (a packet with
// SEQ_INCREMENTAL_STATE_CLEARED) and interns names again from scratch:
// the events after the loss stay readable.
func (w *Writer) DataLost() {
	if w.err != nil {
		return
	}
	p := w.packetHeader(false, 0, false)
	p = protowire.AppendTag(p, fPacketPrevDropped, protowire.VarintType)
	p = protowire.AppendVarint(p, 1)
	w.emit(p)
	w.names.reset()
	w.cats.reset()
	w.argNames.reset()
	w.argStrs.reset()
	w.epoch++
	p = w.pkt[:0]
	p = protowire.AppendTag(p, fPacketSequenceID, protowire.VarintType)
	p = protowire.AppendVarint(p, uint64(w.seqID))
	p = protowire.AppendTag(p, fPacketSequenceFlags, protowire.VarintType)
	p = protowire.AppendVarint(p, seqIncrementalStateCleared)
	w.emit(p)
}

var errPacketTooBig = errors.New("perfetto: packet larger than 256 MiB")

func (w *Writer) emit(p []byte) {
	w.pkt = p
	if len(p) > 256<<20 {
		w.err = errPacketTooBig
		return
	}
	h := protowire.AppendTag(w.hdr[:0], fTracePacket, protowire.BytesType)
	h = protowire.AppendVarint(h, uint64(len(p)))
	if _, err := w.w.Write(h); err != nil {
		w.err = fmt.Errorf("perfetto: %w", err)
		return
	}
	if _, err := w.w.Write(p); err != nil {
		w.err = fmt.Errorf("perfetto: %w", err)
		return
	}
	w.stats.Packets++
	w.stats.Bytes += int64(len(h) + len(p))
}
