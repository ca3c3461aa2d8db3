package intelpt

import (
	"fmt"
	"os"

	"github.com/iotap/iotap/intelpt/symtab"
)

// Unfound is a mapping whose file could not be loaded into an image.
type Unfound struct {
	Mapping Mapping
	Err     error
}

// LoadImage builds the memory image of a process from its mappings: each
// mapping's file (found by fd: path, sysroot, build-id cache) is read from
// the mapping's file offset for the mapping's length. Mappings whose file
// cannot be found or read are returned in unfound (the decoder reports a
// gap where the trace runs through them); the image holds the rest. The
// vDSO, when no copy of it is found, is this machine's (ReadVDSOFor: the
// 64-bit or the 32-bit one) when its build-id is the traced one (the same
// kernel: decoding where the trace was recorded); its path is then
// VDSOName.
func (p *Process) LoadImage(fd *symtab.Finder) (im *Image, unfound []Unfound, paths map[string]string) {
	im = NewImage()
	paths = map[string]string{}
	any := ASID{AnyASID, AnyASID}
	for _, m := range p.Mappings {
		path, err := fd.Find(m.File, m.BuildID)
		if err != nil && m.File == VDSOName && len(m.BuildID) > 0 {
			if img, verr := ReadVDSOFor(m.BuildID); verr == nil && m.PgOff < uint64(len(img)) {
				data := img[m.PgOff:]
				if uint64(len(data)) > m.End-m.Start {
					data = data[:m.End-m.Start]
				}
				if _, err = im.Add(data, m.Start, any, m.File); err == nil {
					paths[m.File] = VDSOName
					continue
				}
			}
		}
		if err == nil {
			var data []byte
			if data, err = readAt(path, m.PgOff, m.End-m.Start); err == nil {
				if _, err = im.Add(data, m.Start, any, m.File); err == nil {
					paths[m.File] = path
					continue
				}
			}
		}
		unfound = append(unfound, Unfound{m, err})
	}
	return im, unfound, paths
}

// readAt reads up to n bytes of file at off (less at the end of the file:
// the rest of a mapping past the end of its file is not code).
func readAt(path string, off, n uint64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := uint64(st.Size())
	if off >= size {
		return nil, fmt.Errorf("intelpt: %s: mapping offset %#x is past the end of the file (%d bytes)", path, off, size)
	}
	if off+n > size || off+n < off {
		n = size - off
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, int64(off)); err != nil {
		return nil, fmt.Errorf("intelpt: %s: %w", path, err)
	}
	return b, nil
}

// BinariesDir is the directory of a capture directory that holds copies
// of the mapped files (`iotap pt capture --copy-binaries`), laid out as
// perf's build-id cache: binaries/.build-id/xx/rest.
const BinariesDir = "binaries"
