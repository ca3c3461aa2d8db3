package regdb

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/iotap/iotap/internal/ndjson"
	"github.com/iotap/iotap/mmiotrace"
)

// ParseBARRule parses PCIADDR/N=DOMAIN (0000:00:03.0/0=E1000) or
// VENDOR:DEVICE/N=DOMAIN (8086:100e/0=E1000), the text of 'iotap mmio
// names --bar'. The rule keeps s as its Text. Errors do not repeat s.
func ParseBARRule(s string) (BARRule, error) {
	lhs, dom, ok := strings.Cut(s, "=")
	addr, idx, ok2 := strings.Cut(lhs, "/")
	if !ok || !ok2 || dom == "" {
		return BARRule{}, errors.New("want PCIADDR/N=DOMAIN, as 0000:00:03.0/0=E1000")
	}
	n, err := strconv.Atoi(idx)
	if err != nil || n < 0 || n > 6 {
		return BARRule{}, errors.New("BAR number must be 0..6")
	}
	b := BARRule{Index: n, Domain: dom, Text: s}
	if id, ok := ParsePCIID(addr); ok && len(addr) == 9 {
		b.ID, b.ByID = id, true
		return b, nil
	}
	a, err := mmiotrace.ParsePCIAddr(addr)
	if err != nil {
		return BARRule{}, err
	}
	b.Addr = a
	return b, nil
}

// Namer names the accesses of an mmiotrace log through a [Binder] and
// counts what it could not name: 'iotap mmio names'. Feed it the records
// in order, after the BAR map has observed each (see [Namer.Resolve]).
type Namer struct {
	Binder

	// The counts of the accesses resolved so far.
	Accesses int64 // all
	Named    int64 // named by a database
	Unnamed  int64 // in a BAR with a database, at an offset it does not describe
	NoDB     int64 // in a BAR no database describes
	Outside  int64 // outside every PCI BAR of the log

	unnamedAt map[string]int64
	noDBBars  map[*mmiotrace.BAR]int64

	// cache holds formatted decodings: drivers write and read the same
	// values again and again (EEPROM bit-banging, status polling).
	cache map[decodeKey][]byte
}

// NewNamer returns a Namer naming through b.
func NewNamer(b Binder) *Namer {
	return &Namer{Binder: b, cache: map[decodeKey][]byte{}, unnamedAt: map[string]int64{}, noDBBars: map[*mmiotrace.BAR]int64{}}
}

// Naming is the naming of one access record.
type Naming struct {
	Loc   mmiotrace.Location // BAR and offset (Loc.BAR nil: outside every BAR)
	Bind  *Binding           // the BAR's domain (nil: no database)
	Match Match              // the register, when Named
	Named bool
}

// Resolve names the access rec (a read, write or unknown-value record)
// with the BARs known so far, and counts it.
func (n *Namer) Resolve(bars *mmiotrace.BARMap, rec *mmiotrace.Record) Naming {
	n.Accesses++
	var a Naming
	loc, ok := bars.Lookup(rec.Phys)
	if !ok {
		n.Outside++
		return a
	}
	a.Loc = loc
	a.Match, a.Bind, a.Named = n.Name(loc, int(rec.Width))
	if a.Bind == nil {
		n.NoDB++
		n.noDBBars[loc.BAR]++
		return a
	}
	if a.Named {
		n.Named++
	} else {
		n.Unnamed++
		n.unnamedAt[fmt.Sprintf("%s+%#x", a.Bind.Domain.Name, loc.Offset)]++
	}
	return a
}

type decodeKey struct {
	dom         *Domain
	reg         *Register
	offset, val uint64
	delta       uint64
	width       uint
}

const maxDecodeCache = 1 << 16

// format appends the formatted decoding of a named access, from the cache
// when the same register instance saw the same value before.
func (n *Namer) format(dst []byte, m Match, v uint64) []byte {
	k := decodeKey{m.Domain, m.Register, m.Offset, v, m.Delta, m.Width}
	if b, ok := n.cache[k]; ok {
		return append(dst, b...)
	}
	start := len(dst)
	dst = m.AppendFormat(dst, v)
	if len(n.cache) >= maxDecodeCache {
		clear(n.cache)
	}
	n.cache[k] = append([]byte(nil), dst[start:]...)
	return dst
}

// AppendNamed appends the annotation 'iotap mmio names' puts after the
// log line of an access: " ; NAME = VALUE {FIELDS}" when named (the name
// alone for a record without a value), " ; unnamed DOMAIN+0xOFFSET" in a
// BAR with a database, nothing else.
func (n *Namer) AppendNamed(dst []byte, rec *mmiotrace.Record, a Naming) []byte {
	switch {
	case a.Named && rec.Kind == mmiotrace.KindUnknown:
		dst = append(dst, " ; "...)
		return a.Match.AppendName(dst)
	case a.Named:
		dst = append(dst, " ; "...)
		return n.format(dst, a.Match, rec.Value)
	case a.Bind != nil:
		dst = append(dst, " ; unnamed "...)
		dst = append(dst, a.Bind.Domain.Name...)
		dst = append(dst, "+0x"...)
		return strconv.AppendUint(dst, a.Loc.Offset, 16)
	}
	return dst
}

