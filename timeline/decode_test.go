package timeline

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// A decoded trace: what the tests check our writer's output against. The
// decoder is independent of the writer: it walks the wire format with
// protowire and resolves interned strings as Perfetto's importer does.
type dTrack struct {
	uuid, parent uint64
	name         string
	counter      bool
}

type dEvent struct {
	ts    uint64
	typ   uint64
	track uint64
	name  string
	cat   string
	args  map[string]any
	value float64
}

type dTrace struct {
	tracks   map[uint64]*dTrack
	order    []uint64 // track uuids in declaration order
	events   []dEvent
	cleared  bool // first packet cleared the incremental state
	lostMark int
}

func (t *dTrace) count(typ uint64) int {
	n := 0
	for _, e := range t.events {
		if e.typ == typ {
			n++
		}
	}
	return n
}

// path returns the track's name prefixed by its ancestors' ("USB/bus 1").
func (t *dTrace) path(uuid uint64) string {
	tr, ok := t.tracks[uuid]
	if !ok {
		return fmt.Sprintf("?%d", uuid)
	}
	if tr.parent == 0 {
		return tr.name
	}
	return t.path(tr.parent) + "/" + tr.name
}

func fields(b []byte, fn func(num protowire.Number, typ protowire.Type, v uint64, bs []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v uint64
		var bs []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(b)
		case protowire.Fixed32Type:
			var v32 uint32
			v32, n = protowire.ConsumeFixed32(b)
			v = uint64(v32)
		case protowire.BytesType:
			bs, n = protowire.ConsumeBytes(b)
		default:
			return fmt.Errorf("unexpected wire type %d", typ)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, typ, v, bs); err != nil {
			return err
		}
	}
	return nil
}

