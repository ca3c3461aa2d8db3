package vmlab

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// cpioEntry is one file, directory, symlink or device node of an
// initramfs. Mode holds the file type bits (fs.ModeDir, fs.ModeSymlink,
// fs.ModeDevice|fs.ModeCharDevice) and the permission bits.
type cpioEntry struct {
	Name         string // absolute guest path, e.g. "/bin/busybox"
	Mode         fs.FileMode
	Data         []byte // file content, or the target of a symlink
	Major, Minor uint32 // device numbers of a device node
}

// Unix file type bits of the newc format.
const (
	cpioIFREG = 0o100000
	cpioIFDIR = 0o040000
	cpioIFLNK = 0o120000
	cpioIFCHR = 0o020000
)

// writeCPIO writes entries as a newc ("070701") cpio archive, the format
// the kernel unpacks into its rootfs. Parent directories that are not
// listed are created with mode 0755, and every directory is written before
// what it contains. A name listed twice is an error.
func writeCPIO(w io.Writer, entries []cpioEntry) error {
	byName := make(map[string]cpioEntry, len(entries))
	for _, e := range entries {
		name := path.Clean("/" + e.Name)
		if name == "/" {
			continue
		}
		if _, dup := byName[name]; dup {
			return fmt.Errorf("initramfs: %s listed twice", name)
		}
		e.Name = name
		byName[name] = e
	}
	for name := range byName {
		for d := path.Dir(name); d != "/"; d = path.Dir(d) {
			if p, ok := byName[d]; ok {
				if !p.Mode.IsDir() {
					return fmt.Errorf("initramfs: %s is not a directory but holds %s", d, name)
				}
				continue
			}
			byName[d] = cpioEntry{Name: d, Mode: fs.ModeDir | 0o755}
		}
	}
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	// Sorting by path puts every directory before its contents.
	sort.Strings(names)

	bw := bufio.NewWriterSize(w, 1<<16)
	cw := &countWriter{w: bw}
	for i, name := range names {
		if err := writeCPIOEntry(cw, uint32(i+1), byName[name]); err != nil {
			return err
		}
	}
	if err := writeCPIOEntry(cw, 0, cpioEntry{Name: "TRAILER!!!"}); err != nil {
		return err
	}
	return bw.Flush()
}

func writeCPIOEntry(cw *countWriter, ino uint32, e cpioEntry) error {
	var mode uint32
	perm := uint32(e.Mode.Perm())
	switch {
	case e.Name == "TRAILER!!!":
	case e.Mode.IsDir():
		mode = cpioIFDIR | perm
	case e.Mode&fs.ModeSymlink != 0:
		mode = cpioIFLNK | 0o777
	case e.Mode&fs.ModeCharDevice != 0:
		mode = cpioIFCHR | perm
	case e.Mode.IsRegular():
		mode = cpioIFREG | perm
	default:
		return fmt.Errorf("initramfs: %s: unsupported file mode %v", e.Name, e.Mode)
	}
	data := e.Data
	if e.Mode.IsDir() || e.Mode&fs.ModeCharDevice != 0 {
		data = nil
	}
	name := strings.TrimPrefix(e.Name, "/")
	nlink := 1
	if e.Mode.IsDir() {
		nlink = 2
	}
	var rmaj, rmin uint32
	if e.Mode&fs.ModeCharDevice != 0 {
		rmaj, rmin = e.Major, e.Minor
	}
	// magic, ino, mode, uid, gid, nlink, mtime, filesize, devmajor,
	// devminor, rdevmajor, rdevminor, namesize (with the NUL), check.
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rmaj, rmin, len(name)+1, 0)
	if _, err := io.WriteString(cw, hdr); err != nil {
		return err
	}
	if _, err := io.WriteString(cw, name+"\x00"); err != nil {
		return err
	}
	if err := cw.pad4(); err != nil {
		return err
	}
	if _, err := cw.Write(data); err != nil {
		return err
	}
	return cw.pad4()
}

// countWriter counts bytes written so that the archive can be padded to
// the 4-byte boundaries newc requires.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (c *countWriter) pad4() error {
	if r := c.n % 4; r != 0 {
		_, err := c.Write(make([]byte, 4-r))
		return err
	}
	return nil
}
