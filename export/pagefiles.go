package export

import (
	"io"
	"os"
)

// pageFiles is the page buffer pool of the tables written through
// parquet.GenericWriter (parquet.ColumnPageBuffers), and of flatFile's
// (mmio_accesses) column chunks. A Parquet column
// chunk is contiguous in the file, so the writer holds the compressed
// pages of each column until its row group is complete; in memory
// (parquet-go's default) that is the whole row group, compressed: up to
// about 28 MB for a row group (1 Mi rows) of usb_events and
// usb_transfers, most of what a long USB export held
// (docs/performance.md, memory table). pageFiles keeps each column's
// pages in a temporary file in the table's output directory instead,
// removed at once where the system allows (a name is never left behind
// by a crash there) and otherwise when the row group is written.
type pageFiles struct{ dir string }

// pageFile is a page buffer: an open temporary file, with its name when
// it could not be removed at creation.
type pageFile struct {
	*os.File
	name string // "" once removed
}

func (p pageFiles) GetBuffer() io.ReadWriteSeeker {
	f, err := os.CreateTemp(p.dir, ".tmp-pages-*")
	if err != nil {
		return errBuffer{err}
	}
	b := &pageFile{File: f, name: f.Name()}
	if os.Remove(b.name) == nil {
		b.name = ""
	}
	return b
}

func (p pageFiles) PutBuffer(b io.ReadWriteSeeker) {
	if f, ok := b.(*pageFile); ok {
		f.Close()
		if f.name != "" {
			os.Remove(f.name)
		}
	}
}

// errBuffer is the buffer of a temporary file that could not be made:
// every call fails with its error, which the writer returns.
type errBuffer struct{ err error }

func (b errBuffer) Read([]byte) (int, error)       { return 0, b.err }
func (b errBuffer) Write([]byte) (int, error)      { return 0, b.err }
func (b errBuffer) Seek(int64, int) (int64, error) { return 0, b.err }
