package mmiotrace

import (
	"fmt"
	"io"

	"github.com/iotap/iotap/internal/compress"
)

// Compression names a stream compression (gzip, xz, zstd).
type Compression = compress.Compression

// Supported compressions.
const (
	None = compress.None
	Gzip = compress.Gzip
	XZ   = compress.XZ
	Zstd = compress.Zstd
)

// DetectCompression recognises a compressed stream from its first bytes.
func DetectCompression(head []byte) Compression { return compress.Detect(head) }

// CompressionFromName picks the compression for an output file from its
// extension (.gz, .xz, .zst); None for anything else.
func CompressionFromName(name string) Compression { return compress.FromName(name) }

// Decompress returns a reader of the decompressed content of r, detected
// from its magic bytes, and the compression found. Uncompressed input is
// passed through. The returned closer releases decoder resources (it does
// not close r).
func Decompress(r io.Reader) (io.Reader, Compression, func(), error) {
	zr, c, closeDec, err := compress.Decompress(r)
	if err != nil {
		err = fmt.Errorf("mmiotrace: %w", err)
	}
	return zr, c, closeDec, err
}

// NewCompressWriter wraps w in a compressor; None returns w with a no-op
// Close. Close the result to flush the compressed stream (it does not close
// w).
func NewCompressWriter(w io.Writer, c Compression) (io.WriteCloser, error) {
	zw, err := compress.NewWriter(w, c)
	if err != nil {
		err = fmt.Errorf("mmiotrace: %w", err)
	}
	return zw, err
}
