package export

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	capdir "github.com/iotap/iotap/capture"
	"github.com/iotap/iotap/internal/timerange"
	"github.com/parquet-go/parquet-go"
)

// DefaultRowGroupRows is the default number of rows per row group: large
// enough for good compression and few row groups per file, small enough
// that what a row group holds in memory (its dictionaries; its compressed
// pages wait in temporary files: pageFiles) stays a few tens of MB.
const DefaultRowGroupRows = 1 << 20

// Options configures an Exporter.
type Options struct {
	// Dir is the output directory; each table is a directory under it.
	Dir string
	// Partition lists the Hive-style partition keys, in order: "host",
	// "date" (DIR/TABLE/host=H/date=YYYY-MM-DD/FILE.parquet).
	Partition []string
	// Identity overrides the capture identity (host, boot id, kernel
	// release, capture id); empty fields are derived (see Exporter).
	Identity Identity
	// RowGroupRows bounds the rows of a row group (DefaultRowGroupRows
	// when 0).
	RowGroupRows int64
	// KeepGoing skips unreadable text lines (counted as loss) instead of
	// stopping at the first.
	KeepGoing bool
	// IotapVersion is written in the captures table and the files'
	// created_by.
	IotapVersion string
	// Now returns the export time (time.Now when nil).
	Now func() time.Time
	// PTSysroot and PTBuildIDDirs tell where the binaries a PT trace
	// ran are found, for pt_calls (as 'iotap pt calls --sysroot
	// --buildid-dir'): by path under PTSysroot, or by build id (in
	// ~/.debug when PTBuildIDDirs is empty).
	PTSysroot     string
	PTBuildIDDirs []string
	// Input, when set, wraps the content of each input file as it is
	// opened (size is the file's size in bytes): the CLI counts the bytes
	// read through it for its progress line.
	Input func(path string, size int64, r io.Reader) io.Reader
	// Window, when set, exports only the records of each input inside
	// it (the syntax of --from/--to: internal/timerange), each cut as
	// 'iotap cut' cuts it (cut.OpenStream: in-process, seeking with the
	// input's index) on the input's own clock; in a capture directory
	// a mark: end and seconds from the start are placed on the
	// capture's clock (cut.CommonSpec). A
	// file of a capture directory the window does not resolve on is left
	// out, said to Warn. Intel PT inputs are not windowed
	// (an error: cut them first).
	Window timerange.Spec
	// Warn receives warnings (an index ignored, a file left out of the
	// window); nil drops them.
	Warn func(string)
}

// Exporter writes Parquet tables from capture files. Inputs are exported
// one after the other, each streamed: memory does not grow with their
// size. Close writes the captures table.
type Exporter struct {
	opt      Options
	captures []CaptureRow
	inputs   []os.FileInfo
	files    []string
	closed   bool
	// temps are the temporary files of the tables being written: a
	// failed ExportPath or Close removes those its error left open.
	temps map[*os.File]bool
}

