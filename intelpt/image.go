package intelpt

import (
	"debug/elf"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// ASID identifies an address space: CR3 and VMCS base as PT reports them
// (PIP and VMCS packets). ASIDAny matches every address space.
type ASID struct {
	CR3, VMCS uint64
}

// AnyASID is the wildcard address space (a section visible everywhere).
const AnyASID = ^uint64(0)

func (a ASID) matches(b ASID) bool {
	return (a.CR3 == AnyASID || b.CR3 == AnyASID || a.CR3 == b.CR3) &&
		(a.VMCS == AnyASID || b.VMCS == AnyASID || a.VMCS == b.VMCS)
}

// Section is a piece of memory of an Image: Data mapped at Addr in the
// address space ASID. Sections are identified by an ID (1, 2, ...).
type Section struct {
	ID   int
	Addr uint64
	Data []byte
	ASID ASID
	Name string // file name or caller's label, for messages

	// decode caches, filled lazily by the flow decoders (one entry per
	// byte of Data; see insnCache and blockCache)
	insns  []insnEntry
	blocks []blockEntry // see blockcache.go
}

// End returns the first address after the section.
func (s *Section) End() uint64 { return s.Addr + uint64(len(s.Data)) }

// Image is the memory that traced code ran from: a set of sections. When
// sections overlap, the one added last wins for the overlapping bytes
// (the older one is cut, like libipt's pt_image_add). Do not add sections
// while a decoder uses the image (decoders keep the last section they used
// and fill decode caches in the sections); an image may be shared by
// decoders that run one after the other, not at the same time.
type Image struct {
	secs   []*Section // sorted by Addr, no overlaps within the same ASID
	nextID int
}

// NewImage returns an empty image.
func NewImage() *Image { return &Image{} }

// Sections returns the image's sections in address order.
func (im *Image) Sections() []*Section { return im.secs }

// Add maps data at addr for address space asid (use ASID{AnyASID, AnyASID}
// for code visible in every address space) and returns the new section. The
// image keeps data; do not modify it afterwards.
func (im *Image) Add(data []byte, addr uint64, asid ASID, name string) (*Section, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("intelpt: image: %s: empty section", name)
	}
	end := addr + uint64(len(data))
	if end < addr {
		return nil, fmt.Errorf("intelpt: image: %s: section at %#x wraps the address space", name, addr)
	}
	im.nextID++
	ns := &Section{ID: im.nextID, Addr: addr, Data: data, ASID: asid, Name: name}
	var out []*Section
	for _, s := range im.secs {
		if !s.ASID.matches(asid) || s.End() <= addr || end <= s.Addr {
			out = append(out, s)
			continue
		}
		// cut s around [addr, end)
		if s.Addr < addr {
			out = append(out, &Section{ID: s.ID, Addr: s.Addr, Data: s.Data[:addr-s.Addr], ASID: s.ASID, Name: s.Name})
		}
		if end < s.End() {
			out = append(out, &Section{ID: s.ID, Addr: end, Data: s.Data[end-s.Addr:], ASID: s.ASID, Name: s.Name})
		}
	}
	out = append(out, ns)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	im.secs = out
	return ns, nil
}

// find returns the section holding ip in asid, or nil.
func (im *Image) find(ip uint64, asid ASID) *Section {
	secs := im.secs
	i := sort.Search(len(secs), func(i int) bool { return secs[i].End() > ip })
	for ; i < len(secs); i++ {
		s := secs[i]
		if s.Addr > ip {
			return nil
		}
		if s.ASID.matches(asid) {
			return s
		}
	}
	return nil
}

// Read copies memory at ip in asid into buf, across adjacent sections,
// and returns the number of bytes read (0 when nothing is mapped at ip).
func (im *Image) Read(buf []byte, ip uint64, asid ASID) int {
	n := 0
	for n < len(buf) {
		s := im.find(ip+uint64(n), asid)
		if s == nil {
			break
		}
		n += copy(buf[n:], s.Data[ip+uint64(n)-s.Addr:])
	}
	return n
}

// AddRaw maps a raw file like ptxed's --raw: spec is
// "file[:offset[-end]]:address" (numbers in C notation: 0x hex, 0 octal).
func (im *Image) AddRaw(spec string) (*Section, error) {
	i := strings.LastIndexByte(spec, ':')
	if i < 0 || i == len(spec)-1 {
		return nil, fmt.Errorf("intelpt: --raw %q: want file[:offset[-end]]:address", spec)
	}
	addr, err := strconv.ParseUint(spec[i+1:], 0, 64)
	if err != nil {
		return nil, fmt.Errorf("intelpt: --raw %q: bad address", spec)
	}
	file, off, size, err := SplitFileRange(spec[:i])
	if err != nil {
		return nil, fmt.Errorf("intelpt: --raw %q: %v", spec, err)
	}
	data, err := ReadFileRange(file, off, size)
	if err != nil {
		return nil, err
	}
	return im.Add(data, addr, ASID{AnyASID, AnyASID}, file)
}

