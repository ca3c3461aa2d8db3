package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/regdb"
)

// barInfo is what every access through one BAR shares (pointers shared
// by the rows, so that rows do not allocate for them).
type barInfo struct {
	addr   *string
	bar    *string // "0000:00:03.0/0"
	vendor *int32
	device *int32
	driver *string
	index  *int32
	db     *regdb.DB
	dom    *regdb.Domain
	unit   uint64
	names  map[uint64]*named // by offset<<8 | width
	// dictionary indexes of pci, driver and bar in mmio_accesses
	pciRef, driverRef, barRef dictRef
}

// named is a register instance found in the database.
type named struct {
	match regdb.Match
	name  *string
	ref   dictRef // of name in mmio_accesses' register column
	// decodings caches the decoding of values seen (bounded); last is
	// the decoding of value lastV (a register polled keeps its value).
	decodings map[uint64]*decoding
	last      *decoding
	lastV     uint64
	// emitted holds the values whose fields are in mmio_fields.
	emitted map[uint64]bool
}

// maxEmitted bounds the values per register whose fields mmio_fields
// lists (a counter register takes a new value at every read).
const maxEmitted = 1 << 16

type decoding struct {
	text *string
	ref  dictRef // in mmio_accesses' decoded column
	// fields: emitFields was called for this value (it writes each
	// value's fields once; this saves its map lookup per access)
	fields bool
}

const maxDecodings = 1 << 12

// mmioNamer binds BARs to the register databases shipped with iotap
// (regdb.BuiltinForPCI), as iotap mmio names and mmio stats do.
// BARs are keyed by value: a log that describes its devices again (a
// second PCIDEV header, logs concatenated) makes new BAR objects of the
// same BARs.
type mmioNamer struct {
	last   *mmiotrace.BAR
	lastBI *barInfo
	bars   map[mmiotrace.BAR]*barInfo
}

func (n *mmioNamer) bar(b *mmiotrace.BAR) *barInfo {
	if b == n.last {
		return n.lastBI
	}
	if bi, ok := n.bars[*b]; ok {
		n.last, n.lastBI = b, bi
		return bi
	}
	drv := (*string)(nil)
	if b.Driver != "" {
		drv = ptr(b.Driver)
	}
	bi := &barInfo{addr: ptr(b.Addr.String()), bar: ptr(fmt.Sprintf("%s/%d", b.Addr, b.Index)), vendor: ptr(int32(b.Vendor)), device: ptr(int32(b.Device)),
		driver: drv, index: ptr(int32(b.Index)), names: map[uint64]*named{}}
	if db, dom, ok := regdb.BuiltinForPCI(regdb.PCIID{Vendor: b.Vendor, Device: b.Device}, b.Index); ok {
		bi.db, bi.dom = db, dom
		bi.unit = uint64(dom.Width / 8)
		if bi.unit == 0 {
			bi.unit = 1
		}
	}
	n.bars[*b] = bi
	n.last, n.lastBI = b, bi
	return bi
}

// lookup names the register at off (nil when the database has none).
func (bi *barInfo) lookup(off uint64, width uint8) *named {
	if bi.db == nil {
		return nil
	}
	k := off<<8 | uint64(width)
	if r, ok := bi.names[k]; ok {
		return r
	}
	var r *named
	if off%bi.unit == 0 {
		if m, ok := bi.db.LookupIn(bi.dom, off/bi.unit, uint(width)*8); ok {
			r = &named{match: m, name: ptr(m.Name()), decodings: map[uint64]*decoding{}, emitted: map[uint64]bool{}}
		}
	}
	if len(bi.names) < 1<<16 {
		bi.names[k] = r
	}
	return r
}

func (r *named) decode(v uint64) *decoding {
	if r.last != nil && r.lastV == v {
		return r.last
	}
	if d, ok := r.decodings[v]; ok {
		r.last, r.lastV = d, v
		return d
	}
	fs := r.match.Decode(v)
	d := &decoding{text: ptr(regdb.FormatFields(fs))}
	if len(r.decodings) >= maxDecodings {
		clear(r.decodings)
	}
	r.decodings[v] = d
	r.last, r.lastV = d, v
	return d
}

