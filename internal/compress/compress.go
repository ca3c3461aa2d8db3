// Package compress detects and undoes the stream compressions iotap reads
// (gzip, xz, zstd) by content, and writes them by name. It is shared by the
// source packages (mmiotrace, usbmon) and content detection (detect), so
// that none of them imports another for it.
package compress

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// Compression names a stream compression.
type Compression uint8

// Supported compressions.
const (
	None Compression = iota
	Gzip
	XZ
	Zstd
)

func (c Compression) String() string {
	switch c {
	case Gzip:
		return "gzip"
	case XZ:
		return "xz"
	case Zstd:
		return "zstd"
	}
	return "none"
}

var (
	magicGzip = []byte{0x1f, 0x8b}
	magicXZ   = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}
	magicZstd = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// Detect recognises a compressed stream from its first bytes.
func Detect(head []byte) Compression {
	switch {
	case bytes.HasPrefix(head, magicGzip):
		return Gzip
	case bytes.HasPrefix(head, magicXZ):
		return XZ
	case bytes.HasPrefix(head, magicZstd):
		return Zstd
	}
	return None
}

// FromName picks the compression for an output file from its
// extension (.gz, .xz, .zst); None for anything else.
func FromName(name string) Compression {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".gz", ".tgz":
		return Gzip
	case ".xz":
		return XZ
	case ".zst", ".zstd":
		return Zstd
	}
	return None
}

// Decompress returns a reader of the decompressed content of r, detected
// from its magic bytes, and the compression found. Uncompressed input is
// passed through. The returned closer releases decoder resources (it does
// not close r).
func Decompress(r io.Reader) (io.Reader, Compression, func(), error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(6)
	c := Detect(head)
	nop := func() {}
	switch c {
	case Gzip:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, c, nop, fmt.Errorf("gzip input: %w", err)
		}
		return zr, c, func() { zr.Close() }, nil
	case XZ:
		zr, err := xz.NewReader(br)
		if err != nil {
			return nil, c, nop, fmt.Errorf("xz input: %w", err)
		}
		return zr, c, nop, nil
	case Zstd:
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, c, nop, fmt.Errorf("zstd input: %w", err)
		}
		return zr, c, zr.Close, nil
	}
	return br, None, nop, nil
}

// NewWriter wraps w in a compressor; None returns w with a no-op
// Close. Close the result to flush the compressed stream (it does not close
// w).
func NewWriter(w io.Writer, c Compression) (io.WriteCloser, error) {
	switch c {
	case Gzip:
		return gzip.NewWriter(w), nil
	case XZ:
		zw, err := xz.NewWriter(w)
		if err != nil {
			return nil, fmt.Errorf("xz output: %w", err)
		}
		return zw, nil
	case Zstd:
		zw, err := zstd.NewWriter(w)
		if err != nil {
			return nil, fmt.Errorf("zstd output: %w", err)
		}
		return zw, nil
	}
	return nopCloser{w}, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
