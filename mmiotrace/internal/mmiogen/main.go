// Command mmiogen writes a large synthetic mmiotrace log for benchmarks
// (bench/mmio.sh). Its shape follows a real e1000 probe capture: VERSION,
// PCIDEV lines, a MAP of the NIC's BAR0 and of a second device, then
// mostly 32-bit reads and writes of a few dozen registers with polling
// loops, some 8/16-bit accesses, markers and UNMAPs/re-MAPs.
//
//	go run ./mmiotrace/internal/mmiogen -size 1073741824 -o big.log
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand"
	"os"

	"github.com/iotap/iotap/internal/outfile"
	"strconv"
)

func main() {
	size := flag.Int64("size", 1<<30, "approximate output size in bytes")
	out := flag.String("o", "", "output file")
	seed := flag.Int64("seed", 1, "random seed")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "mmiogen: -o FILE required")
		os.Exit(2)
	}
	f, err := outfile.Create(*out, outfile.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "mmiogen:", err)
		os.Exit(1)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n, err := gen(w, *size, *seed)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Commit()
	} else {
		f.Abort()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mmiogen:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "mmiogen: wrote %d bytes to %s\n", n, *out)
}

const header = `VERSION 20070824
PCIDEV 0000 80861237 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 
PCIDEV 0008 80867000 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 
PCIDEV 0009 80867010 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 
PCIDEV 0010 12341111 0 fd000008 0 febf0000 0 0 0 febe0000 1000000 0 1000 0 0 0 10000 bochs-drm
PCIDEV 0018 8086100e b febc0000 c041 0 0 0 0 feb80002 20000 40 0 0 0 0 40000 e1000
PCIDEV 0020 1b36000d a febf1000 0 0 0 0 0 0 4000 0 0 0 0 0 0 xhci_hcd
`

// e1000-like register offsets with their relative frequency.
var regs = []uint64{0x0, 0x8, 0x8, 0x8, 0x8, 0x10, 0x14, 0x18, 0xc0, 0xc8, 0xd0, 0xd8, 0xd8, 0x100, 0x400,
	0x2800, 0x2808, 0x2810, 0x2818, 0x3800, 0x3808, 0x3810, 0x3818, 0x5200, 0x5400, 0x5404, 0x5600, 0xe00, 0x38, 0x20}

func gen(w *bufio.Writer, size int64, seed int64) (int64, error) {
	rnd := rand.New(rand.NewSource(seed))
	n, _ := w.WriteString(header)
	written := int64(n)
	ts := uint64(2_000_000) // microseconds
	buf := make([]byte, 0, 256)
	mapID := 1
	stamp := func(b []byte) []byte {
		b = strconv.AppendUint(b, ts/1e6, 10)
		b = append(b, '.')
		us := ts % 1e6
		for d := uint64(100000); d > 0; d /= 10 {
			b = append(b, byte('0'+us/d%10))
		}
		return b
	}
	emitMap := func() {
		buf = append(buf[:0], "MAP "...)
		buf = stamp(buf)
		virt := 0xffffc90000000000 + uint64(mapID%4096)*0x100000
		buf = fmt.Appendf(buf, " %d 0xfebc0000 0x%x 0x20000 0x0 0\n", mapID, virt)
		buf = append(buf, "MAP "...)
		buf = stamp(buf)
		buf = fmt.Appendf(buf, " %d 0xfebf1000 0x%x 0x4000 0x0 0\n", mapID+1, virt+0x80000)
		n, _ := w.Write(buf)
		written += int64(n)
	}
	emitMap()
	for written < size {
		ts += uint64(1 + rnd.Intn(20))
		buf = buf[:0]
		switch x := rnd.Intn(100000); {
		case x < 20:
			buf = append(buf, "MARK "...)
			buf = stamp(buf)
			buf = fmt.Appendf(buf, " phase %d\n", rnd.Intn(1000))
		case x < 22:
			buf = append(buf, "UNMAP "...)
			buf = stamp(buf)
			buf = fmt.Appendf(buf, " %d 0x0 0\nUNMAP ", mapID)
			buf = stamp(buf)
			buf = fmt.Appendf(buf, " %d 0x0 0\n", mapID+1)
			w.Write(buf)
			written += int64(len(buf))
			mapID += 2
			emitMap()
			continue
		case x < 1500: // polling loop on STATUS
			loops := 5 + rnd.Intn(200)
			for i := 0; i < loops && written < size; i++ {
				buf = append(buf[:0], "R 4 "...)
				buf = stamp(buf)
				buf = fmt.Appendf(buf, " %d 0xfebc0008 0x%x 0xffffffff8193%04x 0\n", mapID, 0x80080783&^uint64(8)|uint64(8*(i/(loops-1))), 0x1000+rnd.Intn(16))
				w.Write(buf)
				written += int64(len(buf))
				ts += 3
			}
			continue
		default:
			id, base := mapID, uint64(0xfebc0000)
			var off uint64
			if rnd.Intn(8) == 0 {
				id, base, off = mapID+1, 0xfebf1000, uint64(rnd.Intn(0x1000))&^3
			} else {
				off = regs[rnd.Intn(len(regs))]
			}
			width := 4
			switch rnd.Intn(40) {
			case 0:
				width = 1
			case 1:
				width = 2
			case 2:
				width = 8
			}
			off &^= uint64(width - 1)
			kind := byte('R')
			if rnd.Intn(10) < 3 {
				kind = 'W'
			}
			var val uint64
			switch rnd.Intn(4) {
			case 0:
				val = uint64(rnd.Intn(16))
			case 1:
				val = 0xffffffff
			default:
				val = rnd.Uint64()
			}
			if width < 8 {
				val &= 1<<(8*width) - 1
			}
			buf = append(buf, kind, ' ', byte('0'+width), ' ')
			buf = stamp(buf)
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, int64(id), 10)
			buf = append(buf, " 0x"...)
			buf = strconv.AppendUint(buf, base+off, 16)
			buf = append(buf, " 0x"...)
			buf = strconv.AppendUint(buf, val, 16)
			buf = append(buf, " 0xffffffff81"...)
			buf = strconv.AppendUint(buf, 0x900000+uint64(rnd.Intn(0x10000)), 16)
			buf = append(buf, " 0\n"...)
		}
		n, err := w.Write(buf)
		written += int64(n)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}
