package export

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
)

// TestPageFilesShared: the column buffers of one table share one page
// file: pages written to three buffers in turn, as the writers interleave
// the columns of a row group, read back per buffer as written (in reads
// of every size); a write after Seek(0) starts the buffer again; once
// every buffer is reset (its row group written) the file is emptied, so
// it never holds more than a row group, and once every buffer is
// returned it is closed (no descriptor between row groups).
func TestPageFilesShared(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	p := newPageFiles(t.TempDir())
	bufs := []*pageBuffer{p.get(), p.get(), p.get()}
	for group := range 3 {
		want := make([][]byte, len(bufs))
		var total int64
		for range 200 {
			i := r.IntN(len(bufs))
			page := make([]byte, 1+r.IntN(3000))
			for k := range page {
				page[k] = byte(r.Uint32())
			}
			if _, err := bufs[i].Write(page); err != nil {
				t.Fatal(err)
			}
			want[i] = append(want[i], page...)
			total += int64(len(page))
		}
		if st, err := p.f.Stat(); err != nil || st.Size() != total {
			t.Fatalf("row group %d: page file %v bytes (%v), want %d: the row group's", group, st.Size(), err, total)
		}
		for i, b := range bufs {
			if _, err := b.Seek(0, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			var got []byte
			chunk := make([]byte, 1+r.IntN(5000))
			for {
				n, err := b.Read(chunk)
				got = append(got, chunk[:n]...)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, want[i]) {
				t.Fatalf("row group %d, buffer %d: read %d bytes, wrote %d (or others)", group, i, len(got), len(want[i]))
			}
		}
		if group == 1 {
			// parquet-go's way: Seek(0) and write again, then return
			for i, b := range bufs {
				b.Seek(0, io.SeekStart)
				b.Write([]byte{byte(i)})
				if n, _ := b.Seek(0, io.SeekEnd); n != 1 {
					t.Fatalf("buffer %d: %d bytes after a write at 0", i, n)
				}
				p.PutBuffer(b)
			}
			if p.f != nil || p.live != 0 {
				t.Fatalf("every buffer returned: file still open (%d live)", p.live)
			}
			bufs = []*pageBuffer{p.get(), p.get(), p.get()}
			continue
		}
		for _, b := range bufs { // flatFile's way
			b.reset()
		}
		if st, err := p.f.Stat(); err != nil || st.Size() != 0 || p.used != 0 {
			t.Fatalf("every buffer reset: page file %v bytes (%v), %d used", st.Size(), err, p.used)
		}
	}
}
