// Command cutgen writes a large pcapng for bench/cut.sh: the packets of a
// sample usbmon pcapng (little-endian, one section) repeated with new
// timestamps, evenly spaced so that the capture spans -seconds, until the
// file holds -size bytes; an interface statistics block with a growing
// isb_ifdrop every 64 MiB.
//
//	go run ./bench/cutgen -in testdata/usbmon/lab-capture.pcapng -size 2G -seconds 200 -o /tmp/x/big.pcapng
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

func main() {
	in := flag.String("in", "testdata/usbmon/lab-capture.pcapng", "sample pcapng (little-endian)")
	out := flag.String("o", "", "output file")
	size := flag.String("size", "2G", "output size (K, M, G suffixes)")
	seconds := flag.Float64("seconds", 200, "time the capture spans")
	flag.Parse()
	if err := run(*in, *out, *size, *seconds); err != nil {
		fmt.Fprintln(os.Stderr, "cutgen:", err)
		os.Exit(1)
	}
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mult, err
}

func run(in, out, sizeS string, seconds float64) error {
	size, err := parseSize(sizeS)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	var head, pkts [][]byte
	unitsPerSec := 1e6 // if_tsresol (default µs)
	var pktBytes int64
	for off := 0; off+12 <= len(data); {
		typ, n := le.Uint32(data[off:]), int(le.Uint32(data[off+4:]))
		if n < 12 || off+n > len(data) {
			return fmt.Errorf("%s: bad block at %d", in, off)
		}
		blk := data[off : off+n]
		switch typ {
		case 0x0a0d0d0a:
			if le.Uint32(blk[8:]) != 0x1a2b3c4d {
				return fmt.Errorf("%s: not little-endian", in)
			}
			if len(head) > 0 {
				off = len(data) // first section only
				continue
			}
			head = append(head, blk)
		case 1:
			head = append(head, blk)
			for o := blk[16 : len(blk)-4]; len(o) >= 4; {
				code, l := le.Uint16(o), int(le.Uint16(o[2:]))
				if code == 0 || 4+l > len(o) {
					break
				}
				if code == 9 && l >= 1 && o[4] < 0x80 {
					unitsPerSec = 1
					for i := 0; i < int(o[4]); i++ {
						unitsPerSec *= 10
					}
				}
				o = o[4+(l+3)&^3:]
			}
		case 6:
			pkts = append(pkts, blk)
			pktBytes += int64(n)
		}
		off += n
	}
	if len(pkts) == 0 {
		return fmt.Errorf("%s: no packets", in)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var written int64
	for _, b := range head {
		w.Write(b)
		written += int64(len(b))
	}
	total := (size - written) / (pktBytes / int64(len(pkts)))
	dt := seconds * unitsPerSec / float64(total) // timestamp units per packet
	t0 := uint64(1_795_000_000 * unitsPerSec)
	buf := make([]byte, 0, 1<<16)
	var k, drops uint64
	nextISB := int64(64 << 20)
	for written < size {
		for _, p := range pkts {
			if written >= size {
				break
			}
			ts := t0 + uint64(float64(k)*dt)
			buf = append(buf[:0], p...)
			le.PutUint32(buf[12:], uint32(ts>>32))
			le.PutUint32(buf[16:], uint32(ts))
			w.Write(buf)
			written += int64(len(buf))
			k++
			if written >= nextISB {
				drops += 7
				written += writeISB(w, ts, drops)
				nextISB += 64 << 20
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Printf("%s: %d bytes, %d packets over %.0f s\n", out, written, k, seconds)
	return f.Close()
}

// writeISB writes an interface statistics block for interface 0 with
// isb_ifdrop = drops.
func writeISB(w *bufio.Writer, ts uint64, drops uint64) int64 {
	le := binary.LittleEndian
	b := make([]byte, 0, 48)
	b = le.AppendUint32(b, 5)
	b = le.AppendUint32(b, 0) // length, below
	b = le.AppendUint32(b, 0)
	b = le.AppendUint32(b, uint32(ts>>32))
	b = le.AppendUint32(b, uint32(ts))
	b = le.AppendUint16(b, 5) // isb_ifdrop
	b = le.AppendUint16(b, 8)
	b = le.AppendUint64(b, drops)
	b = le.AppendUint32(b, 0) // opt_endofopt
	b = le.AppendUint32(b, 0) // trailing length
	le.PutUint32(b[4:], uint32(len(b)))
	le.PutUint32(b[len(b)-4:], uint32(len(b)))
	w.Write(b)
	return int64(len(b))
}
