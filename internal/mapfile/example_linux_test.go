package mapfile_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/iotap/iotap/internal/mapfile"
)

// A log cut shorter while it is mapped: the read past its new end is an
// error naming the file and the offset, not a crash.
func Example() {
	dir, _ := os.MkdirTemp("", "mapfile")
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "trace.log")
	os.WriteFile(p, make([]byte, 64<<10), 0o600)
	f, _ := os.Open(p)
	defer f.Close()
	m, err := mapfile.Map(f, 64<<10)
	if err != nil {
		fmt.Println("not mapped:", err) // off Linux: read the file instead
		return
	}
	defer m.Close()
	os.Truncate(p, 8192) // another process cuts the file

	var zeros int
	err = mapfile.Do(func() error {
		for _, c := range m.Data {
			if c == 0 {
				zeros++
			}
		}
		return nil
	})
	var fe *mapfile.FaultError
	if errors.As(err, &fe) {
		fmt.Printf("truncated at offset %d after %d bytes\n", fe.Offset, zeros)
	}
	// Output: truncated at offset 8192 after 8192 bytes
}
