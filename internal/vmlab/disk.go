package vmlab

import (
	"bufio"
	"fmt"
	"os"
)

// DiskSize is the size of each USB storage disk image (16 MiB).
const DiskSize = 16 << 20

// DiskSector returns the content of 512-byte sector n of the USB disk
// named disk ("d0" behind xHCI, "d1" behind EHCI): the line
// "vmlab <disk> sector <n, 8 digits>\n" (25 bytes) repeated and cut to 512
// bytes. Guest tests read the disks with dd and compare.
func DiskSector(disk string, n int) []byte {
	line := fmt.Sprintf("vmlab %s sector %08d\n", disk, n)
	sec := make([]byte, 0, 512+len(line))
	for len(sec) < 512 {
		sec = append(sec, line...)
	}
	return sec[:512]
}

// writeDisk creates the raw image of disk at path.
func writeDisk(path, disk string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("vmlab: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	for n := 0; n < DiskSize/512; n++ {
		w.Write(DiskSector(disk, n))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("vmlab: %w", err)
	}
	return f.Close()
}
