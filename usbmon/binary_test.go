package usbmon

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

// A control submission as the kernel lays it out (mon_bin.c), little endian:
// GET_DESCRIPTOR(device) to device 2 on bus 1.
func kernelHeader64(bo binary.ByteOrder) []byte {
	b := make([]byte, 64)
	bo.PutUint64(b[0:], 0xffff8880041b0000)
	b[8], b[9], b[10], b[11] = 'S', 2, 0x80, 2
	bo.PutUint16(b[12:], 1)
	b[14], b[15] = 0, '<'
	bo.PutUint64(b[16:], 1750417432)
	bo.PutUint32(b[24:], 438355)
	bo.PutUint32(b[28:], uint32(0xffffff8d)) // -115
	bo.PutUint32(b[32:], 18)
	bo.PutUint32(b[36:], 0)
	copy(b[40:], []byte{0x80, 6, 0, 1, 0, 0, 18, 0})
	bo.PutUint32(b[48:], 0)
	bo.PutUint32(b[52:], 0)
	bo.PutUint32(b[56:], 0x200)
	bo.PutUint32(b[60:], 0)
	return b
}

func TestDecodeHeaderBothOrders(t *testing.T) {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		var ev Event
		if err := DecodeHeader(kernelHeader64(bo), 64, bo, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.ID != 0xffff8880041b0000 || ev.Type != Submission || ev.Transfer != Control || !ev.In ||
			ev.Endpoint != 0 || ev.Device != 2 || ev.Bus != 1 || !ev.HasSetup() || ev.DataFlag != '<' ||
			ev.Sec != 1750417432 || ev.Usec != 438355 || ev.Status != -115 || ev.Length != 18 ||
			ev.Setup != [8]byte{0x80, 6, 0, 1, 0, 0, 18, 0} || ev.XferFlags != 0x200 {
			t.Fatalf("%v: bad decode %+v", bo, ev)
		}
		// Encoding gives the same bytes back.
		if got := AppendPacket(nil, &ev, 64, bo, nil); !bytes.Equal(got, kernelHeader64(bo)) {
			t.Fatalf("%v: re-encoded\n%x\nwant\n%x", bo, got, kernelHeader64(bo))
		}
	}
}

func TestISODescriptors(t *testing.T) {
	ev := Event{ID: 7, Type: Callback, Transfer: Isochronous, In: true, Endpoint: 3, Device: 4, Bus: 2,
		Status: 0, SetupFlag: SetupNone, Interval: 1, StartFrame: 100, ErrorCount: 1, NumDesc: 3,
		ISO: []ISODesc{{0, 0, 188}, {-18, 192, 0}, {0, 384, 12}}, Length: 200, DataFlag: DataPresent,
		Data: []byte{1, 2, 3}, Fields: HasWallClock | HasBus | HasExtended}
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		b := AppendPacket(nil, &ev, 64, bo, nil)
		if len(b) != 64+3*16+3 {
			t.Fatalf("record is %d bytes", len(b))
		}
		var got Event
		if err := DecodePacket(b, 64, bo, &got, nil); err != nil {
			t.Fatal(err)
		}
		if got.NDesc != 3 || len(got.ISO) != 3 || got.ISO[1] != ev.ISO[1] || got.ErrorCount != 1 || got.NumDesc != 3 ||
			!bytes.Equal(got.Data, ev.Data) || got.CapLen != 51 || got.StartFrame != 100 {
			t.Fatalf("%v: got %+v", bo, got)
		}
		// A 48-byte header cannot hold the descriptors: counted.
		var loss Loss
		b = AppendPacket(nil, &ev, 48, bo, &loss)
		if len(b) != 48+3 || loss.Count(LossISO) != 1 || loss.Count(LossExtended) != 1 {
			t.Fatalf("48-byte record %d bytes, loss %v", len(b), loss)
		}
	}
}

func TestDecodeShort(t *testing.T) {
	b := kernelHeader64(binary.LittleEndian)
	for n := 0; n < 64; n++ {
		var ev Event
		err := DecodePacket(b[:n], 64, binary.LittleEndian, &ev, nil)
		if !errors.Is(err, ErrTruncated) {
			t.Fatalf("%d bytes: %v", n, err)
		}
	}
	// ndesc promising more descriptors than there are bytes.
	binary.LittleEndian.PutUint32(b[60:], 4)
	b[9] = 0
	var ev Event
	if err := DecodePacket(b, 64, binary.LittleEndian, &ev, nil); !errors.Is(err, ErrTruncated) {
		t.Fatalf("short ISO: %v", err)
	}
	binary.LittleEndian.PutUint32(b[60:], 100000)
	if err := DecodePacket(b, 64, binary.LittleEndian, &ev, nil); !errors.Is(err, ErrFormat) {
		t.Fatalf("huge ndesc: %v", err)
	}
}

