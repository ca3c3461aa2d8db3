//go:build linux

package usbmon

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time (user+system) this process has used: on a
// shared machine wall-clock rates understate what one core does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchInput repeats a lab sample until it holds at least n bytes.
func benchInput(b *testing.B, name string, n int) []byte {
	one, err := os.ReadFile(labFile(name))
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	for buf.Len() < n {
		buf.Write(one)
	}
	return buf.Bytes()
}

func benchRead(b *testing.B, in []byte) {
	var ev Event
	events := 0
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		r, _, err := NewReader(bytes.NewReader(in))
		if err != nil {
			b.Fatal(err)
		}
		for {
			err := r.ReadInto(&ev)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			events++
		}
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(events)/(cpuTime()-cpu0).Seconds(), "events/cpu-s")
}

// BenchmarkTextParse: the kernel's 0u text of the lab (storage, HID,
// enumeration), 4 MB.
func BenchmarkTextParse(b *testing.B) { benchRead(b, benchInput(b, "lab-0u.txt", 4<<20)) }

// BenchmarkPcapngRead: iotap's lab capture, 8 MB.
func BenchmarkPcapngRead(b *testing.B) {
	one, err := os.ReadFile(labFile("lab-capture.pcapng"))
	if err != nil {
		b.Fatal(err)
	}
	evs := readAll(&testing.T{}, labFile("lab-capture.pcapng"))
	_ = one
	var buf bytes.Buffer
	w, _ := NewPcapngWriter(&buf, LinkTypeUSBLinuxMmapped)
	for buf.Len() < 8<<20 {
		for _, ev := range evs {
			w.Write(ev)
		}
		w.Flush()
	}
	benchRead(b, buf.Bytes())
}

// BenchmarkPcapRead: the same as classic pcap.
func BenchmarkPcapRead(b *testing.B) {
	evs := readAll(&testing.T{}, labFile("lab-capture.pcapng"))
	var buf bytes.Buffer
	w, _ := NewPcapWriter(&buf, LinkTypeUSBLinuxMmapped)
	for buf.Len() < 8<<20 {
		for _, ev := range evs {
			w.Write(ev)
		}
		w.Flush()
	}
	benchRead(b, buf.Bytes())
}

// BenchmarkTextWrite: writing 1u lines.
func BenchmarkTextWrite(b *testing.B) {
	evs := readAll(&testing.T{}, labFile("lab-0u.txt"))
	w := NewTextWriter(io.Discard, Format1u)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.Write(evs[i%len(evs)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkDecodeHeader: one 64-byte header.
func BenchmarkDecodeHeader(b *testing.B) {
	h := kernelHeader64(binary.LittleEndian)
	var ev Event
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		DecodeHeader(h, 64, binary.LittleEndian, &ev)
	}
}