// WriteSummary writes the counts, the most frequent unnamed offsets, the
// BARs without a database and the --bar rules that bound nothing, one
// line each, as 'iotap mmio names' reports them on stderr.
func (n *Namer) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "mmio names: %d accesses: %d named, %d unnamed, %d in BARs without a database, %d outside any PCI BAR\n",
		n.Accesses, n.Named, n.Unnamed, n.NoDB, n.Outside)
	if n.Unnamed > 0 {
		type kc struct {
			k string
			c int64
		}
		var list []kc
		for k, c := range n.unnamedAt {
			list = append(list, kc{k, c})
		}
		sort.Slice(list, func(i, j int) bool {
			if list[i].c != list[j].c {
				return list[i].c > list[j].c
			}
			return list[i].k < list[j].k
		})
		if len(list) > 10 {
			list = list[:10]
		}
		var parts []string
		for _, x := range list {
			parts = append(parts, fmt.Sprintf("%s (%d)", x.k, x.c))
		}
		fmt.Fprintf(w, "mmio names: unnamed offsets: %s\n", strings.Join(parts, ", "))
	}
	if n.NoDB > 0 {
		var bars []*mmiotrace.BAR
		for b := range n.noDBBars {
			bars = append(bars, b)
		}
		sort.Slice(bars, func(i, j int) bool { return bars[i].Start < bars[j].Start })
		for _, b := range bars {
			fmt.Fprintf(w, "mmio names: %d accesses to %s BAR%d (%04x:%04x) have no database: use --db and --bar %s/%d=DOMAIN\n",
				n.noDBBars[b], b.Addr, b.Index, b.Vendor, b.Device, b.Addr, b.Index)
		}
	}
	if n.Outside > 0 {
		fmt.Fprintf(w, "mmio names: %d accesses lie outside every PCI BAR of the log's PCIDEV records\n", n.Outside)
	}
	for _, r := range n.Rules {
		if !r.Used {
			fmt.Fprintf(w, "mmio names: --bar %s matched no access\n", r.Text)
		}
	}
}

// FieldRecord is a decoded bitfield in a [NameRecord].
type FieldRecord struct {
	Name  string        `json:"name,omitempty"`
	Bits  string        `json:"bits"` // HIGH:LOW, or the bit
	Value uint64        `json:"value"`
	Enum  string        `json:"enum,omitempty"`
	Sub   []FieldRecord `json:"fields,omitempty"`
}

// NameRecord is the "mmio_name" record 'iotap mmio names --json' writes
// per access (docs/ndjson.md), as a Go value for readers of that output
// (AppendNameNDJSON writes it without building one): the access, where it
// is (location, BAR and offset), and the register and bitfields when
// named. Numbers that can exceed 2^53 are hexadecimal strings; null
// (nil) is "not known".
type NameRecord struct {
	Kind      string        `json:"kind"` // "mmio_name"
	Line      int64         `json:"line"`
	Access    string        `json:"access"` // R, W, UNKNOWN
	Width     uint8         `json:"width,omitempty"`
	TS        uint64        `json:"ts_ns"`
	MapID     int32         `json:"map_id"`
	Phys      string        `json:"phys"`
	Value     *string       `json:"value,omitempty"`
	Location  string        `json:"location"`
	BAR       *string       `json:"bar"`
	Offset    *string       `json:"offset"`
	Domain    *string       `json:"domain"`
	Register  *string       `json:"register"`
	Index     []uint64      `json:"index,omitempty"`
	RegAccess string        `json:"reg_access,omitempty"`
	Doc       string        `json:"doc,omitempty"`
	Fields    []FieldRecord `json:"fields,omitempty"`
	Text      string        `json:"text,omitempty"`
}

// NDJSONName is the record kind of 'iotap mmio names --json'.
const NDJSONName = "mmio_name"