// New checks opt and returns an Exporter writing under opt.Dir, which is
// created (0755) when the first file is written. A wrong Partition (a key
// not known or given twice, "host" without Identity.Host) is an
// *OptionError.
func New(opt Options) (*Exporter, error) {
	if opt.Dir == "" {
		return nil, errors.New("export: no output directory")
	}
	seen := map[string]bool{}
	for _, p := range opt.Partition {
		if p != "host" && p != "date" {
			return nil, &OptionError{fmt.Errorf("export: unknown partition key %q (want host, date)", p)}
		}
		if seen[p] {
			return nil, &OptionError{fmt.Errorf("export: partition key %q given twice", p)}
		}
		seen[p] = true
	}
	if seen["host"] && opt.Identity.Host == "" {
		return nil, &OptionError{errors.New("export: --partition host needs --host")}
	}
	if opt.RowGroupRows <= 0 {
		opt.RowGroupRows = DefaultRowGroupRows
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	// Dir is created with the first file written: a refused input leaves
	// nothing behind.
	if fi, err := os.Stat(opt.Dir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("export: %s is not a directory", opt.Dir)
	}
	return &Exporter{opt: opt}, nil
}

// Captures returns the rows of the captures table so far: one per input
// exported, with what was lost.
func (x *Exporter) Captures() []CaptureRow { return x.captures }

// Files returns the Parquet files written so far.
func (x *Exporter) Files() []string { return x.files }

// Close writes the captures table (one file per capture) and returns the
// first error.
func (x *Exporter) Close() error {
	if x.closed {
		return nil
	}
	x.closed = true
	err := x.writeCaptures()
	if err != nil {
		x.dropTemps()
	}
	return err
}

// writeCaptures writes the captures table.
func (x *Exporter) writeCaptures() error {
	byCap := map[string][]CaptureRow{}
	var order []string
	for _, c := range x.captures {
		k := c.CaptureID + "\x00" + c.Host
		if _, ok := byCap[k]; !ok {
			order = append(order, k)
		}
		byCap[k] = append(byCap[k], c)
	}
	for _, k := range order {
		rows := byCap[k]
		c := &capture{id: rows[0].Identity, date: rows[0].CaptureDate}
		t, err := openTable[CaptureRow](x, TableCaptures, c, "")
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := t.add(r); err != nil {
				t.abort()
				return err
			}
		}
		if err := t.commit(); err != nil {
			return err
		}
	}
	return nil
}

// capture is what every input of one capture shares.
type capture struct {
	id   Identity // SourceFile and ClockDomain unset
	date int32    // days since 1970-01-01 (UTC)
	// clocks maps a source kind or file name to its offset onto the
	// common clock (clocks.json); nil without one.
	commonClock string
	offsets     map[string]int64
	// losses is what the capture recorded as lost (capture.LossFile).
	losses []capdir.SourceLoss
}

func (c *capture) dateString() string {
	return time.Unix(int64(c.date)*86400, 0).UTC().Format("2006-01-02")
}

// dayOf returns the days since the epoch of t (UTC).
func dayOf(t time.Time) int32 {
	return int32(t.UTC().Unix() / 86400)
}

// newCapture fills the identity of a capture from the options; id is a
// hash of what identifies the input (content, names) and of the host and
// boot id, so that the same capture exported again gets the same id and
// two hosts' captures never share one.
func (x *Exporter) newCapture(idSeed []byte, date int32) *capture {
	id := x.opt.Identity
	id.SourceFile, id.ClockDomain = "", ""
	if id.CaptureID == "" {
		h := sha256.New()
		h.Write(idSeed)
		h.Write([]byte{0})
		h.Write([]byte(id.Host))
		h.Write([]byte{0})
		h.Write([]byte(id.BootID))
		id.CaptureID = hex.EncodeToString(h.Sum(nil)[:8])
	}
	return &capture{id: id, date: date}
}

// partitionValue escapes a Hive partition value: characters other than
// letters, digits and ._- as %XX.
func partitionValue(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// dirFor returns the directory of a table's files for a capture.
func (x *Exporter) dirFor(table string, c *capture) (string, error) {
	dir := filepath.Join(x.opt.Dir, table)
	for _, p := range x.opt.Partition {
		switch p {
		case "host":
			if c.id.Host == "" {
				return "", errors.New("export: --partition host needs the host (give it with --host)")
			}
			dir = filepath.Join(dir, "host="+partitionValue(c.id.Host))
		case "date":
			dir = filepath.Join(dir, "date="+c.dateString())
		}
	}
	return dir, nil
}

// table streams rows of one type into one Parquet file, written to a
// temporary file in the final directory and renamed on commit.
type table[T any] struct {
	x     *Exporter
	name  string
	final string
	f     *os.File
	w     *parquet.GenericWriter[T]
	pages *pageFiles // its column pages until their row group is written
	buf   []T
	rows  int64
}

// batchRows is the rows a table hands to its writer at once (a variable
// for the tests).
var batchRows = 1024

// createFile creates the temporary file of a table's file for a capture
// (mode 0600, in the final directory) and returns the final name.
func (x *Exporter) createFile(name string, c *capture, src string) (string, *os.File, error) {
	dir, err := x.dirFor(name, c)
	if err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("export: %w", err)
	}
	base := c.id.CaptureID
	if src != "" {
		base += "-" + partitionValue(filepath.Base(src))
	}
	final := filepath.Join(dir, base+".parquet")
	for _, fi := range x.inputs {
		if st, err := os.Stat(final); err == nil && os.SameFile(st, fi) {
			return "", nil, fmt.Errorf("export: %s is an input: refusing to write over it", final)
		}
	}
	// CreateTemp opens with O_EXCL and mode 0600: it never follows a
	// symlink planted at the name; the rename replaces a link, not its
	// target.
	f, err := os.CreateTemp(dir, ".tmp-"+base+"-*")
	if err != nil {
		return "", nil, fmt.Errorf("export: %w", err)
	}
	if x.temps == nil {
		x.temps = map[*os.File]bool{}
	}
	x.temps[f] = true
	return final, f, nil
}

