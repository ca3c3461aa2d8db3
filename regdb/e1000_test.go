package regdb

import (
	"testing"
)

func loadE1000(t testing.TB) (*DB, *Domain) {
	t.Helper()
	db, err := Builtin("e1000")
	if err != nil {
		t.Fatal(err)
	}
	d, ok := db.Domain("E1000")
	if !ok {
		t.Fatal("no E1000 domain")
	}
	return db, d
}

// TestE1000Offsets checks register offsets against the 8254x developer's
// manual (section 13.4, table 13-2) and Linux's e1000_hw.h.
func TestE1000Offsets(t *testing.T) {
	db, _ := loadE1000(t)
	want := map[uint64]string{
		0x0000: "CTRL", 0x0008: "STATUS", 0x0010: "EECD", 0x0014: "EERD", 0x0018: "CTRL_EXT",
		0x001c: "FLA", 0x0020: "MDIC", 0x0028: "FCAL", 0x002c: "FCAH", 0x0030: "FCT", 0x0038: "VET",
		0x00c0: "ICR", 0x00c4: "ITR", 0x00c8: "ICS", 0x00d0: "IMS", 0x00d8: "IMC",
		0x0100: "RCTL", 0x0170: "FCTTV", 0x0178: "TXCW", 0x0180: "RXCW", 0x0400: "TCTL", 0x0410: "TIPG",
		0x0458: "AIT", 0x0e00: "LEDCTL", 0x1000: "PBA", 0x2160: "FCRTL", 0x2168: "FCRTH",
		0x2800: "RDBAL", 0x2804: "RDBAH", 0x2808: "RDLEN", 0x2810: "RDH", 0x2818: "RDT", 0x2820: "RDTR",
		0x2828: "RXDCTL", 0x282c: "RADV", 0x2c00: "RSRPD",
		0x3800: "TDBAL", 0x3804: "TDBAH", 0x3808: "TDLEN", 0x3810: "TDH", 0x3818: "TDT", 0x3820: "TIDV",
		0x3828: "TXDCTL", 0x382c: "TADV", 0x3830: "TSPMT",
		0x4000: "CRCERRS", 0x4010: "MPC", 0x4074: "GPRC", 0x4088: "GORCL", 0x408c: "GORCH", 0x40d0: "TPR",
		0x40d4: "TPT", 0x40fc: "TSCTFC",
		0x5000: "RXCSUM", 0x5200: "MTA[0]", 0x53fc: "MTA[127]", 0x5400: "RAL[0]", 0x5404: "RAH[0]",
		0x5478: "RAL[15]", 0x547c: "RAH[15]", 0x5600: "VFTA[0]", 0x57fc: "VFTA[127]",
		0x5800: "WUC", 0x5808: "WUFC", 0x5810: "WUS", 0x5820: "MANC", 0x5838: "IPAV", 0x5840: "IP4AT[0]",
		0x5880: "IP6AT[0]", 0x5900: "WUPL", 0x5a00: "WUPM[0]", 0x5f00: "FFLT[0]", 0x9000: "FFMT[0]", 0x9800: "FFVT[0]",
	}
	for off, name := range want {
		m, ok := db.Lookup("E1000", off, 32)
		if !ok {
			t.Errorf("%#x: no register, want %s", off, name)
			continue
		}
		if m.Name() != name || !m.Exact() {
			t.Errorf("%#x: %s (exact %v), want %s", off, m.Name(), m.Exact(), name)
		}
	}
	for _, off := range []uint64{0x0004, 0x5480, 0x4024, 0x20000} {
		if m, ok := db.Lookup("E1000", off, 32); ok {
			t.Errorf("%#x: found %s, want nothing (reserved)", off, m.Name())
		}
	}
}

