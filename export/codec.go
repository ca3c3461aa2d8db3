package export

import (
	"sync"

	kzstd "github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// pageCodec is the zstd codec of every file the exporter writes: the
// bytes of parquet-go's zstd.Codec at SpeedFastest, with less memory.
//
// parquet-go's codec keeps its encoders in a sync.Pool, one pool per
// codec value, each encoder with a 4 MiB window and 8 MiB of history
// (twice the window), allocated at the first page larger than a zstd
// block (128 KiB). One codec per table and encoders dropped by the pool
// at a collection and made again held 32 MB of the exporter's live heap
// at the end of a long USB export (docs/performance.md, memory table).
//
// pageCodec's encoders live as long as the process, shared by every
// table: pages shorter than smallWindow (every data page: parquet-go's
// fill to 256 KiB, flatFile's 32,768 values) go to encoders whose window
// is smallWindow, with the history of a window and a block
// (WithLowerEncoderMem); longer pages (large dictionaries) go to an
// encoder with parquet-go's window, made at the first such page. zstd
// writes a frame's window from the page's size when the page is shorter
// than the window, and matches reach back at most the page's length, so
// the bytes are the same as parquet-go's (TestPageCodecMatchesParquetGo).
type pageCodec struct {
	small     *kzstd.Encoder
	largeOnce sync.Once
	large     *kzstd.Encoder
	dec       zstd.Codec
}

// smallWindow is the window of the encoders of pages shorter than it.
const smallWindow = 1 << 20

// codec is shared by every table and exporter of the process. It is made
// on the first export: its encoder was 35 k instructions and 22
// allocations of every iotap start (docs/performance.md).
var codec = sync.OnceValue(newPageCodec)

func newPageCodec() *pageCodec {
	return &pageCodec{small: newEncoder(2, kzstd.WithWindowSize(smallWindow)), dec: zstd.Codec{Level: zstd.SpeedFastest}}
}

// newEncoder returns an encoder with parquet-go's options (zstd.Codec
// at SpeedFastest), low memory, and opts, EncodeAll callable by n
// goroutines at once.
func newEncoder(n int, opts ...kzstd.EOption) *kzstd.Encoder {
	opts = append([]kzstd.EOption{kzstd.WithEncoderConcurrency(n), kzstd.WithEncoderLevel(zstd.SpeedFastest),
		kzstd.WithZeroFrames(true), kzstd.WithEncoderCRC(false), kzstd.WithLowerEncoderMem(true)}, opts...)
	e, err := kzstd.NewWriter(nil, opts...)
	if err != nil {
		panic(err) // the options are constant
	}
	return e
}

func (c *pageCodec) String() string { return "ZSTD" }

func (c *pageCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

func (c *pageCodec) Encode(dst, src []byte) ([]byte, error) {
	if len(src) < smallWindow {
		return c.small.EncodeAll(src, dst[:0]), nil
	}
	c.largeOnce.Do(func() { c.large = newEncoder(1) })
	return c.large.EncodeAll(src, dst[:0]), nil
}

func (c *pageCodec) Decode(dst, src []byte) ([]byte, error) { return c.dec.Decode(dst, src) }