// emitFields writes the fields of value v of register r to mmio_fields,
// once per value.
func (r *named) emitFields(t *lazyTable[MMIOFieldRow], id Identity, bi *barInfo, v uint64) error {
	if r.emitted[v] || len(r.emitted) >= maxEmitted {
		return nil
	}
	r.emitted[v] = true
	return emitFields(t, id, bi, *r.name, v, "", r.match.Decode(v))
}

// emitFields writes fs, nested bitsets as "OUTER.INNER".
func emitFields(t *lazyTable[MMIOFieldRow], id Identity, bi *barInfo, reg string, v uint64, prefix string, fs []regdb.Field) error {
	for _, f := range fs {
		name := f.Name
		if prefix != "" {
			name = prefix + "." + name
		}
		if len(f.Sub) > 0 {
			if err := emitFields(t, id, bi, reg, v, name, f.Sub); err != nil {
				return err
			}
			continue
		}
		row, err := t.next()
		if err != nil {
			return err
		}
		*row = MMIOFieldRow{Identity: id, PCI: *bi.addr, VendorID: *bi.vendor, DeviceID: *bi.device, BAR: *bi.bar, BARIndex: *bi.index,
			Register: reg, Value: v, Field: name, Low: int32(f.Low), High: int32(f.High), FieldValue: f.Value, Enum: f.Enum}
	}
	return nil
}