// dropTemp closes and removes the temporary file f of a table not
// written.
func (x *Exporter) dropTemp(f *os.File) {
	delete(x.temps, f)
	f.Close()
	os.Remove(f.Name())
}

// dropTemps drops every temporary file still open: the tables an error
// left behind (a write error returns from a table's next without its
// abort), so that a failed export leaves no .tmp-* file.
func (x *Exporter) dropTemps() {
	for f := range x.temps {
		x.dropTemp(f)
	}
}

// writerOptions are the parquet-go options of every table's files.
func (x *Exporter) writerOptions(name string) []parquet.WriterOption {
	return []parquet.WriterOption{
		parquet.Compression(codec()),
		parquet.MaxRowsPerRowGroup(x.opt.RowGroupRows),
		parquet.CreatedBy("iotap", cmpOr(x.opt.IotapVersion, "devel"), ""),
		parquet.KeyValueMetadata("iotap.schema_version", strconv.Itoa(SchemaVersion)),
		parquet.KeyValueMetadata("iotap.table", name),
	}
}

func openTable[T any](x *Exporter, name string, c *capture, src string) (*table[T], error) {
	final, f, err := x.createFile(name, c, src)
	if err != nil {
		return nil, err
	}
	pages := newPageFiles(filepath.Dir(f.Name()))
	opts := append(x.writerOptions(name), parquet.ColumnPageBuffers(pages))
	w := parquet.NewGenericWriter[T](f, opts...)
	return &table[T]{x: x, name: name, final: final, f: f, w: w, pages: pages, buf: make([]T, 0, batchRows)}, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// next returns the next row to fill (zeroed), flushing a full batch.
func (t *table[T]) next() (*T, error) {
	if len(t.buf) == cap(t.buf) {
		if err := t.flush(); err != nil {
			return nil, err
		}
	}
	var zero T
	t.buf = append(t.buf, zero)
	t.rows++
	return &t.buf[len(t.buf)-1], nil
}

func (t *table[T]) add(r T) error {
	p, err := t.next()
	if err != nil {
		return err
	}
	*p = r
	return nil
}

func (t *table[T]) flush() error {
	if len(t.buf) == 0 {
		return nil
	}
	if _, err := t.w.Write(t.buf); err != nil {
		return fmt.Errorf("export: %s: %w", t.name, err)
	}
	clear(t.buf)
	t.buf = t.buf[:0]
	return nil
}

// commit finishes the file and moves it to its final name.
func (t *table[T]) commit() error {
	err := t.flush()
	if err == nil {
		err = t.w.Close()
	}
	t.pages.close() // closed already unless the writer failed with buffers out
	return t.x.finish(t.name, t.f, t.final, err)
}

// finish syncs and closes a table's temporary file f and renames it to
// final, or removes it when err (the writer's) or any of this fails.
func (x *Exporter) finish(name string, f *os.File, final string, err error) error {
	delete(x.temps, f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), final)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("export: %s: %w", name, err)
	}
	x.files = append(x.files, final)
	return nil
}

// abort drops the file.
func (t *table[T]) abort() {
	t.pages.close()
	t.x.dropTemp(t.f)
}

