package export

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// flatFile writes one Parquet file of a flat table (no nested columns)
// column by column: the exporter appends each row's values to typed
// per-column buffers (no reflection, no pointers for nulls), text columns
// whose values repeat get their dictionary index from a cache the caller
// keeps (no map lookup per row), and the identity columns, constant in a
// file, cost nothing per row. Pages are encoded with parquet-go's own
// encoders (RLE levels, RLE_DICTIONARY indexes), compressed with its zstd
// codec, and the footer is parquet-go's format.FileMetaData, its schema
// taken from a file parquet-go writes for the row type T: the file reads
// back as the one parquet.GenericWriter[T] writes, row for row
// (TestFlatFileMatchesGenericWriter). Encoding and compression of full
// pages run on a second goroutine, in order: the bytes written do not
// depend on the scheduling.
//
// It is used for mmio_accesses, the table with the most rows per input
// byte; the other tables go through parquet.GenericWriter.
type flatFile struct {
	out      *bufio.Writer
	off      int64
	meta     format.FileMetaData
	cols     []*flatCol
	rgRows   int64 // rows per row group
	pageRows int
	n        int   // rows in the page being filled
	rgN      int64 // rows of the row group in pages handed off
	rows     int64
	codec    *pageCodec
	chunks   []flatChunk
	jobs     chan *flatPage
	free     chan *flatPage
	done     chan struct{}
	err      error // set by the encoder
	cur      *flatPage
	proto    thrift.CompactProtocol
	// pageDir, when set (before the first row), is where each column's
	// encoded pages wait until their row group is written, in the
	// table's page file (pages, made at the first page) instead of
	// memory.
	pageDir string
	pages   *pageFiles
}

// flatCol is one column: its type, and the values of the page being
// filled.
type flatCol struct {
	name     string
	typ      format.Type // Int32, Int64 or ByteArray
	optional bool
	unsigned bool
	dict     bool
	constant bool // every row holds cval (identity columns)
	cval     string
	// cpage is a constant column's last encoded page (header and body),
	// the same for every page of cpageRows rows
	cpage               []byte
	cpageRows, cpageRaw int
	// the row group's dictionary (dict columns): values in index order
	dvals []string
	dmap  map[string]int32
	gen   uint32 // changes at each row group: dictRef caches are stale
}

// flatBuf holds one column's values of one page.
type flatBuf struct {
	defs []uint8 // optional columns: 1 present, 0 null
	i32  []int32
	i64  []int64
	idx  []int32
}

// flatPage is one page of every column, handed to the encoder.
type flatPage struct {
	rows  int
	bufs  []flatBuf
	dicts [][]string // set on the last page of a row group: each dict column's dictionary
	last  bool       // the last page of its row group
	final bool       // no more pages: the encoder writes the footer and stops
	abort bool       // no more pages: the encoder stops
}

// flatChunk is what the encoder keeps of a column chunk until the row
// group is written.
type flatChunk struct {
	data         []byte // the data pages: headers and bodies (those of the last page with a pageDir)
	file         *pageBuffer
	fileSize     int64 // bytes of this row group's pages in file
	uncompressed int64
	nulls        int64
	values       int64
	hasMinMax    bool
	min, max     int64
	levels       []byte
	plain        []byte
	zbuf         []byte
}

// dictRef caches a value's dictionary index in one column for the
// current row group.
type dictRef struct {
	gen uint32
	idx int32
}

// flatPageRows is the number of rows of a page (the last of a row group
// may have fewer); tests lower it to make pages of a few rows.
const flatPageRows = 1 << 15

var pageRows = flatPageRows