// TestE1000Decode checks bit positions against the manual's register
// tables: each case sets known bits and expects their names.
func TestE1000Decode(t *testing.T) {
	db, _ := loadE1000(t)
	tests := []struct {
		off   uint64
		value uint64
		want  string
	}{
		// IMC: writing all ones masks every interrupt (the driver does it in reset)
		{0xd8, 0xffffffff, "IMC = 0xffffffff {TXDW, TXQE, LSC, RXSEQ, RXDMT0, RXO, RXT0, MDAC, RXCFG, GPI_EN0, GPI_EN1, GPI_EN2, GPI_EN3, TXD_LOW, SRPD, unk=0xfffe0120}"},
		// CTRL: FD bit 0, LRST 3, ASDE 5, SLU 6, ILOS 7, SPEED 9:8, FRCSPD 11, FRCDPX 12, RST 26, VME 30, PHY_RST 31
		{0x0, 0x00000001 | 0x8 | 0x20 | 0x40 | 0x80 | 0x200 | 0x800 | 0x1000, "CTRL = 0x00001ae9 {FD, LRST, ASDE, SLU, ILOS, SPEED=1000, FRCSPD, FRCDPX}"},
		{0x0, 0x04000000 | 0x40000000 | 0x80000000, "CTRL = 0xc4000000 {SPEED=10, RST, VME, PHY_RST}"},
		{0x0, 0x100, "CTRL = 0x00000100 {SPEED=100}"},
		// STATUS: FD 0, LU 1, FUNC 3:2, TXOFF 4, TBIMODE 5, SPEED 7:6, ASDV 9:8, PCI66 11, BUS64 12, PCIX_MODE 13
		{0x8, 0x3 | 0x4 | 0x10 | 0x20 | 0x80 | 0x100 | 0x800 | 0x1000 | 0x2000, "STATUS = 0x000039b7 {FD, LU, FUNC=1, TXOFF, TBIMODE, SPEED=1000, ASDV=100, PCI66, BUS64, PCIX_MODE}"},
		// EECD: SK 0, CS 1, DI 2, DO 3, EE_REQ 6, EE_GNT 7, EE_PRES 8
		{0x10, 0x1cf, "EECD = 0x000001cf {SK, CS, DI, DO, EE_REQ, EE_GNT, EE_PRES}"},
		// EERD (82540): START 0, DONE 4, ADDR 15:8, DATA 31:16
		{0x14, 0x12340311, "EERD = 0x12340311 {START, DONE, ADDR=0x3, DATA=0x1234}"},
		// MDIC: DATA 15:0, REGADD 20:16, PHYADD 25:21, OP 27:26 (01 write, 10 read), R 28, E 30
		{0x20, 0x18227949, "MDIC = 0x18227949 {DATA=0x7949, REGADD=2, PHYADD=1, OP=READ, R}"},
		{0x20, 0x04210140, "MDIC = 0x04210140 {DATA=0x140, REGADD=1, PHYADD=1, OP=WRITE}"},
		// RCTL: EN 1, UPE 3, MPE 4, BAM 15, BSIZE 17:16, SECRC 26
		{0x100, 0x04008002 | 0x18, "RCTL = 0x0400801a {EN, UPE, MPE, LBM=NONE, RDMTS=HALF, MO=47_36, BAM, BSIZE=2048, SECRC}"},
		// TCTL: EN 1, PSP 3, CT 11:4 = 0x0f, COLD 21:12 = 0x40 (the driver's full-duplex defaults)
		{0x400, 0x000400fa, "TCTL = 0x000400fa {EN, PSP, CT=15, COLD=64}"},
		// TIPG 82540 copper default: IPGT 8, IPGR1 8, IPGR2 6
		{0x410, 0x00602008, "TIPG = 0x00602008 {IPGT=8, IPGR1=8, IPGR2=6}"},
		// RAH: AV bit 31, ASEL 17:16
		{0x5404, 0x80005634, "RAH[0] = 0x80005634 {RAH=0x5634, ASEL=DEST, AV}"},
		// LEDCTL: modes at 3:0, 11:8, 19:16, 27:24; blink bits 7, 15, 23, 31
		{0xe00, 0x07068302, "LEDCTL = 0x07068302 {LED0_MODE=LINK_UP, LED1_MODE=FILTER_ACTIVITY, LED1_BLINK, LED2_MODE=LINK_100, LED3_MODE=LINK_1000}"},
		// FCRTL/FCRTH thresholds are in bytes, bits 15:3
		{0x2160, 0x80004000, "FCRTL = 0x80004000 {RTL=16384, XONE}"},
		// PBA: RXA 15:0 and TXA 31:16 in KB (82540 default 48/16)
		{0x1000, 0x00100030, "PBA = 0x00100030 {RXA=48, TXA=16}"},
		// TXDCTL: PTHRESH 5:0, HTHRESH 13:8, WTHRESH 21:16, GRAN 24
		{0x3828, 0x01010000, "TXDCTL = 0x01010000 {WTHRESH=1, GRAN}"},
		{0x4000, 7, "CRCERRS = 0x00000007 (7)"},
		{0x2818, 255, "RDT = 0x000000ff (255)"},
	}
	for _, tt := range tests {
		m, ok := db.Lookup("E1000", tt.off, 32)
		if !ok {
			t.Errorf("%#x: no register", tt.off)
			continue
		}
		if got := m.Format(tt.value); got != tt.want {
			t.Errorf("%#x %#x:\n got %s\nwant %s", tt.off, tt.value, got, tt.want)
		}
	}
	m, _ := db.Lookup("E1000", 0xd8, 32)
	if m.Register.Access != WriteOnly {
		t.Errorf("IMC access %v, want w", m.Register.Access)
	}
}

// TestE1000Consistent checks the shipped database itself: registers are
// 32-bit, aligned, inside the 128 KiB BAR and do not overlap.
func TestE1000Consistent(t *testing.T) {
	db, d := loadE1000(t)
	ix := d.index
	if len(ix.big) != 0 {
		t.Errorf("%d unexpanded arrays", len(ix.big))
	}
	seen := map[uint64]string{}
	for _, s := range ix.slots {
		lf := &ix.leaves[s.leaf]
		m := Match{Domain: d, Register: lf.reg, Offset: s.lo, db: db, leaf: lf, n: s.n}
		name := m.Name()
		if lf.reg.Width != 32 || s.lo%4 != 0 || s.lo+4 > d.Size {
			t.Errorf("%s at %#x: width %d", name, s.lo, lf.reg.Width)
		}
		if prev, dup := seen[s.lo]; dup {
			t.Errorf("%s and %s both at %#x", prev, name, s.lo)
		}
		seen[s.lo] = name
	}
	if id := (PCIID{0x8086, 0x100e}); true {
		if dom, ok := db.ForPCI(id, 0); !ok || dom.Name != "E1000" {
			t.Errorf("ForPCI(%v) = %v, %v", id, dom, ok)
		}
		bdb, bd, ok := BuiltinForPCI(id, 0)
		if !ok || bd.Name != "E1000" || bdb == nil {
			t.Errorf("BuiltinForPCI(%v) failed", id)
		}
		if _, _, ok := BuiltinForPCI(id, 1); ok {
			t.Errorf("BuiltinForPCI(%v, BAR1) found a database; BAR1 is I/O", id)
		}
	}
}