// SplitFileRange parses "file[:begin[-end]]" like ptxed (size 0: to the end); a suffix that is not a
// range is part of the file name.
func SplitFileRange(s string) (file string, off, size uint64, err error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, 0, 0, nil
	}
	r := s[i+1:]
	b, e, hasEnd := r, "", false
	if j := strings.IndexByte(r, '-'); j >= 0 {
		b, e, hasEnd = r[:j], r[j+1:], true
	}
	begin, err1 := strconv.ParseUint(b, 0, 64)
	if err1 != nil || b == "" {
		return s, 0, 0, nil
	}
	if !hasEnd {
		return s[:i], begin, 0, nil
	}
	end, err2 := strconv.ParseUint(e, 0, 64)
	if err2 != nil || end <= begin {
		return "", 0, 0, fmt.Errorf("bad range %q", r)
	}
	return s[:i], begin, end - begin, nil
}

// ReadFileRange reads size bytes of file from off (size 0: to the end).
func ReadFileRange(file string, off, size uint64) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("intelpt: %v", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("intelpt: %v", err)
	}
	fsize := uint64(st.Size())
	if off >= fsize {
		return nil, fmt.Errorf("intelpt: bad offset %#x into %s", off, file)
	}
	end := fsize
	if size != 0 {
		if off+size > fsize {
			return nil, fmt.Errorf("intelpt: bad range %#x in %s", off+size, file)
		}
		end = off + size
	}
	buf := make([]byte, end-off)
	if _, err := f.ReadAt(buf, int64(off)); err != nil && err != io.EOF {
		return nil, fmt.Errorf("intelpt: %s: %v", file, err)
	}
	return buf, nil
}

// AddELF maps the loadable segments of an ELF file like ptxed's --elf:
// spec is "file[:base]"; with a base, the segments are moved so that the
// lowest one starts at base (as ptxed does). It returns the sections added.
func (im *Image) AddELF(spec string) ([]*Section, error) {
	file, base, hasBase := spec, uint64(0), false
	if i := strings.LastIndexByte(spec, ':'); i >= 0 && i < len(spec)-1 {
		if v, err := strconv.ParseUint(spec[i+1:], 0, 64); err == nil {
			// like ptxed, a base of 0 means "where the file says"
			file, base, hasBase = spec[:i], v, v != 0
		}
	}
	f, err := elf.Open(file)
	if err != nil {
		return nil, fmt.Errorf("intelpt: --elf %s: %v", file, err)
	}
	defer f.Close()
	minAddr := ^uint64(0)
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Vaddr < minAddr {
			minAddr = p.Vaddr
		}
	}
	var out []*Section
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || p.Filesz == 0 {
			continue
		}
		data := make([]byte, p.Filesz)
		if _, err := p.ReadAt(data, 0); err != nil && err != io.EOF {
			return nil, fmt.Errorf("intelpt: --elf %s: %v", file, err)
		}
		addr := p.Vaddr
		if hasBase {
			addr = addr - minAddr + base
		}
		s, err := im.Add(data, addr, ASID{AnyASID, AnyASID}, file)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("intelpt: --elf %s: no loadable segments", file)
	}
	return out, nil
}

// NextIP returns the address of the instruction after the one at ip (in
// mode and address space asid) when it does not depend on the trace: the
// next instruction, or the target of a direct jump or call. It is how the
// instructions of a Block are listed: from Block.IP, NInsn-1 times. ok is
// false when the bytes at ip do not decode or the instruction needs the
// trace (conditional, indirect and far branches, returns).
func (im *Image) NextIP(ip uint64, mode ExecMode, asid ASID) (next uint64, ok bool) {
	var buf [maxInsnSize]byte
	n := im.Read(buf[:], ip, asid)
	var e insnEntry
	if n == 0 || classify(buf[:n], mode, &e) < 0 {
		return 0, false
	}
	x := insn{ip: ip, insnEntry: e}
	next, st := x.nextIP()
	return next, st == 0
}

// NewImageFiles returns the image of ptxed's --raw and --elf options:
// each raw FILE[:OFFSET[-END]]:ADDRESS (AddRaw), then each ELF
// FILE[:BASE] (AddELF); later files win where they overlap.
func NewImageFiles(raw, elf []string) (*Image, error) {
	im := NewImage()
	for _, r := range raw {
		if _, err := im.AddRaw(r); err != nil {
			return nil, err
		}
	}
	for _, s := range elf {
		if _, err := im.AddELF(s); err != nil {
			return nil, err
		}
	}
	return im, nil
}