// newFlatFile starts a file of rows of type T on w. The options are those
// given to parquet.NewGenericWriter for the same table (created_by, key
// value metadata); the schema, column order and metadata come from the
// empty file parquet-go writes with them.
func newFlatFile[T any](w io.Writer, rowGroupRows int64, parallel bool, opts ...parquet.WriterOption) (*flatFile, error) {
	var tmpl bytes.Buffer
	gw := parquet.NewGenericWriter[T](&tmpl, opts...)
	if err := gw.Close(); err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(bytes.NewReader(tmpl.Bytes()), int64(tmpl.Len()))
	if err != nil {
		return nil, err
	}
	f := &flatFile{out: bufio.NewWriterSize(w, 1<<20), meta: *pf.Metadata(), rgRows: rowGroupRows,
		codec: codec()}
	f.meta.RowGroups = nil
	f.meta.NumRows = 0
	fields := parquet.SchemaOf(new(T)).Fields()
	leaves := f.meta.Schema[1:]
	if len(leaves) != len(fields) {
		return nil, fmt.Errorf("export: %T is not a flat table", *new(T))
	}
	for i, el := range leaves {
		c := &flatCol{name: el.Name, typ: el.Type.V,
			optional: el.RepetitionType.V == format.Optional,
			unsigned: el.ConvertedType.Valid && (el.ConvertedType.V == deprecated.Uint64 || el.ConvertedType.V == deprecated.Uint32)}
		if el.NumChildren.Valid && el.NumChildren.V > 0 || el.RepetitionType.V == format.Repeated {
			return nil, fmt.Errorf("export: %T: column %s is nested", *new(T), el.Name)
		}
		switch c.typ {
		case format.Int32, format.Int64:
		case format.ByteArray:
			// Only dictionary-encoded text is written by flatFile.
			if enc := fields[i].Encoding(); enc == nil || enc.Encoding() != format.RLEDictionary {
				return nil, fmt.Errorf("export: %T: text column %s without dictionary", *new(T), el.Name)
			}
			c.dict, c.dmap = true, map[string]int32{}
		default:
			return nil, fmt.Errorf("export: %T: column %s of type %v", *new(T), el.Name, c.typ)
		}
		f.cols = append(f.cols, c)
	}
	f.pageRows = pageRows
	if int64(f.pageRows) > rowGroupRows {
		f.pageRows = int(rowGroupRows)
	}
	for _, c := range f.cols {
		c.gen = 1 // a zero dictRef is stale
	}
	f.chunks = make([]flatChunk, len(f.cols))
	if _, err := f.out.WriteString("PAR1"); err != nil {
		return nil, err
	}
	f.off = 4
	f.cur = f.newPage()
	if parallel {
		f.jobs, f.free, f.done = make(chan *flatPage, 1), make(chan *flatPage, 1), make(chan struct{})
		f.free <- f.newPage()
		go f.encoder()
	}
	return f, nil
}

func (f *flatFile) newPage() *flatPage {
	p := &flatPage{bufs: make([]flatBuf, len(f.cols))}
	for i, c := range f.cols {
		b := &p.bufs[i]
		if c.optional {
			b.defs = make([]uint8, 0, f.pageRows)
		}
		switch {
		case c.constant:
		case c.dict:
			b.idx = make([]int32, 0, f.pageRows)
		case c.typ == format.Int32:
			b.i32 = make([]int32, 0, f.pageRows)
		default:
			b.i64 = make([]int64, 0, f.pageRows)
		}
	}
	return p
}

// col returns the column named name; a name the schema lacks is a bug in
// the exporter.
func (f *flatFile) col(name string) int {
	for i, c := range f.cols {
		if c.name == name {
			return i
		}
	}
	panic("export: no column " + name)
}

// setConst makes column i hold s in every row (called before any row).
func (f *flatFile) setConst(i int, s string) {
	c := f.cols[i]
	if !c.dict || c.optional {
		panic("export: constant column " + c.name + " must be required text")
	}
	c.constant, c.cval = true, s
	f.cur.bufs[i].idx = nil
}

// The append methods add one value to column i of the current row.

func (f *flatFile) int64(i int, v int64) {
	b := &f.cur.bufs[i]
	b.i64 = append(b.i64, v)
	if b.defs != nil {
		b.defs = append(b.defs, 1)
	}
}

func (f *flatFile) int32(i int, v int32) {
	b := &f.cur.bufs[i]
	b.i32 = append(b.i32, v)
	if b.defs != nil {
		b.defs = append(b.defs, 1)
	}
}

func (f *flatFile) null(i int) {
	b := &f.cur.bufs[i]
	b.defs = append(b.defs, 0)
}

// str adds s, its dictionary index cached in ref.
func (f *flatFile) str(i int, s string, ref *dictRef) {
	c := f.cols[i]
	if ref.gen != c.gen {
		ref.idx = c.index(s)
		ref.gen = c.gen
	}
	b := &f.cur.bufs[i]
	b.idx = append(b.idx, ref.idx)
	if b.defs != nil {
		b.defs = append(b.defs, 1)
	}
}

func (c *flatCol) index(s string) int32 {
	if x, ok := c.dmap[s]; ok {
		return x
	}
	x := int32(len(c.dvals))
	c.dvals = append(c.dvals, s)
	c.dmap[s] = x
	return x
}

// endRow ends the current row.
func (f *flatFile) endRow() error {
	f.n++
	f.rows++
	if f.n == f.pageRows || f.rgN+int64(f.n) == f.rgRows {
		return f.flushPage(false)
	}
	return nil
}