// exportMMIO streams an mmiotrace log into mmio_accesses and mmio_maps.
func (x *Exporter) exportMMIO(ctx context.Context, c *capture, path string, rd *mmiotrace.Reader, row *CaptureRow) error {
	rd.SetKeepGoing(x.opt.KeepGoing)
	row.Source, row.Format, row.ClockDomain = "mmio", "mmiotrace", "trace-local"
	id := c.id
	id.SourceFile, id.ClockDomain = path, row.ClockDomain
	accesses := &flatTable[MMIOAccessRow]{x: x, name: TableMMIOAccesses, c: c, src: path, id: id}
	var ac accessCols
	maps := &lazyTable[MMIOMapRow]{x: x, name: TableMMIOMaps, c: c, src: path}
	fields := &lazyTable[MMIOFieldRow]{x: x, name: TableMMIOFields, c: c, src: path}
	committed := false
	defer func() {
		if !committed {
			accesses.abort()
			maps.abort()
			fields.abort()
		}
	}()
	bars := mmiotrace.NewBARMap()
	namer := &mmioNamer{bars: map[mmiotrace.BAR]*barInfo{}}
	ops := [...]string{mmiotrace.KindRead: "R", mmiotrace.KindWrite: "W", mmiotrace.KindUnknown: "UNKNOWN",
		mmiotrace.KindMap: "mmio_map", mmiotrace.KindUnmap: "mmio_unmap"}
	var (
		rec             mmiotrace.Record
		readErr         error
		first           = true
		firstTS, lastTS int64
		opRefs          [mmiotrace.KindUnknown + 1]dictRef
	)
	for n := 0; ; n++ {
		if n&8191 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		err := rd.ReadInto(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			readErr = err
			break
		}
		row.Records++
		bars.Observe(&rec)
		switch rec.Kind {
		case mmiotrace.KindRead, mmiotrace.KindWrite, mmiotrace.KindUnknown:
			ts := int64(rec.Time.NS)
			if first {
				firstTS, first = ts, false
			}
			lastTS = ts
			f := accesses.f
			if f == nil {
				if f, err = accesses.open(); err != nil {
					return err
				}
				ac = accessColsOf(f)
			}
			f.int64(ac.line, rd.Line())
			f.int64(ac.ts, ts)
			f.str(ac.access, ops[rec.Kind], &opRefs[rec.Kind])
			f.int32(ac.width, int32(rec.Width))
			f.int32(ac.mapID, rec.MapID)
			f.int64(ac.phys, int64(rec.Phys))
			f.int64(ac.value, int64(rec.Value))
			if rec.PC != 0 {
				f.int64(ac.pc, int64(rec.PC))
			} else {
				f.null(ac.pc)
			}
			f.int32(ac.pid, rec.PID)
			f.null(ac.cpu)
			var reg *named
			if loc, ok := bars.Lookup(rec.Phys); ok {
				bi := namer.bar(loc.BAR)
				f.str(ac.pci, *bi.addr, &bi.pciRef)
				f.int32(ac.vendor, *bi.vendor)
				f.int32(ac.device, *bi.device)
				if bi.driver != nil {
					f.str(ac.driver, *bi.driver, &bi.driverRef)
				} else {
					f.null(ac.driver)
				}
				f.str(ac.bar, *bi.bar, &bi.barRef)
				f.int32(ac.barIndex, *bi.index)
				f.int64(ac.offset, int64(loc.Offset))
				if reg = bi.lookup(loc.Offset, rec.Width); reg != nil {
					f.str(ac.register, *reg.name, &reg.ref)
					if rec.Kind != mmiotrace.KindUnknown {
						d := reg.decode(rec.Value)
						f.str(ac.decoded, *d.text, &d.ref)
						if !d.fields {
							d.fields = true
							if err := reg.emitFields(fields, id, bi, rec.Value); err != nil {
								return err
							}
						}
					} else {
						f.null(ac.decoded)
					}
				}
			} else {
				for _, c := range [...]int{ac.pci, ac.vendor, ac.device, ac.driver, ac.bar, ac.barIndex, ac.offset} {
					f.null(c)
				}
			}
			if reg == nil {
				f.null(ac.register)
				f.null(ac.decoded)
			}
			if err := f.endRow(); err != nil {
				return err
			}
		case mmiotrace.KindMap, mmiotrace.KindUnmap:
			ts := int64(rec.Time.NS)
			if first {
				firstTS, first = ts, false
			}
			lastTS = ts
			m, err := maps.next()
			if err != nil {
				return err
			}
			m.Identity = id
			m.Line, m.TSNS, m.Kind = rd.Line(), ts, ops[rec.Kind]
			m.MapID, m.Phys, m.Virt, m.Length = rec.MapID, rec.Phys, rec.Virt, rec.Len
			if rec.PC != 0 {
				m.PC = ptr(rec.PC)
			}
			if rec.Kind == mmiotrace.KindMap {
				if loc, ok := bars.Lookup(rec.Phys); ok {
					bi := namer.bar(loc.BAR)
					m.PCI, m.VendorID, m.DeviceID, m.Driver, m.BAR, m.BARIndex = bi.addr, bi.vendor, bi.device, bi.driver, bi.bar, bi.index
					m.Offset = ptr(loc.Offset)
				}
			}
		}
	}
	if !first {
		row.FirstTSNS, row.LastTSNS = ptr(firstTS), ptr(lastTS)
	}
	row.Compression = rd.Compression().String()
	var lost []string
	if readErr != nil {
		lost = append(lost, fmt.Sprintf("stopped at a decoding error: %v", readErr))
		row.Complete = false
	}
	if rd.Truncated() {
		row.Truncated = true
		lost = append(lost, "the log ends in the middle of a line")
	}
	if n := rd.Lost(); n > 0 {
		row.LostEvents = int64(n)
		lost = append(lost, fmt.Sprintf("the log records %d events lost by the kernel", n))
	}
	if n := rd.Skipped(); n > 0 {
		row.SkippedLines = n
		lost = append(lost, fmt.Sprintf("%d unreadable lines skipped (first: %v)", n, rd.FirstSkipError()))
	}
	row.Loss = strings.Join(lost, "; ")
	committed = true
	if err := accesses.commit(); err != nil {
		maps.abort()
		fields.abort()
		return err
	}
	if err := maps.commit(); err != nil {
		fields.abort()
		return err
	}
	return fields.commit()
}

// accessCols are the column numbers of mmio_accesses in its flatFile.
type accessCols struct {
	line, ts, access, width, mapID, phys, value, pc, pid, cpu, pci, vendor, device,
	driver, bar, barIndex, offset, register, decoded int
}

func accessColsOf(f *flatFile) accessCols {
	return accessCols{line: f.col("line"), ts: f.col("ts_ns"), access: f.col("access"), width: f.col("width"),
		mapID: f.col("map_id"), phys: f.col("phys"), value: f.col("value"), pc: f.col("pc"), pid: f.col("pid"),
		cpu: f.col("cpu"), pci: f.col("pci"), vendor: f.col("vendor_id"), device: f.col("device_id"),
		driver: f.col("driver"), bar: f.col("bar"), barIndex: f.col("bar_index"), offset: f.col("offset"),
		register: f.col("register"), decoded: f.col("decoded")}
}