// lazyTable opens its table at the first row, so that an input without
// rows of a kind leaves no file.
type lazyTable[T any] struct {
	x    *Exporter
	name string
	c    *capture
	src  string
	t    *table[T]
}

func (l *lazyTable[T]) next() (*T, error) {
	if l.t == nil {
		t, err := openTable[T](l.x, l.name, l.c, l.src)
		if err != nil {
			return nil, err
		}
		l.t = t
	}
	return l.t.next()
}

// slot is the index of the row next returned last in its batch: the
// batch holds it (and what its pointers point to must stay as it is)
// until the next call of next that returns the row of the same slot.
func (l *lazyTable[T]) slot() int { return len(l.t.buf) - 1 }

func (l *lazyTable[T]) commit() error {
	if l.t == nil {
		return nil
	}
	return l.t.commit()
}

func (l *lazyTable[T]) abort() {
	if l.t != nil {
		l.t.abort()
	}
}

func ptr[T any](v T) *T { return &v }

// LocalIdentity is the identity of the running system, for exports of a
// capture taken on it (iotap capture --parquet): the host name, the boot
// id (/proc/sys/kernel/random/boot_id) and the kernel release
// (/proc/sys/kernel/osrelease); what cannot be read is "".
func LocalIdentity() Identity {
	var id Identity
	id.Host, _ = os.Hostname()
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	id.BootID = read("/proc/sys/kernel/random/boot_id")
	id.KernelRelease = read("/proc/sys/kernel/osrelease")
	return id
}

// Dir exports one capture directory (or file) with opt and writes the
// captures table: New, ExportPath and Close in one call, as 'iotap
// capture --parquet' does when the capture ends. Identity fields left
// empty in opt are taken from LocalIdentity. What was lost is in the
// returned rows (and the captures table).
func Dir(ctx context.Context, path string, opt Options) ([]CaptureRow, error) {
	local := LocalIdentity()
	id := &opt.Identity
	id.Host, id.BootID, id.KernelRelease = cmpOr(id.Host, local.Host), cmpOr(id.BootID, local.BootID), cmpOr(id.KernelRelease, local.KernelRelease)
	x, err := New(opt)
	if err != nil {
		return nil, err
	}
	rows, err := x.ExportPath(ctx, path)
	if cerr := x.Close(); err == nil {
		err = cerr
	}
	return rows, err
}

// ExportAll exports each of paths in turn (ExportPath), calls row, when
// set, with each captures row as its input is exported, and then writes
// the captures table (Close). Every path's files are found and their kinds
// detected first: an input that cannot be exported (not a trace, of a
// kind not exported) is an error before any table is written. It returns
// what was lost, one "FILE: LOSS" per input that lost data (the captures
// table records it too). It stops at the first error, the captures table
// unwritten.
func (x *Exporter) ExportAll(ctx context.Context, paths []string, row func(CaptureRow)) (lost []string, err error) {
	plans := make([]*pathPlan, len(paths))
	for i, p := range paths {
		if plans[i], err = x.planPath(p); err != nil {
			return nil, err
		}
	}
	for _, p := range plans {
		rows, err := x.exportPlanned(ctx, p)
		for _, r := range rows {
			if row != nil {
				row(r)
			}
			if r.Loss != "" {
				lost = append(lost, r.namedLoss())
			}
		}
		if err != nil {
			return lost, err
		}
	}
	return lost, x.Close()
}

// namedLoss is "FILE: LOSS", the row's loss named by its source file,
// which a loss that starts with it (a raw trace's, named as pt stats
// names its stream) is not given a second time.
func (r CaptureRow) namedLoss() string {
	if strings.HasPrefix(r.Loss, r.SourceFile+": ") {
		return r.Loss
	}
	return r.SourceFile + ": " + r.Loss
}

// String says what the row's input was and how many records it gave:
// "cap/usb.pcapng: usb pcapng, 12 records".
func (r CaptureRow) String() string {
	return fmt.Sprintf("%s: %s %s, %d records", r.SourceFile, r.Source, r.Format, r.Records)
}
