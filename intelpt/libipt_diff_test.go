package intelpt

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// buildPTPkt compiles bench/ptpkt (a driver for libipt's pt_pkt_next) and
// returns its path and the libipt version it was built against. It skips
// the test when gcc or libipt-dev are missing.
func buildPTPkt(t testing.TB) (string, int) {
	t.Helper()
	if testing.Short() {
		t.Skip("differential test against libipt skipped in -short mode")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found: the libipt differential test needs gcc and libipt-dev")
	}
	if _, err := os.Stat("/usr/include/intel-pt.h"); err != nil {
		t.Skip("libipt-dev not installed (apt-get install libipt-dev)")
	}
	bin := filepath.Join(t.TempDir(), "ptpkt")
	out, err := exec.Command("gcc", "-O2", "-o", bin, "../bench/ptpkt/ptpkt.c", "-lipt").CombinedOutput()
	if err != nil {
		t.Fatalf("building ptpkt: %v\n%s", err, out)
	}
	v, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	ver, err := strconv.Atoi(strings.TrimSpace(string(v)))
	if err != nil {
		t.Fatal(err)
	}
	return bin, ver
}

// libiptKnows reports whether libipt of version ver decodes packets of kind k.
func libiptKnows(k Kind, ver int) bool {
	switch k {
	case KindBBP, KindBIP, KindBEP, KindInvalid:
		return false
	case KindCFE, KindEVD:
		return ver >= 0x201
	case KindTrig:
		return ver >= 0x202
	}
	return true
}

// canonical formats p like ptpkt's list command.
func canonical(p *Packet, ver int) string {
	b := func(f Flags) int {
		if p.Flags&f != 0 {
			return 1
		}
		return 0
	}
	switch p.Kind {
	case KindTNT8, KindTNT64:
		return fmt.Sprintf("%v %d %x", p.Kind, p.Bits, p.Payload)
	case KindTIP, KindTIPPGE, KindTIPPGD, KindFUP:
		return fmt.Sprintf("%v %d %x", p.Kind, p.IPC, p.Payload)
	case KindModeExec:
		return fmt.Sprintf("mode.exec %d %d", b(FlagCSL), b(FlagCSD))
	case KindModeTSX:
		return fmt.Sprintf("mode.tsx %d %d", b(FlagInTX), b(FlagAbort))
	case KindPIP:
		return fmt.Sprintf("pip %x %d", p.Payload, b(FlagNR))
	case KindVMCS, KindCBR, KindTSC, KindMTC, KindCYC, KindMNT:
		return fmt.Sprintf("%v %x", p.Kind, p.Payload)
	case KindTMA:
		return fmt.Sprintf("tma %x %x", p.Payload, p.Aux)
	case KindExStop:
		return fmt.Sprintf("exstop %d", b(FlagIP))
	case KindMWait:
		return fmt.Sprintf("mwait %x %x", p.Payload, p.Aux)
	case KindPwrE:
		return fmt.Sprintf("pwre %d %d %d", p.Type, p.Sub, b(FlagHW))
	case KindPwrX:
		return fmt.Sprintf("pwrx %d %d %d %d %d", p.Type, p.Sub, b(FlagInterrupt), b(FlagStore), b(FlagAutonomous))
	case KindPTW:
		return fmt.Sprintf("ptw %d %x %d", p.Bits, p.Payload, b(FlagIP))
	case KindCFE:
		return fmt.Sprintf("cfe %d %x %d", p.Type, p.Aux, b(FlagIP))
	case KindEVD:
		return fmt.Sprintf("evd %d %x", p.Type, p.Payload)
	case KindTrig:
		return fmt.Sprintf("trig %x %d %d %d %x", p.Type, b(FlagIP), b(FlagICNTValid), b(FlagMult), p.Aux)
	}
	return p.Kind.String()
}

// ourList decodes buf like ptpkt list. It stops before the first packet
// libipt does not know and reports whether it did.
func ourList(buf []byte, ver int) (lines []string, cut bool) {
	d := NewDecoder(buf, Config{})
	var p Packet
	for {
		off := d.Offset()
		err := d.Next(&p)
		if err == nil {
			if !libiptKnows(p.Kind, ver) {
				return lines, true
			}
			lines = append(lines, canonical(&p, ver))
			continue
		}
		msg := "reached end of trace stream"
		switch {
		case errors.Is(err, ErrBadOpcode):
			msg = "unknown opcode"
		case errors.Is(err, ErrBadPacket):
			msg = "unknown packet"
		case err != io.EOF && !errors.Is(err, ErrTruncated):
			msg = err.Error()
		}
		return append(lines, fmt.Sprintf("end %x %s", off, msg)), false
	}
}

func libiptList(t *testing.T, bin string, buf []byte) []string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "in.pt")
	if err := os.WriteFile(f, buf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "list", f).Output()
	if err != nil {
		t.Fatalf("ptpkt list: %v", err)
	}
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

func compareLists(t *testing.T, name string, ours, theirs []string, cut bool) {
	t.Helper()
	n := len(ours)
	if !cut && len(theirs) != n {
		t.Errorf("%s: %d lines from us, %d from libipt", name, n, len(theirs))
	}
	for i := 0; i < n && i < len(theirs); i++ {
		if ours[i] != theirs[i] {
			t.Fatalf("%s: line %d: ours %q, libipt %q", name, i, ours[i], theirs[i])
		}
	}
}

// TestDifferentialLibipt decodes random valid streams made by our Encoder
// and random bytes with both decoders and compares the packet lists.
func TestDifferentialLibipt(t *testing.T) {
	bin, ver := buildPTPkt(t)
	t.Logf("libipt version %d.%d", ver>>8, ver&0xff)
	r := rand.New(rand.NewPCG(7, 8))
	for round := 0; round < 20; round++ {
		var e Encoder
		n := 0
		for n < 2000 {
			p := randomPacket(r, false)
			if !libiptKnows(p.Kind, ver) {
				continue
			}
			if ver < 0x201 && p.Kind == KindModeExec {
				p.Flags &^= FlagIF
			}
			e.Encode(p)
			n++
		}
		if e.Err() != nil {
			t.Fatal(e.Err())
		}
		ours, cut := ourList(e.Bytes(), ver)
		if cut || len(ours) != n+1 {
			t.Fatalf("valid stream: %d lines (cut %v), want %d", len(ours), cut, n+1)
		}
		compareLists(t, fmt.Sprintf("valid stream %d", round), ours, libiptList(t, bin, e.Bytes()), false)
	}
	// Random bytes, biased towards opcodes: both decoders must agree on every
	// packet up to the first error and on the error and its offset.
	agreeErr := 0
	for round := 0; round < 300; round++ {
		buf := make([]byte, 64+r.IntN(256))
		for i := range buf {
			switch r.IntN(4) {
			case 0:
				buf[i] = 0x02
			default:
				buf[i] = byte(r.Uint32())
			}
		}
		ours, cut := ourList(buf, ver)
		compareLists(t, fmt.Sprintf("random bytes %d (%x)", round, buf), ours, libiptList(t, bin, buf), cut)
		if !cut {
			agreeErr++
		}
	}
	t.Logf("random byte streams compared to the end: %d of 300", agreeErr)
}