// pcapFile builds a pcap file in byte order bo by hand (as a big-endian
// host's libpcap writes it).
func pcapFile(bo binary.ByteOrder, lt uint32, recs ...[]byte) []byte {
	var b []byte
	h := make([]byte, 24)
	bo.PutUint32(h[0:], 0xa1b2c3d4)
	bo.PutUint16(h[4:], 2)
	bo.PutUint16(h[6:], 4)
	bo.PutUint32(h[16:], 65535)
	bo.PutUint32(h[20:], lt)
	b = append(b, h...)
	for i, r := range recs {
		rh := make([]byte, 16)
		bo.PutUint32(rh[0:], uint32(1000+i))
		bo.PutUint32(rh[8:], uint32(len(r)))
		bo.PutUint32(rh[12:], uint32(len(r)))
		b = append(b, rh...)
		b = append(b, r...)
	}
	return b
}

func TestPcapBigEndian(t *testing.T) {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		for _, lt := range []uint32{189, 220} {
			hl := 64
			if lt == 189 {
				hl = 48
			}
			rec := kernelHeader64(bo)[:hl]
			file := pcapFile(bo, lt, rec, rec)
			r, f, err := NewReader(bytes.NewReader(file))
			if err != nil || f != FormatPcap {
				t.Fatal(f, err)
			}
			var ev Event
			n := 0
			for r.ReadInto(&ev) == nil {
				n++
				if ev.ID != 0xffff8880041b0000 || ev.Bus != 1 || ev.Status != -115 || ev.Setup[1] != 6 {
					t.Fatalf("%v lt %d: %+v", bo, lt, ev)
				}
			}
			if n != 2 {
				t.Fatalf("%v lt %d: %d events", bo, lt, n)
			}
		}
	}
}

func TestPcapCorrupt(t *testing.T) {
	rec := kernelHeader64(binary.LittleEndian)
	good := pcapFile(binary.LittleEndian, 220, rec, rec, rec)
	// Every truncation reads the complete records, then an error with an
	// offset (or a clean EOF exactly at a record boundary).
	for n := 0; n < len(good); n++ {
		r, _, err := NewReader(bytes.NewReader(good[:n]))
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("%d bytes: error without position: %v", n, err)
			}
			continue
		}
		var ev Event
		k := 0
		for {
			err = r.ReadInto(&ev)
			if err != nil {
				break
			}
			k++
		}
		boundary := (n-24)%(16+64) == 0
		if boundary && err != io.EOF || !boundary && !errors.Is(err, ErrTruncated) {
			t.Fatalf("%d bytes: after %d events: %v", n, k, err)
		}
		if !boundary {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Offset != int64(24+k*80) {
				t.Fatalf("%d bytes: error %v, want offset %d", n, err, 24+k*80)
			}
		}
	}
	// A record too short for its header.
	bad := pcapFile(binary.LittleEndian, 220, rec, rec[:20])
	r, _, _ := NewReader(bytes.NewReader(bad))
	var ev Event
	r.ReadInto(&ev)
	err := r.ReadInto(&ev)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Offset != 24+80 || !strings.Contains(err.Error(), "record 2") {
		t.Fatalf("short record: %v", err)
	}
	// Wrong link type.
	if _, _, err := NewReader(bytes.NewReader(pcapFile(binary.LittleEndian, 1, rec))); err == nil || !strings.Contains(err.Error(), "link type 1") {
		t.Fatalf("ethernet: %v", err)
	}
}

func TestPcapngCorrupt(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewPcapngWriter(&buf, 220)
	if err != nil {
		t.Fatal(err)
	}
	var ev Event
	DecodePacket(kernelHeader64(binary.LittleEndian), 64, binary.LittleEndian, &ev, nil)
	for i := 0; i < 3; i++ {
		w.Write(&ev)
	}
	w.Flush()
	good := buf.Bytes()
	for n := 0; n < len(good); n++ {
		r, _, err := NewReader(bytes.NewReader(good[:n]))
		if err != nil {
			continue
		}
		k := 0
		for err == nil {
			if err = r.ReadInto(&ev); err == nil {
				k++
			}
		}
		if err == io.EOF {
			continue
		}
		var fe *FormatError
		if !errors.Is(err, ErrTruncated) || !errors.As(err, &fe) || fe.Offset < 0 {
			t.Fatalf("%d bytes: after %d events: %v (want a truncation with its offset)", n, k, err)
		}
	}
}

func TestPcapZeroAlloc(t *testing.T) {
	rec := kernelHeader64(binary.LittleEndian)
	recs := make([][]byte, 3000)
	for i := range recs {
		recs[i] = rec
	}
	for _, f := range []Format{FormatPcap, FormatPcapng} {
		var file []byte
		if f == FormatPcap {
			file = pcapFile(binary.LittleEndian, 220, recs...)
		} else {
			var buf bytes.Buffer
			w, _ := NewPcapngWriter(&buf, 220)
			var ev Event
			DecodePacket(rec, 64, binary.LittleEndian, &ev, nil)
			for range recs {
				w.Write(&ev)
			}
			w.Flush()
			file = buf.Bytes()
		}
		r, _, err := NewReader(bytes.NewReader(file))
		if err != nil {
			t.Fatal(err)
		}
		var ev Event
		r.ReadInto(&ev)
		allocs := testing.AllocsPerRun(1000, func() {
			if err := r.ReadInto(&ev); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%v: %v allocations per event", f, allocs)
		}
	}
}
