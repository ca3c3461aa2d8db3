package intelpt

import (
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/iotap/iotap/intelpt/symtab"
	"github.com/iotap/iotap/internal/outfile"
)

// MappedFilesName is the file of a capture directory that lists the files
// the traced code was mapped from (written by `iotap pt capture`).
const MappedFilesName = "mapped_files.json"

// MappedFile is a file that executable mappings of the sideband name,
// with its GNU build-id read at capture time, and where a copy of it was
// put (--copy-binaries), relative to the capture directory.
type MappedFile struct {
	Path    string `json:"path"`
	BuildID string `json:"build_id,omitempty"` // lower-case hex
	Size    int64  `json:"size,omitempty"`
	Copy    string `json:"copy,omitempty"`
	Error   string `json:"error,omitempty"` // why it could not be read or copied
}

// MappedFiles lists the distinct files of the executable mappings of the
// sideband (not [vsyscall] or anonymous memory) with the build-id of each
// as found at path on this machine; the vDSO ([vdso]) with the build-id of
// this process's vDSO (ReadVDSO: the same kernel maps the same one), that
// of 32-bit processes as [vdso32] (perf's name) with the build-id of
// ReadVDSO32.
func MappedFiles(sb *Sideband) []MappedFile {
	seen := map[string]bool{}
	var out []MappedFile
	for i := range sb.Records {
		r := &sb.Records[i]
		if r.Type != PerfRecordMmap && r.Type != PerfRecordMmap2 {
			continue
		}
		key := r.Filename // the vDSO of 32-bit processes is another file
		vdso32 := IsVDSO32(&Mapping{File: r.Filename, Start: r.Addr, End: r.Addr + r.Len})
		if vdso32 {
			key = VDSO32Name
		}
		if !r.Executable() || seen[key] {
			continue
		}
		seen[key] = true
		if r.Filename == VDSOName && r.PID != -1 {
			mf := MappedFile{Path: VDSOName}
			read := ReadVDSO
			if vdso32 {
				mf.Path, read = VDSO32Name, ReadVDSO32
			}
			if img, id, err := read(); err != nil {
				mf.Error = err.Error()
			} else {
				mf.BuildID, mf.Size = hex.EncodeToString(id), int64(len(img))
			}
			if r.BuildID != nil && mf.BuildID != "" && r.BuildIDHex() != mf.BuildID {
				mf.Error = fmt.Sprintf("this process's vDSO has build-id %s, not the traced one %s", mf.BuildID, r.BuildIDHex())
			}
			out = append(out, mf)
			continue
		}
		if !strings.HasPrefix(r.Filename, "/") {
			continue
		}
		mf := MappedFile{Path: r.Filename}
		if st, err := os.Stat(r.Filename); err != nil {
			mf.Error = err.Error()
		} else {
			mf.Size = st.Size()
			if f, err := elf.Open(r.Filename); err != nil {
				mf.Error = err.Error()
			} else {
				mf.BuildID = hex.EncodeToString(symtab.BuildID(f))
				f.Close()
			}
		}
		if r.BuildID != nil && mf.BuildID != "" && r.BuildIDHex() != mf.BuildID {
			mf.Error = fmt.Sprintf("the file's build-id %s is not the traced one %s (replaced since)", mf.BuildID, r.BuildIDHex())
		}
		out = append(out, mf)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// CopyBinaries copies each mapped file with a build-id into dir's
// binaries/.build-id/xx/rest (perf's build-id cache layout, which `iotap
// pt calls` searches first), and records the copy (or the error) in
// files. Files are created 0600 and never overwritten. The vDSO is
// written from this process's (see CopyVDSO).
func CopyBinaries(dir string, files []MappedFile) error {
	return copyBinaries(dir, files, false)
}

// CopyVDSO writes the vDSO of files (when traced code ran from it) into
// dir's binaries/.build-id/xx/rest from this process's vDSO (ReadVDSO),
// when its build-id is the listed one, and records the copy in files.
// `iotap pt capture` always does (the vDSO is small and belongs to the
// kernel that ran the trace: nowhere else to find it later).
func CopyVDSO(dir string, files []MappedFile) error {
	return copyBinaries(dir, files, true)
}

func copyBinaries(dir string, files []MappedFile, vdsoOnly bool) error {
	for i := range files {
		f := &files[i]
		isVDSO := f.Path == VDSOName || f.Path == VDSO32Name
		if f.BuildID == "" || len(f.BuildID) < 3 || f.Error != "" || (vdsoOnly && !isVDSO) {
			continue
		}
		rel := filepath.Join(BinariesDir, ".build-id", f.BuildID[:2], f.BuildID[2:])
		dst := filepath.Join(dir, rel)
		if _, err := os.Lstat(dst); err == nil {
			f.Copy = rel // same build-id: the same file
			continue
		}
		if isVDSO {
			if err := writeVDSO(dst, f.BuildID); err != nil {
				f.Error = err.Error()
				continue
			}
			f.Copy = rel
			continue
		}
		if err := copyFile(f.Path, dst); err != nil {
			f.Error = err.Error()
			continue
		}
		f.Copy = rel
	}
	return nil
}

func writeVDSO(dst, buildID string) error {
	id, err := hex.DecodeString(buildID)
	if err != nil {
		return fmt.Errorf("intelpt: vdso: build-id %q: %w", buildID, err)
	}
	img, err := ReadVDSOFor(id)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	return outfile.WriteFile(dst, img, outfile.Options{Mode: outfile.Exclusive})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	out, err := outfile.Create(dst, outfile.Options{Mode: outfile.Exclusive})
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Abort()
		return err
	}
	return out.Commit()
}

// WriteMappedFiles writes the list to dir/mapped_files.json (0600).
func WriteMappedFiles(dir string, files []MappedFile) error {
	b, err := json.MarshalIndent(files, "", "  ")
	if err != nil {
		return err
	}
	return outfile.WriteFile(filepath.Join(dir, MappedFilesName), append(b, '\n'), outfile.Options{})
}

// ReadMappedFiles reads dir/mapped_files.json (nil, nil when absent).
func ReadMappedFiles(dir string) ([]MappedFile, error) {
	b, err := os.ReadFile(filepath.Join(dir, MappedFilesName))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var files []MappedFile
	if err := json.Unmarshal(b, &files); err != nil {
		return nil, fmt.Errorf("intelpt: %s: %w", MappedFilesName, err)
	}
	return files, nil
}

// BuildIDTable turns the list into build-id table entries (as perf's), so
// that the address spaces' mappings carry the build-ids of capture time.
func BuildIDTable(files []MappedFile) []PerfBuildID {
	var out []PerfBuildID
	for _, f := range files {
		id, err := hex.DecodeString(f.BuildID)
		if err != nil || len(id) == 0 {
			continue
		}
		out = append(out, PerfBuildID{PID: -1, CPUMode: PerfMiscUser, BuildID: id, Filename: f.Path})
	}
	return out
}