// flushPage hands the current page to the encoder.
func (f *flatFile) flushPage(final bool) error {
	p := f.cur
	p.rows = f.n
	for i, c := range f.cols {
		b := &p.bufs[i]
		n := len(b.i32) + len(b.i64) + len(b.idx)
		if c.constant {
			n = p.rows
		}
		if c.optional {
			if len(b.defs) != p.rows {
				return fmt.Errorf("export: column %s has %d of %d rows", c.name, len(b.defs), p.rows)
			}
		} else if n != p.rows {
			return fmt.Errorf("export: column %s has %d of %d rows", c.name, n, p.rows)
		}
	}
	f.rgN += int64(f.n)
	p.last = f.rgN == f.rgRows || final && f.rgN > 0
	p.final = final
	if p.last {
		p.dicts = make([][]string, len(f.cols))
		for i, c := range f.cols {
			if c.dict && !c.constant {
				p.dicts[i] = c.dvals
				c.dvals = nil
				clear(c.dmap)
			}
			c.gen++
		}
		f.rgN = 0
	}
	f.n = 0
	if f.jobs == nil {
		f.encode(p)
		f.recycle(p)
		return f.err
	}
	f.jobs <- p
	if !final {
		f.cur = <-f.free
	}
	return nil
}

// recycle empties a page's buffers for the next one.
func (f *flatFile) recycle(p *flatPage) {
	for i := range p.bufs {
		b := &p.bufs[i]
		b.defs, b.i32, b.i64, b.idx = b.defs[:0], b.i32[:0], b.i64[:0], b.idx[:0]
	}
	p.dicts, p.last, p.final, p.rows = nil, false, false, 0
}

// encoder encodes pages in the order they come.
func (f *flatFile) encoder() {
	defer close(f.done)
	for p := range f.jobs {
		if p.abort {
			return
		}
		f.encode(p)
		if p.final {
			return
		}
		f.recycle(p)
		f.free <- p
	}
}

var (
	levelEnc = rle.Encoding{BitWidth: 1}
	dictEnc  rle.DictionaryEncoding
	deltaEnc delta.BinaryPackedEncoding
)

// encode encodes page p of every column and, at the end of a row group,
// writes the row group.
func (f *flatFile) encode(p *flatPage) {
	if f.err != nil {
		return
	}
	if p.rows > 0 {
		for i, c := range f.cols {
			if err := f.encodeColumn(c, &f.chunks[i], &p.bufs[i], p.rows); err != nil {
				f.err = err
				return
			}
			if err := f.spill(&f.chunks[i]); err != nil {
				f.err = err
				return
			}
		}
	}
	if p.last {
		f.err = f.writeRowGroup(p.dicts)
	}
	if p.final && f.err == nil {
		f.err = f.writeFooter()
	}
}

var zeros [flatPageRows]int32

func (f *flatFile) encodeColumn(c *flatCol, ch *flatChunk, b *flatBuf, rows int) error {
	if c.constant && c.cpageRows == rows {
		ch.data = append(ch.data, c.cpage...)
		ch.uncompressed += int64(c.cpageRaw)
		ch.values += int64(rows)
		return nil
	}
	start := len(ch.data)
	nulls := 0
	ch.levels = ch.levels[:0]
	if c.optional {
		for _, d := range b.defs {
			nulls += int(1 - d)
		}
		var err error
		if ch.levels, err = levelEnc.EncodeLevels(ch.levels, b.defs); err != nil {
			return err
		}
	}
	enc := format.Plain
	plain := ch.plain[:0]
	var err error
	switch {
	case c.constant:
		enc = format.RLEDictionary
		plain, err = dictEnc.EncodeInt32(plain, zeros[:rows])
	case c.dict:
		enc = format.RLEDictionary
		if len(b.idx) != rows-nulls {
			return fmt.Errorf("export: column %s has %d values for %d rows and %d nulls", c.name, len(b.idx), rows, nulls)
		}
		plain, err = dictEnc.EncodeInt32(plain, b.idx)
	case len(b.i32)+len(b.i64) != rows-nulls:
		return fmt.Errorf("export: column %s has %d values for %d rows and %d nulls", c.name, len(b.i32)+len(b.i64), rows, nulls)
	case c.typ == format.Int32:
		enc = format.DeltaBinaryPacked
		for _, v := range b.i32 {
			ch.minmax(c, int64(v))
		}
		plain, err = deltaEnc.EncodeInt32(plain, b.i32)
	default:
		enc = format.DeltaBinaryPacked
		for _, v := range b.i64 {
			ch.minmax(c, v)
		}
		plain, err = deltaEnc.EncodeInt64(plain, b.i64)
	}
	if err != nil {
		return err
	}
	ch.plain = plain
	if ch.zbuf, err = f.codec.Encode(ch.zbuf[:0], plain); err != nil {
		return err
	}
	h := format.PageHeader{Type: format.DataPageV2,
		UncompressedPageSize: int32(len(ch.levels) + len(plain)),
		CompressedPageSize:   int32(len(ch.levels) + len(ch.zbuf)),
		DataPageHeaderV2: thrift.New(format.DataPageHeaderV2{NumValues: int32(rows), NumNulls: int32(nulls), NumRows: int32(rows),
			Encoding: enc, DefinitionLevelsByteLength: int32(len(ch.levels)), IsCompressed: thrift.New(true)})}
	hb, err := f.marshal(&h)
	if err != nil {
		return err
	}
	ch.data = append(ch.data, hb...)
	ch.data = append(ch.data, ch.levels...)
	ch.data = append(ch.data, ch.zbuf...)
	raw := len(hb) + len(ch.levels) + len(plain)
	ch.uncompressed += int64(raw)
	if c.constant {
		c.cpage, c.cpageRows, c.cpageRaw = append(c.cpage[:0], ch.data[start:]...), rows, raw
	}
	ch.nulls += int64(nulls)
	ch.values += int64(rows)
	return nil
}

