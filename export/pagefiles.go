package export

import (
	"errors"
	"io"
	"os"
)

// pageFiles is the page buffer pool of one table written through
// parquet.GenericWriter (parquet.ColumnPageBuffers), or of flatFile's
// (mmio_accesses) column chunks. A Parquet column chunk is contiguous in
// the file, so the writer holds the compressed pages of each column
// until its row group is complete; in memory (parquet-go's default) that
// is the whole row group, compressed: up to about 28 MB for a row group
// (1 Mi rows) of usb_events and usb_transfers, most of what a long USB
// export held (docs/performance.md, memory table).
//
// pageFiles keeps them on disk instead, in one temporary file per table
// in the table's output directory: each column's buffer (pageBuffer) is
// the list of the extents its pages took in that file, appended as they
// come, so a table holds one file descriptor whatever its columns (a file
// per column took about 60 for a USB input, and 'ulimit -n 64' made
// export fail). The file is made at the first page, removed at once where
// the system allows (a name is never left behind by a crash there),
// emptied when every buffer is empty (the row group written) and closed
// when none is in use (parquet-go returns them after each row group), so
// a table between row groups holds no descriptor. One goroutine uses a
// pool at a time (the table's writer).
type pageFiles struct {
	dir  string
	f    *os.File
	name string // "" once removed
	size int64  // bytes written to f since it was last emptied
	used int64  // bytes of f in the buffers' extents
	live int    // buffers handed out and not returned
}

func newPageFiles(dir string) *pageFiles { return &pageFiles{dir: dir} }

// extent is a run of bytes of a buffer in the pool's file.
type extent struct{ off, n int64 }

// pageBuffer is a column's pages: its extents in the pool's file, read
// back in order. A write appends at the end of the file; written at a
// position before the buffer's end, it first drops what follows (the
// writers write a buffer from its start, then read it whole, then start
// it again: Seek(0) and write).
type pageBuffer struct {
	p    *pageFiles
	ext  []extent
	size int64 // the buffer's length: the sum of ext
	pos  int64
	// ri is the extent that holds the byte at rstart (a read goes on from
	// the previous one's extent, not from the first)
	ri     int
	rstart int64
}

func (p *pageFiles) GetBuffer() io.ReadWriteSeeker { return p.get() }

func (p *pageFiles) get() *pageBuffer {
	p.live++
	return &pageBuffer{p: p}
}

func (p *pageFiles) PutBuffer(b io.ReadWriteSeeker) {
	if pb, ok := b.(*pageBuffer); ok && pb.p == p {
		pb.truncate(0)
		pb.p = nil
		if p.live--; p.live == 0 {
			p.close()
		}
	}
}

// close closes and removes the file (a table that ends or is dropped
// with buffers still out, and when the last buffer comes back); the next
// page makes a new one.
func (p *pageFiles) close() {
	if p.f != nil {
		p.f.Close()
		if p.name != "" {
			os.Remove(p.name)
		}
	}
	p.f, p.name, p.size, p.used = nil, "", 0, 0
}

// open makes the pool's file.
func (p *pageFiles) open() error {
	f, err := os.CreateTemp(p.dir, ".tmp-pages-*")
	if err != nil {
		return err
	}
	p.f, p.name = f, f.Name()
	if os.Remove(p.name) == nil {
		p.name = ""
	}
	return nil
}

// reset empties the buffer (its row group is written).
func (b *pageBuffer) reset() {
	b.truncate(0)
	b.pos = 0
}

// truncate drops the buffer's bytes from n on; the pool's file is
// emptied when no buffer holds any.
func (b *pageBuffer) truncate(n int64) {
	p := b.p
	b.ri, b.rstart = 0, 0
	for len(b.ext) > 0 && b.size > n {
		e := &b.ext[len(b.ext)-1]
		cut := min(e.n, b.size-n)
		e.n -= cut
		b.size -= cut
		p.used -= cut
		if e.n == 0 {
			b.ext = b.ext[:len(b.ext)-1]
		}
	}
	if p.used == 0 && p.size > 0 && p.f != nil {
		if p.f.Truncate(0) == nil {
			p.size = 0
		}
	}
}

func (b *pageBuffer) Write(data []byte) (int, error) {
	p := b.p
	if p == nil {
		return 0, os.ErrClosed
	}
	if b.pos < b.size {
		b.truncate(b.pos)
	}
	if p.f == nil {
		if err := p.open(); err != nil {
			return 0, err
		}
	}
	n, err := p.f.WriteAt(data, p.size)
	if n > 0 {
		if k := len(b.ext) - 1; k >= 0 && b.ext[k].off+b.ext[k].n == p.size {
			b.ext[k].n += int64(n)
		} else {
			b.ext = append(b.ext, extent{p.size, int64(n)})
		}
		p.size += int64(n)
		p.used += int64(n)
		b.size += int64(n)
		b.pos = b.size
	}
	return n, err
}

func (b *pageBuffer) Read(data []byte) (int, error) {
	if b.p == nil {
		return 0, os.ErrClosed
	}
	if b.pos >= b.size {
		return 0, io.EOF
	}
	// the extent holding pos, from the last read's on
	if b.pos < b.rstart || b.ri >= len(b.ext) {
		b.ri, b.rstart = 0, 0
	}
	for b.pos >= b.rstart+b.ext[b.ri].n {
		b.rstart += b.ext[b.ri].n
		b.ri++
	}
	e := b.ext[b.ri]
	k := b.pos - b.rstart
	m := min(int64(len(data)), e.n-k)
	n, err := b.p.f.ReadAt(data[:m], e.off+k)
	b.pos += int64(n)
	if err == io.EOF {
		err = nil
		if n < int(m) {
			err = io.ErrUnexpectedEOF // the file is shorter than written
		}
	}
	return n, err
}

var errSeek = errors.New("page buffer: seek out of range")

func (b *pageBuffer) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += b.pos
	case io.SeekEnd:
		off += b.size
	}
	if off < 0 || off > b.size {
		return b.pos, errSeek
	}
	b.pos = off
	return off, nil
}