func decodeTrace(t testing.TB, data []byte) *dTrace {
	t.Helper()
	tr := &dTrace{tracks: map[uint64]*dTrack{}}
	names := map[uint64]string{}
	cats := map[uint64]string{}
	argNames := map[uint64]string{}
	argStrs := map[uint64]string{}
	first := true
	valid := false // incremental state, as Perfetto's reader tracks it
	err := fields(data, func(num protowire.Number, typ protowire.Type, _ uint64, pkt []byte) error {
		if num != fTracePacket || typ != protowire.BytesType {
			return fmt.Errorf("top-level field %d type %d", num, typ)
		}
		var ts, flags, seq uint64
		var ev, desc, interned []byte
		var dropped bool
		err := fields(pkt, func(num protowire.Number, _ protowire.Type, v uint64, bs []byte) error {
			switch num {
			case fPacketTimestamp:
				ts = v
			case fPacketSequenceFlags:
				flags = v
			case fPacketSequenceID:
				seq = v
			case fPacketTrackEvent:
				ev = bs
			case fPacketTrackDescriptor:
				desc = bs
			case fPacketInternedData:
				interned = bs
			case fPacketPrevDropped:
				dropped = v != 0
			}
			return nil
		})
		if err != nil {
			return err
		}
		if seq == 0 {
			return fmt.Errorf("packet without trusted_packet_sequence_id")
		}
		if first {
			tr.cleared = flags&seqIncrementalStateCleared != 0
			first = false
		}
		if dropped {
			// Perfetto skips packets needing incremental state until the
			// state is cleared again.
			tr.lostMark++
			valid = false
		}
		if flags&seqIncrementalStateCleared != 0 {
			valid = true
			clear(names)
			clear(cats)
			clear(argNames)
			clear(argStrs)
		}
		if interned != nil {
			err := fields(interned, func(num protowire.Number, _ protowire.Type, _ uint64, bs []byte) error {
				var iid uint64
				var name string
				if err := fields(bs, func(n protowire.Number, _ protowire.Type, v uint64, s []byte) error {
					if n == fInternedIID {
						iid = v
					} else if n == fInternedName {
						name = string(s)
					}
					return nil
				}); err != nil {
					return err
				}
				m := map[protowire.Number]map[uint64]string{fInternedNames: names, fInternedCategories: cats, fInternedArgNames: argNames, fInternedArgStrings: argStrs}[num]
				if m == nil {
					return fmt.Errorf("unexpected interned field %d", num)
				}
				if _, dup := m[iid]; dup {
					return fmt.Errorf("iid %d interned twice", iid)
				}
				m[iid] = name
				return nil
			})
			if err != nil {
				return err
			}
		}
		if desc != nil {
			d := &dTrack{}
			if err := fields(desc, func(n protowire.Number, _ protowire.Type, v uint64, s []byte) error {
				switch n {
				case fTrackUUID:
					d.uuid = v
				case fTrackParentUUID:
					d.parent = v
				case fTrackName:
					d.name = string(s)
				case fTrackCounter:
					d.counter = true
				}
				return nil
			}); err != nil {
				return err
			}
			if _, dup := tr.tracks[d.uuid]; dup {
				return fmt.Errorf("track %d declared twice", d.uuid)
			}
			if d.parent != 0 && tr.tracks[d.parent] == nil {
				return fmt.Errorf("track %q: parent %d not declared before", d.name, d.parent)
			}
			tr.tracks[d.uuid] = d
			tr.order = append(tr.order, d.uuid)
		}
		if ev != nil {
			if flags&seqNeedsIncrementalState == 0 {
				return fmt.Errorf("track event without SEQ_NEEDS_INCREMENTAL_STATE")
			}
			if !valid {
				return fmt.Errorf("track event at %d while the incremental state is invalid: Perfetto would skip it", ts)
			}
			e := dEvent{ts: ts, args: map[string]any{}}
			if err := fields(ev, func(n protowire.Number, _ protowire.Type, v uint64, s []byte) error {
				switch n {
				case fEventType:
					e.typ = v
				case fEventTrackUUID:
					e.track = v
				case fEventNameIID:
					name, ok := names[v]
					if !ok {
						return fmt.Errorf("name iid %d not interned", v)
					}
					e.name = name
				case fEventName:
					e.name = string(s)
				case fEventCategoryIIDs:
					e.cat = cats[v]
				case fEventCategories:
					e.cat = string(s)
				case fEventDoubleValue:
					e.value = math.Float64frombits(v)
				case fEventAnnotations:
					var key string
					var val any
					if err := fields(s, func(n protowire.Number, _ protowire.Type, v uint64, s []byte) error {
						switch n {
						case fArgNameIID:
							key = argNames[v]
						case fArgName:
							key = string(s)
						case fArgString:
							val = string(s)
						case fArgStrIID:
							str, ok := argStrs[v]
							if !ok {
								return fmt.Errorf("string value iid %d not interned", v)
							}
							val = str
						case fArgPointer:
							// Perfetto shows pointer values in hexadecimal.
							val = fmt.Sprintf("%#x", v)
						case fArgInt:
							val = int64(v)
						case fArgUint:
							val = v
						case fArgBool:
							val = v != 0
						case fArgDouble:
							val = math.Float64frombits(v)
						}
						return nil
					}); err != nil {
						return err
					}
					if key == "" {
						return fmt.Errorf("annotation without a name")
					}
					e.args[key] = val
				}
				return nil
			}); err != nil {
				return err
			}
			if tr.tracks[e.track] == nil {
				return fmt.Errorf("event on undeclared track %d", e.track)
			}
			tr.events = append(tr.events, e)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("decoding our trace: %v", err)
	}
	return tr
}

// checkSlicesNest checks that every end closes an open slice of its track.
func checkSlicesNest(t *testing.T, tr *dTrace) {
	t.Helper()
	open := map[uint64]int{}
	for _, e := range tr.events {
		switch e.typ {
		case typeSliceBegin:
			open[e.track]++
		case typeSliceEnd:
			if open[e.track] == 0 {
				t.Fatalf("slice end at %d on %s with no open slice", e.ts, tr.path(e.track))
			}
			open[e.track]--
		}
	}
	for id, n := range open {
		if n != 0 {
			t.Errorf("%d slices left open on %s", n, tr.path(id))
		}
	}
}

// protocDecode runs protoc --decode on data against Perfetto's published
// proto and returns the text format, skipping the test without protoc.
func protocDecode(t *testing.T, data []byte) string {
	t.Helper()
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		t.Skip("protoc not found: install protobuf-compiler (apt-get install protobuf-compiler) to check traces against Perfetto's proto")
	}
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "testdata", "perfetto")
	cmd := exec.Command(protoc, "--proto_path="+dir, "--decode", "perfetto.protos.Trace", "perfetto_trace.proto")
	cmd.Stdin = bytes.NewReader(data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("protoc --decode: %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "LICENSE")); err != nil {
		t.Errorf("the proto's licence is missing: %v", err)
	}
	return string(out)
}