// spill moves a chunk's encoded pages to its page file (with a pageDir).
func (f *flatFile) spill(ch *flatChunk) error {
	if f.pageDir == "" || len(ch.data) == 0 {
		return nil
	}
	if ch.file == nil {
		if f.pages == nil {
			f.pages = newPageFiles(f.pageDir)
		}
		ch.file = f.pages.get()
	}
	n, err := ch.file.Write(ch.data)
	ch.fileSize += int64(n)
	ch.data = ch.data[:0]
	return err
}

// closePages closes the page files (after the encoder has ended).
func (f *flatFile) closePages() {
	for i := range f.chunks {
		if ch := &f.chunks[i]; ch.file != nil {
			f.pages.PutBuffer(ch.file)
			ch.file = nil
		}
	}
	if f.pages != nil {
		f.pages.close()
	}
}

func (ch *flatChunk) minmax(c *flatCol, v int64) {
	if !ch.hasMinMax {
		ch.min, ch.max, ch.hasMinMax = v, v, true
		return
	}
	if c.unsigned {
		if uint64(v) < uint64(ch.min) {
			ch.min = v
		}
		if uint64(v) > uint64(ch.max) {
			ch.max = v
		}
		return
	}
	ch.min = min(ch.min, v)
	ch.max = max(ch.max, v)
}

func (f *flatFile) marshal(v any) ([]byte, error) {
	b, err := thrift.Marshal(&f.proto, v)
	return b, err
}

// writeRowGroup writes the chunks encoded so far as one row group.
func (f *flatFile) writeRowGroup(dicts [][]string) error {
	rg := format.RowGroup{FileOffset: f.off, Ordinal: int16(len(f.meta.RowGroups))}
	for i, c := range f.cols {
		ch := &f.chunks[i]
		md := format.ColumnMetaData{Type: c.typ, PathInSchema: []string{c.name}, Codec: format.Zstd,
			NumValues: ch.values, Statistics: format.Statistics{NullCount: ch.nulls}}
		var total, compressed int64
		if c.dict {
			vals := dicts[i]
			if c.constant {
				vals = []string{c.cval}
			}
			md.Encoding = []format.Encoding{format.Plain, format.RLE, format.RLEDictionary}
			md.DictionaryPageOffset = f.off
			plain := ch.plain[:0]
			for _, s := range vals {
				plain = binary.LittleEndian.AppendUint32(plain, uint32(len(s)))
				plain = append(plain, s...)
			}
			z, err := f.codec.Encode(ch.zbuf[:0], plain)
			if err != nil {
				return err
			}
			ch.plain, ch.zbuf = plain, z
			h := format.PageHeader{Type: format.DictionaryPage, UncompressedPageSize: int32(len(plain)), CompressedPageSize: int32(len(z)),
				DictionaryPageHeader: thrift.New(format.DictionaryPageHeader{NumValues: int32(len(vals)), Encoding: format.Plain})}
			hb, err := f.marshal(&h)
			if err != nil {
				return err
			}
			if err := f.write(hb, z); err != nil {
				return err
			}
			total += int64(len(hb) + len(plain))
			compressed += int64(len(hb) + len(z))
			if len(vals) > 0 && ch.values > ch.nulls {
				lo, hi := vals[0], vals[0]
				for _, s := range vals[1:] {
					lo, hi = min(lo, s), max(hi, s)
				}
				md.Statistics.MinValue, md.Statistics.MaxValue = []byte(lo), []byte(hi)
			}
		} else {
			md.Encoding = []format.Encoding{format.RLE, format.DeltaBinaryPacked}
			if ch.hasMinMax {
				md.Statistics.MinValue, md.Statistics.MaxValue = statBytes(c, ch.min), statBytes(c, ch.max)
			}
		}
		md.DataPageOffset = f.off
		if ch.file != nil {
			if _, err := ch.file.Seek(0, io.SeekStart); err != nil {
				return err
			}
			n, err := io.CopyN(f.out, ch.file, ch.fileSize)
			f.off += n
			if err != nil {
				return err
			}
			ch.file.reset() // the table's page file is emptied once every chunk's is
			compressed += ch.fileSize
			ch.fileSize = 0
		}
		if err := f.write(ch.data); err != nil {
			return err
		}
		total += ch.uncompressed
		compressed += int64(len(ch.data))
		md.TotalUncompressedSize, md.TotalCompressedSize = total, compressed
		rg.Columns = append(rg.Columns, format.ColumnChunk{MetaData: md})
		rg.TotalByteSize += total
		rg.TotalCompressedSize += compressed
		rg.NumRows = ch.values
		ch.data, ch.uncompressed, ch.nulls, ch.values, ch.hasMinMax = ch.data[:0], 0, 0, 0, false
	}
	f.meta.RowGroups = append(f.meta.RowGroups, rg)
	f.meta.NumRows += rg.NumRows
	return nil
}