// AppendNameNDJSON appends the mmio_name record of the access rec at line
// of its log, named a: the fields of NameRecord, written without
// reflection (TestNameNDJSON checks them against encoding/json's
// encoding of NewNameRecord).
func AppendNameNDJSON(b []byte, line int64, rec *mmiotrace.Record, a Naming) []byte {
	b = ndjson.Begin(b, NDJSONName)
	b = ndjson.Int(b, "line", line)
	b = ndjson.Str(b, "access", rec.Kind.String())
	if rec.Width != 0 {
		b = ndjson.Uint(b, "width", uint64(rec.Width))
	}
	b = ndjson.Uint(b, "ts_ns", rec.Time.NS)
	b = ndjson.Int(b, "map_id", int64(rec.MapID))
	b = ndjson.HexUint(b, "phys", rec.Phys)
	if rec.Kind != mmiotrace.KindUnknown {
		b = ndjson.HexUint(b, "value", rec.Value)
	}
	if a.Loc.BAR != nil {
		bar := a.Loc.BAR.Addr.String() + "/" + strconv.Itoa(a.Loc.BAR.Index)
		b = ndjson.Str(b, "location", bar+"+0x"+strconv.FormatUint(a.Loc.Offset, 16))
		b = ndjson.Str(b, "bar", bar)
		b = ndjson.HexUint(b, "offset", a.Loc.Offset)
	} else {
		b = append(ndjson.Key(b, "location"), '"', '0', 'x')
		b = append(strconv.AppendUint(b, rec.Phys, 16), '"')
		b = ndjson.Null(b, "bar")
		b = ndjson.Null(b, "offset")
	}
	if a.Bind != nil {
		b = ndjson.Str(b, "domain", a.Bind.Domain.Name)
	} else {
		b = ndjson.Null(b, "domain")
	}
	if !a.Named {
		return ndjson.End(ndjson.Null(b, "register"))
	}
	b = ndjson.Str(b, "register", a.Match.Name())
	if idx := a.Match.Indices(); len(idx) > 0 {
		b = ndjson.OpenArray(b, "index")
		for _, i := range idx {
			b = ndjson.IntElem(b, int64(i))
		}
		b = ndjson.CloseArray(b)
	}
	if s := a.Match.Register.Access.String(); s != "" {
		b = ndjson.Str(b, "reg_access", s)
	}
	if d := a.Match.Register.Doc; d != "" {
		b = ndjson.Str(b, "doc", d)
	}
	if rec.Kind != mmiotrace.KindUnknown {
		if fs := a.Match.Decode(rec.Value); len(fs) > 0 {
			b = appendFieldsNDJSON(b, fs)
		}
		if t := a.Match.Format(rec.Value); t != "" {
			b = ndjson.Str(b, "text", t)
		}
	}
	return ndjson.End(b)
}

// appendFieldsNDJSON appends the "fields" array of fs (FieldRecord).
func appendFieldsNDJSON(b []byte, fs []Field) []byte {
	b = ndjson.OpenArray(b, "fields")
	for _, f := range fs {
		b = ndjson.OpenElem(b)
		if f.Name != "" {
			b = ndjson.Str(b, "name", f.Name)
		}
		b = append(ndjson.Key(b, "bits"), '"')
		if f.High != f.Low {
			b = append(strconv.AppendUint(b, uint64(f.High), 10), ':')
		}
		b = append(strconv.AppendUint(b, uint64(f.Low), 10), '"')
		b = ndjson.Uint(b, "value", f.Value)
		if f.Enum != "" {
			b = ndjson.Str(b, "enum", f.Enum)
		}
		if len(f.Sub) > 0 {
			b = appendFieldsNDJSON(b, f.Sub)
		}
		b = ndjson.Close(b)
	}
	return ndjson.CloseArray(b)
}

func fieldRecords(fs []Field) []FieldRecord {
	var out []FieldRecord
	for _, f := range fs {
		bits := strconv.Itoa(int(f.Low))
		if f.High != f.Low {
			bits = strconv.Itoa(int(f.High)) + ":" + bits
		}
		out = append(out, FieldRecord{Name: f.Name, Bits: bits, Value: f.Value, Enum: f.Enum, Sub: fieldRecords(f.Sub)})
	}
	return out
}

// NewNameRecord returns the NameRecord of the access rec at line of its
// log, named a (what AppendNameNDJSON writes).
func NewNameRecord(line int64, rec *mmiotrace.Record, a Naming) *NameRecord {
	str := func(s string) *string { return &s }
	j := &NameRecord{
		Kind: NDJSONName, Line: line, Access: rec.Kind.String(), Width: rec.Width, TS: rec.Time.NS,
		MapID: rec.MapID, Phys: "0x" + strconv.FormatUint(rec.Phys, 16),
	}
	j.Location = j.Phys
	if rec.Kind != mmiotrace.KindUnknown {
		j.Value = str("0x" + strconv.FormatUint(rec.Value, 16))
	}
	if a.Loc.BAR != nil {
		j.BAR = str(fmt.Sprintf("%s/%d", a.Loc.BAR.Addr, a.Loc.BAR.Index))
		j.Offset = str("0x" + strconv.FormatUint(a.Loc.Offset, 16))
		j.Location = *j.BAR + "+" + *j.Offset
	}
	if a.Bind != nil {
		j.Domain = str(a.Bind.Domain.Name)
	}
	if a.Named {
		j.Register = str(a.Match.Name())
		j.Index = a.Match.Indices()
		j.RegAccess = a.Match.Register.Access.String()
		j.Doc = a.Match.Register.Doc
		if rec.Kind != mmiotrace.KindUnknown {
			j.Fields = fieldRecords(a.Match.Decode(rec.Value))
			j.Text = a.Match.Format(rec.Value)
		}
	}
	return j
}
