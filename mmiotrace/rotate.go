package mmiotrace

import (
	"bytes"
	"io"

	"github.com/iotap/iotap/internal/outfile"
	"github.com/iotap/iotap/rotate"
)

// IsHeaderLine reports whether line (without its newline) is one of the
// lines that describe a whole log rather than an event: VERSION and
// PCIDEV, which the kernel writes first.
func IsHeaderLine(line []byte) bool {
	return bytes.HasPrefix(line, []byte("VERSION ")) || bytes.HasPrefix(line, []byte("PCIDEV "))
}

// NewRotatingLog returns a writer for Capture that splits the log into a
// ring of files (opt; 'iotap mmio capture --file-size/--file-duration/--ring'),
// starting a new file only between two lines and repeating the VERSION and
// PCIDEV lines at the start of every file, so that each file reads on its
// own and the records of the files, in order, are the log's, each once.
// Size counts the log's bytes before compression. With opt.Create nil,
// each file is created 0600 (no symbolic link followed) and compressed as
// its name says (.gz, .xz, .zst). Close the writer after Capture: it
// completes the last file.
func NewRotatingLog(opt rotate.Options) (*rotate.Lines, error) {
	if opt.Create == nil {
		opt.Create = CreateLog
	}
	files, err := rotate.NewFiles(opt)
	if err != nil {
		return nil, err
	}
	return rotate.NewRotatingLines(files, rotate.LineOptions{Header: IsHeaderLine})
}

// CreateLog creates a log file for writing, mode 0600, compressed as its
// name says; Close completes it. A killed capture leaves what was written
// under the name.
func CreateLog(path string) (io.WriteCloser, error) {
	f, err := outfile.Create(path, outfile.Options{Mode: outfile.InPlace})
	if err != nil {
		return nil, err
	}
	zw, err := NewCompressWriter(f, CompressionFromName(path))
	if err != nil {
		f.Abort()
		return nil, err
	}
	return &logFile{zw, f}, nil
}

type logFile struct {
	io.WriteCloser // the compressor (or pass-through)
	f              *outfile.File
}

func (l *logFile) Close() error {
	if err := l.WriteCloser.Close(); err != nil {
		l.f.Abort()
		return err
	}
	return l.f.Commit()
}