func statBytes(c *flatCol, v int64) []byte {
	if c.typ == format.Int32 {
		return binary.LittleEndian.AppendUint32(nil, uint32(v))
	}
	return binary.LittleEndian.AppendUint64(nil, uint64(v))
}

func (f *flatFile) write(bs ...[]byte) error {
	for _, b := range bs {
		n, err := f.out.Write(b)
		f.off += int64(n)
		if err != nil {
			return err
		}
	}
	return nil
}

func (f *flatFile) writeFooter() error {
	mb, err := f.marshal(&f.meta)
	if err != nil {
		return err
	}
	if err := f.write(mb, binary.LittleEndian.AppendUint32(nil, uint32(len(mb))), []byte("PAR1")); err != nil {
		return err
	}
	return f.out.Flush()
}

// close ends the file: the last page, row group and the footer. The
// encoder's error, if any, is returned.
func (f *flatFile) close() error {
	err := f.flushPage(true)
	if f.jobs != nil {
		close(f.jobs)
		<-f.done
		err = f.err // written by the encoder, which has ended
	}
	f.closePages()
	return err
}

// abort stops the encoder without finishing the file.
func (f *flatFile) abort() {
	if f.jobs == nil || f.cur == nil {
		f.closePages()
		return
	}
	p := f.cur
	f.cur = nil
	p.abort = true
	f.jobs <- p
	close(f.jobs)
	<-f.done
	f.closePages()
}

// flatTable is a table written through a flatFile, opened at its first
// row (an input without rows of its kind leaves no file). Its identity
// columns hold id in every row.
type flatTable[T any] struct {
	x     *Exporter
	name  string
	c     *capture
	src   string
	id    Identity
	final string
	fh    *os.File
	f     *flatFile
}

func (t *flatTable[T]) open() (*flatFile, error) {
	if t.f != nil {
		return t.f, nil
	}
	final, fh, err := t.x.createFile(t.name, t.c, t.src)
	if err != nil {
		return nil, err
	}
	f, err := newFlatFile[T](fh, t.x.opt.RowGroupRows, runtime.GOMAXPROCS(0) > 1, t.x.writerOptions(t.name)...)
	if err != nil {
		t.x.dropTemp(fh)
		return nil, fmt.Errorf("export: %s: %w", t.name, err)
	}
	f.pageDir = filepath.Dir(fh.Name())
	for _, kv := range [...]struct{ col, v string }{{"host", t.id.Host}, {"boot_id", t.id.BootID},
		{"kernel_release", t.id.KernelRelease}, {"capture_id", t.id.CaptureID}, {"source_file", t.id.SourceFile},
		{"clock_domain", t.id.ClockDomain}} {
		f.setConst(f.col(kv.col), kv.v)
	}
	t.final, t.fh, t.f = final, fh, f
	return f, nil
}

func (t *flatTable[T]) commit() error {
	if t.f == nil {
		return nil
	}
	return t.x.finish(t.name, t.fh, t.final, t.f.close())
}

func (t *flatTable[T]) abort() {
	if t.f == nil {
		return
	}
	t.f.abort()
	t.x.dropTemp(t.fh)
}
