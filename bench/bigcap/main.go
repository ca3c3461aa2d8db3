// Command bigcap makes large captures for the benchmarks from small real
// ones: an mmiotrace log whose timed records are repeated, each copy
// shifted after the previous, or a usbmon pcapng (link type 220) written
// again and again, each copy shifted after the previous in both the
// pcapng timestamps and the usbmon headers' own (what usbmon readers use).
//
//	bigcap -mmio SRC.log -size BYTES -o OUT.log
//	bigcap -pcapng SRC.pcapng -size BYTES -o OUT.pcapng
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

func main() {
	mmio := flag.String("mmio", "", "mmiotrace log to repeat")
	pcapng := flag.String("pcapng", "", "usbmon pcapng to repeat")
	size := flag.Int64("size", 1e9, "stop after this many bytes")
	out := flag.String("o", "", "output file")
	flag.Parse()
	var err error
	switch {
	case *out == "":
		err = fmt.Errorf("-o is required")
	case *mmio != "":
		err = genMMIO(*mmio, *size, *out)
	case *pcapng != "":
		err = genPcapng(*pcapng, *size, *out)
	default:
		err = fmt.Errorf("-mmio or -pcapng is required")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bigcap:", err)
		os.Exit(1)
	}
}

func parseNS(s string) int64 {
	sec, frac, _ := strings.Cut(s, ".")
	n, _ := strconv.ParseInt(sec, 10, 64)
	f, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
	return n*1e9 + f
}

func genMMIO(src string, size int64, out string) error {
	in, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var body [][]string
	var total int64
	for _, l := range strings.Split(strings.TrimRight(string(in), "\n"), "\n") {
		fs := strings.Fields(l)
		if len(fs) == 0 {
			continue
		}
		switch fs[0] {
		case "R", "W", "MAP", "UNMAP", "MARK", "UNKNOWN":
			body = append(body, fs)
		default:
			n, _ := fmt.Fprintln(w, l)
			total += int64(n)
		}
	}
	if len(body) == 0 {
		return fmt.Errorf("%s: no timed records", src)
	}
	tf := func(f []string) int {
		if f[0] == "R" || f[0] == "W" {
			return 2
		}
		return 1
	}
	first := parseNS(body[0][tf(body[0])])
	span := parseNS(body[len(body)-1][tf(body[len(body)-1])]) - first + 1e6
	for c := int64(0); total < size; c++ {
		for _, fs := range body {
			ns := parseNS(fs[tf(fs)]) + c*span
			g := append([]string(nil), fs...)
			g[tf(fs)] = fmt.Sprintf("%d.%06d", ns/1e9, ns%1e9/1e3)
			n, _ := fmt.Fprintln(w, strings.Join(g, " "))
			total += int64(n)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

func genPcapng(src string, size int64, out string) error {
	in, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	cw := &counter{w: bw}
	w, err := pcapgo.NewNgWriter(cw, layers.LinkType(220))
	if err != nil {
		return err
	}
	var shift time.Duration
	for cw.n < size {
		r, err := pcapgo.NewNgReader(bytes.NewReader(in), pcapgo.DefaultNgReaderOptions)
		if err != nil {
			return err
		}
		if r.LinkType() != 220 {
			return fmt.Errorf("%s: link type %d, want 220 (usbmon with the mmapped header)", src, r.LinkType())
		}
		var last time.Time
		var firstTS time.Time
		for {
			data, ci, err := r.ReadPacketData()
			if err != nil {
				break
			}
			if len(data) < 28 {
				continue
			}
			if firstTS.IsZero() {
				firstTS = ci.Timestamp
			}
			pkt := append([]byte(nil), data...)
			sec := int64(binary.LittleEndian.Uint64(pkt[16:])) + int64(shift/time.Second)
			binary.LittleEndian.PutUint64(pkt[16:], uint64(sec))
			last = ci.Timestamp
			ci.Timestamp = ci.Timestamp.Add(shift)
			ci.InterfaceIndex = 0
			if err := w.WritePacket(ci, pkt); err != nil {
				return err
			}
		}
		// the next copy starts a whole second after this one ends
		shift = last.Sub(firstTS).Truncate(time.Second) + shift + 2*time.Second
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}

type counter struct {
	w interface{ Write([]byte) (int, error) }
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
