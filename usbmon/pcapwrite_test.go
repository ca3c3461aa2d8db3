package usbmon

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// labEvents reads the events of the lab capture (storage, HID,
// enumeration), every third one marked synthesized.
func labEvents(t *testing.T) []*Event {
	t.Helper()
	f, err := os.Open("../testdata/usbmon/lab-capture.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, _, err := NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var evs []*Event
	for {
		ev, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ev.Synthesized = len(evs)%3 == 0
		evs = append(evs, ev)
	}
	if len(evs) < 100 {
		t.Fatalf("only %d events", len(evs))
	}
	return evs
}

func pcapgoInfo(ri recInfo) gopacket.CaptureInfo {
	return gopacket.CaptureInfo{Timestamp: time.Unix(ri.sec, ri.usec*1000), CaptureLength: ri.capLen, Length: ri.origLen}
}

// TestPcapWritersMatchPcapgo: the pcap and pcapng writers write the bytes
// gopacket's pcapgo writes for the same records (the independent
// implementation they replace), for both link types, with statistics
// blocks, packet comments and records given as kernel bytes.
func TestPcapWritersMatchPcapgo(t *testing.T) {
	evs := labEvents(t)
	stamp := time.Unix(1700000000, 123456789)
	for _, lt := range []int{LinkTypeUSBLinux, LinkTypeUSBLinuxMmapped} {
		hl := headerLenOf(lt)
		// pcap
		var got, want bytes.Buffer
		pw, err := NewPcapWriter(&got, lt)
		if err != nil {
			t.Fatal(err)
		}
		ow := pcapgo.NewWriter(&want)
		if err := ow.WriteFileHeader(snapLen, layers.LinkType(lt)); err != nil {
			t.Fatal(err)
		}
		var buf []byte
		var loss Loss
		for i, ev := range evs {
			ri, data := recordOf(ev, hl, &buf, &loss)
			if i%2 == 0 {
				err = pw.Write(ev)
			} else {
				err = pw.WriteRecord(ev, data)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := ow.WritePacket(pcapgoInfo(ri), data); err != nil {
				t.Fatal(err)
			}
		}
		if err := pw.Flush(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("link type %d: pcap differs from pcapgo's (%d bytes, want %d)", lt, got.Len(), want.Len())
		}

		// pcapng
		got.Reset()
		want.Reset()
		nw, err := NewPcapngWriter(&got, lt)
		if err != nil {
			t.Fatal(err)
		}
		intf := pcapgo.DefaultNgInterface
		intf.LinkType, intf.Name, intf.SnapLength = layers.LinkType(lt), "usbmon0", snapLen
		opt := pcapgo.DefaultNgWriterOptions
		opt.SectionInfo.Application = "iotap"
		onw, err := pcapgo.NewNgWriterInterface(&want, intf, opt)
		if err != nil {
			t.Fatal(err)
		}
		var n uint64
		for i, ev := range evs {
			ri, data := recordOf(ev, hl, &buf, &loss)
			n++
			if i%2 == 0 {
				err = nw.Write(ev)
				if ev.Synthesized {
					err = onw.WritePacketWithOptions(pcapgoInfo(ri), data, pcapgo.NgPacketOptions{Comments: []string{SynthesizedComment}})
				} else if err == nil {
					err = onw.WritePacket(pcapgoInfo(ri), data)
				}
			} else {
				err = nw.WriteRecord(ev, data)
				if err == nil {
					err = onw.WritePacket(pcapgoInfo(ri), data)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if i%50 == 0 {
				for _, st := range []time.Time{stamp, {}} {
					if err := nw.WriteStats(st, uint64(i)); err != nil {
						t.Fatal(err)
					}
					if err := onw.WriteInterfaceStats(0, pcapgo.NgInterfaceStatistics{LastUpdate: st, PacketsReceived: n, PacketsDropped: uint64(i)}); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		if err := nw.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := onw.Flush(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			g, w := got.Bytes(), want.Bytes()
			i := 0
			for i < len(g) && i < len(w) && g[i] == w[i] {
				i++
			}
			t.Fatalf("link type %d: pcapng differs from pcapgo's at byte %d (%d bytes, want %d)", lt, i, len(g), len(w))
		}
		// And it reads back: every event, the drops of the last statistics.
		r, _, err := NewReader(bytes.NewReader(got.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		var ev Event
		k := 0
		for ; ; k++ {
			if err := r.ReadInto(&ev); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			if ev.Synthesized != evs[k].Synthesized && k%2 == 0 {
				t.Fatalf("event %d: synthesized %v", k, ev.Synthesized)
			}
		}
		if k != len(evs) {
			t.Fatalf("read %d events back, wrote %d", k, len(evs))
		}
	}
}

// TestPcapWriterRefusesBadRecord: a record whose lengths disagree is an
// error, as pcapgo made it.
func TestPcapWriterRefusesBadRecord(t *testing.T) {
	ri := recInfo{capLen: 10, origLen: 5}
	if ri.check(10) == nil {
		t.Fatal("captured length above the length accepted")
	}
	if (recInfo{capLen: 10, origLen: 10}).check(9) == nil {
		t.Fatal("data length mismatch accepted")
	}
}
