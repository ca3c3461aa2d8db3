package mmiotrace

import (
	"fmt"
	"os"
)

// Open opens a log file. A plain (uncompressed) regular file is mapped
// into memory and parsed in place, without copying; other files are
// streamed (and decompressed). Close the Reader to release the file.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mmiotrace: %w", err)
	}
	if data, unmap, ok := mapFile(f); ok {
		plain, err := isPlain(data)
		if err != nil {
			unmap()
			f.Close()
			return nil, err
		}
		if plain {
			f.Close()
			return &Reader{buf: data, w: len(data), eof: true, started: true, maxLine: DefaultMaxLine, closeDec: unmap, mapped: true}, nil
		}
		unmap()
	}
	rd := NewReader(f)
	rd.file = f
	return rd, nil
}
