package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/iotap/iotap/internal/outfile"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/regdb"
	"github.com/spf13/cobra"
)

func newMMIONamesCmd(e *env) *cobra.Command {
	var o namesOptions
	c := &cobra.Command{
		Use:   "names [--db FILE|NAME] [--variant V] [--bar PCIADDR/N=DOMAIN] [--json] FILE",
		Short: "Name the registers of every MMIO access and decode the values into bitfields",
		Long: `Map every access of an mmiotrace log to a PCI device BAR (from the PCIDEV
and MAP records of the log), name the register and decode the value into
bitfields and enums, using a register database: envytools rnndb XML or the
native YAML form (--db FILE), or one shipped with iotap (--db e1000; without
--db the shipped database matching the device's PCI id is used).

Each line of the log is printed followed by " ; NAME = VALUE {FIELDS}" for
accesses, or one NDJSON object per access with --json. Accesses that cannot
be named (outside any BAR, in a BAR without a database, or at an offset the
database does not describe) are counted and reported on stderr at the end.

--bar binds a device BAR to a domain of the database explicitly, for
databases without PCI ids (rnndb XML): --bar 0000:00:03.0/0=E1000.
--variant selects database variants (rnndb varset/variants): V or SET=V.`,
		Example: `  iotap mmio names testdata/mmiotrace/e1000-probe.log
  iotap mmio names --db nv_mmio.xml --variant NV50 --bar 0000:01:00.0/0=NV_MMIO trace.log.xz
  iotap mmio names --json trace.log | jq 'select(.register=="IMC")'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMMIONames(e, &o, args[0])
		},
	}
	f := c.Flags()
	f.StringVarP(&o.out, "output", "o", "-", "output file (- for stdout; .gz/.xz/.zst compress)")
	f.StringArrayVar(&o.dbs, "db", nil, "register database: a file (rnndb XML or YAML) or a shipped name ("+strings.Join(regdb.Builtins(), ", ")+"); repeatable")
	f.StringVar(&o.variant, "variant", "", "database variant to apply: V or SET=V (comma-separated)")
	f.StringArrayVar(&o.bars, "bar", nil, "bind a BAR to a database domain: PCIADDR/N=DOMAIN or VENDOR:DEVICE/N=DOMAIN (repeatable)")
	f.BoolVar(&o.asJSON, "json", false, "write NDJSON, one object per access")
	f.BoolVar(&o.keepGoing, "keep-going", true, mmioKeepGoingHelp)
	f.BoolVar(&o.allowLoss, "allow-loss", false, "exit 0 even when the log lost events or lines were skipped")
	return c
}

type namesOptions struct {
	out       string
	dbs       []string
	variant   string
	bars      []string
	asJSON    bool
	keepGoing bool
	allowLoss bool
}

func parseBarSpec(s string) (regdb.BARRule, error) {
	lhs, dom, ok := strings.Cut(s, "=")
	addr, idx, ok2 := strings.Cut(lhs, "/")
	if !ok || !ok2 || dom == "" {
		return regdb.BARRule{}, usageErrorf("mmio names: --bar %q: want PCIADDR/N=DOMAIN, as 0000:00:03.0/0=E1000", s)
	}
	n, err := strconv.Atoi(idx)
	if err != nil || n < 0 || n > 6 {
		return regdb.BARRule{}, usageErrorf("mmio names: --bar %q: BAR number must be 0..6", s)
	}
	b := regdb.BARRule{Index: n, Domain: dom}
	if id, ok := regdb.ParsePCIID(addr); ok && len(addr) == 9 {
		b.ID, b.ByID = id, true
		return b, nil
	}
	a, err := mmiotrace.ParsePCIAddr(addr)
	if err != nil {
		return regdb.BARRule{}, usageErrorf("mmio names: --bar %q: %v", s, err)
	}
	b.Addr = a
	return b, nil
}

// namer resolves accesses to register names and keeps the counts.
type namer struct {
	regdb.Binder
	barTexts []string // the --bar flags, by rule

	// cache holds formatted decodings: drivers write and read the same
	// values again and again (EEPROM bit-banging, status polling).
	cache map[decodeKey][]byte

	accesses, named, unnamed, noDB, outside int64
	unnamedAt                               map[string]int64
	noDBBars                                map[*mmiotrace.BAR]int64
}

func loadNamesDB(spec string) (*regdb.DB, error) {
	if _, err := os.Stat(spec); err == nil {
		return regdb.LoadFile(spec)
	}
	for _, b := range regdb.Builtins() {
		if b == spec {
			return regdb.Builtin(b)
		}
	}
	return nil, usageErrorf("mmio names: --db %q: no such file and not a shipped database (%s)", spec, strings.Join(regdb.Builtins(), ", "))
}

func newNamer(o *namesOptions) (*namer, error) {
	n := &namer{Binder: regdb.Binder{Variant: o.variant}, cache: map[decodeKey][]byte{}, unnamedAt: map[string]int64{}, noDBBars: map[*mmiotrace.BAR]int64{}}
	for _, s := range o.dbs {
		db, err := loadNamesDB(s)
		if err != nil {
			return nil, err
		}
		n.DBs = append(n.DBs, db)
	}
	if o.variant != "" && len(n.DBs) == 0 {
		ok := false
		for _, b := range regdb.Builtins() {
			if db, err := regdb.Builtin(b); err == nil {
				if _, err := db.WithVariant(o.variant); err == nil {
					ok = true
				}
			}
		}
		if !ok {
			return nil, usageErrorf("mmio names: --variant %q: no shipped database defines it (give the database with --db)", o.variant)
		}
	}
	if o.variant != "" && len(n.DBs) > 0 {
		applied := false
		for i, db := range n.DBs {
			v, err := db.WithVariant(o.variant)
			if err == nil {
				n.DBs[i], applied = v, true
			} else if !errors.Is(err, regdb.ErrNotFound) {
				return nil, err
			}
		}
		if !applied {
			return nil, usageErrorf("mmio names: --variant %q: no database defines it", o.variant)
		}
	}
	for _, s := range o.bars {
		b, err := parseBarSpec(s)
		if err != nil {
			return nil, err
		}
		if _, _, ok := n.FindDomain(b.Domain); !ok {
			return nil, usageErrorf("mmio names: --bar %q: no database has a domain %q", s, b.Domain)
		}
		n.Rules = append(n.Rules, b)
		n.barTexts = append(n.barTexts, s)
	}
	return n, nil
}

// access is the naming of one access record.
type access struct {
	loc   mmiotrace.Location
	bind  *regdb.Binding
	match regdb.Match
	named bool
}

func (n *namer) resolve(bars *mmiotrace.BARMap, rec *mmiotrace.Record) access {
	n.accesses++
	var a access
	loc, ok := bars.Lookup(rec.Phys)
	if !ok {
		n.outside++
		return a
	}
	a.loc = loc
	a.match, a.bind, a.named = n.Name(loc, int(rec.Width))
	if a.bind == nil {
		n.noDB++
		n.noDBBars[loc.BAR]++
		return a
	}
	if a.named {
		n.named++
	} else {
		n.unnamed++
		n.unnamedAt[fmt.Sprintf("%s+%#x", a.bind.Domain.Name, loc.Offset)]++
	}
	return a
}

func runMMIONames(e *env, o *namesOptions, path string) error {
	n, err := newNamer(o)
	if err != nil {
		return err
	}
	in, err := mmioOpenInput(path)
	if err != nil {
		return err
	}
	defer in.Close()
	rd := mmiotrace.NewReader(in)
	defer rd.Close()
	rd.SetKeepGoing(o.keepGoing)
	w, closeOut, err := mmioCreateOutput(e, o.out, outfile.Atomic, path)
	if err != nil {
		return err
	}
	defer func() {
		if closeOut != nil {
			closeOut()
		}
	}()
	bars := mmiotrace.NewBARMap()
	bw := bufio.NewWriterSize(w, 256<<10)
	enc := json.NewEncoder(bw)
	var rec mmiotrace.Record
	var buf []byte
	for i := 0; ; i++ {
		if i&0xffff == 0 && e.ctx.Err() != nil {
			bw.Flush()
			return e.ctx.Err()
		}
		err := rd.ReadInto(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			bw.Flush()
			return fmt.Errorf("mmio names: %s: %w", path, err)
		}
		bars.Observe(&rec)
		isAccess := rec.Kind == mmiotrace.KindRead || rec.Kind == mmiotrace.KindWrite || rec.Kind == mmiotrace.KindUnknown
		if !isAccess {
			if !o.asJSON {
				buf = appendLine(buf[:0], &rec)
				bw.Write(buf)
			}
			continue
		}
		a := n.resolve(bars, &rec)
		if o.asJSON {
			if err := enc.Encode(namesJSON(rd.Line(), &rec, a)); err != nil {
				return err
			}
			continue
		}
		buf = appendLine(buf[:0], &rec)
		buf = buf[:len(buf)-1]
		buf = n.appendNamed(buf, &rec, a)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	cl := closeOut
	closeOut = nil
	if err := cl(); err != nil {
		return err
	}
	n.report(e.stderr)
	return mmioLossCheck(e, rd.Lost(), rd.Skipped(), rd.FirstSkipError(), rd.Truncated(), rd.Line(), o.allowLoss)
}

// appendLine appends the record's original line and a newline.
func appendLine(dst []byte, rec *mmiotrace.Record) []byte {
	if rec.Line != nil {
		dst = append(dst, rec.Line...)
		return append(dst, '\n')
	}
	return mmiotrace.AppendRecord(dst, rec)
}

type decodeKey struct {
	dom         *regdb.Domain
	reg         *regdb.Register
	offset, val uint64
	delta       uint64
	width       uint
}

const maxDecodeCache = 1 << 16

// format appends the formatted decoding of a named access, from the cache
// when the same register instance saw the same value before.
func (n *namer) format(dst []byte, m regdb.Match, v uint64) []byte {
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

func (n *namer) appendNamed(dst []byte, rec *mmiotrace.Record, a access) []byte {
	switch {
	case a.named && rec.Kind == mmiotrace.KindUnknown:
		dst = append(dst, " ; "...)
		return a.match.AppendName(dst)
	case a.named:
		dst = append(dst, " ; "...)
		return n.format(dst, a.match, rec.Value)
	case a.bind != nil:
		dst = append(dst, " ; unnamed "...)
		dst = append(dst, a.bind.Domain.Name...)
		dst = append(dst, "+0x"...)
		return strconv.AppendUint(dst, a.loc.Offset, 16)
	}
	return dst
}

func (n *namer) report(w io.Writer) {
	fmt.Fprintf(w, "mmio names: %d accesses: %d named, %d unnamed, %d in BARs without a database, %d outside any PCI BAR\n",
		n.accesses, n.named, n.unnamed, n.noDB, n.outside)
	if n.unnamed > 0 {
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
	if n.noDB > 0 {
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
	if n.outside > 0 {
		fmt.Fprintf(w, "mmio names: %d accesses lie outside every PCI BAR of the log's PCIDEV records\n", n.outside)
	}
	for i, r := range n.Rules {
		if !r.Used {
			fmt.Fprintf(w, "mmio names: --bar %s matched no access\n", n.barTexts[i])
		}
	}
}

type namesFieldJSON struct {
	Name  string           `json:"name,omitempty"`
	Bits  string           `json:"bits"`
	Value uint64           `json:"value"`
	Enum  string           `json:"enum,omitempty"`
	Sub   []namesFieldJSON `json:"fields,omitempty"`
}

type namesRecordJSON struct {
	Line     int64            `json:"line"`
	Kind     string           `json:"kind"`
	Width    uint8            `json:"width,omitempty"`
	Time     string           `json:"time"`
	Map      int32            `json:"map"`
	Phys     string           `json:"phys"`
	Value    *string          `json:"value,omitempty"`
	BAR      string           `json:"bar,omitempty"`
	Offset   *string          `json:"offset,omitempty"`
	Domain   string           `json:"domain,omitempty"`
	Register string           `json:"register,omitempty"`
	Index    []uint64         `json:"index,omitempty"`
	Access   string           `json:"access,omitempty"`
	Doc      string           `json:"doc,omitempty"`
	Fields   []namesFieldJSON `json:"fields,omitempty"`
	Text     string           `json:"text,omitempty"`
}

func fieldsJSON(fs []regdb.Field) []namesFieldJSON {
	var out []namesFieldJSON
	for _, f := range fs {
		bits := strconv.Itoa(int(f.Low))
		if f.High != f.Low {
			bits = strconv.Itoa(int(f.High)) + ":" + bits
		}
		out = append(out, namesFieldJSON{Name: f.Name, Bits: bits, Value: f.Value, Enum: f.Enum, Sub: fieldsJSON(f.Sub)})
	}
	return out
}

func namesJSON(line int64, rec *mmiotrace.Record, a access) *namesRecordJSON {
	j := &namesRecordJSON{
		Line: line, Kind: rec.Kind.String(), Width: rec.Width, Time: rec.Time.String(),
		Map: rec.MapID, Phys: "0x" + strconv.FormatUint(rec.Phys, 16),
	}
	if rec.Kind != mmiotrace.KindUnknown {
		v := "0x" + strconv.FormatUint(rec.Value, 16)
		j.Value = &v
	}
	if a.loc.BAR != nil {
		j.BAR = fmt.Sprintf("%s/%d", a.loc.BAR.Addr, a.loc.BAR.Index)
		off := "0x" + strconv.FormatUint(a.loc.Offset, 16)
		j.Offset = &off
	}
	if a.bind != nil {
		j.Domain = a.bind.Domain.Name
	}
	if a.named {
		j.Register = a.match.Name()
		j.Index = a.match.Indices()
		j.Access = a.match.Register.Access.String()
		j.Doc = a.match.Register.Doc
		if rec.Kind != mmiotrace.KindUnknown {
			j.Fields = fieldsJSON(a.match.Decode(rec.Value))
			j.Text = a.match.Format(rec.Value)
		}
	}
	return j
}
