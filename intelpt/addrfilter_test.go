package intelpt

import "testing"

// TestAddrFilterSetCfg: ADDRn_CFG is the nibble n of IA32_RTIT_CTL's
// filter configuration (SDM vol. 3 "IA32_RTIT_CTL MSR": ADDR0_CFG bits
// 35:32, ADDR1_CFG 39:36, ...; here shifted down to bit 0); values over
// 4 bits and filters past the fourth are refused; setting one again
// replaces it.
func TestAddrFilterSetCfg(t *testing.T) {
	var f AddrFilter
	if err := f.SetCfg(0, 1); err != nil {
		t.Fatal(err)
	}
	if err := f.SetCfg(2, 2); err != nil {
		t.Fatal(err)
	}
	if f.Cfg != 0x201 || f.cfg(0) != addrCfgFilter || f.cfg(2) != addrCfgStop {
		t.Errorf("Cfg %#x", f.Cfg)
	}
	f.SetCfg(2, 0)
	if f.Cfg != 0x1 {
		t.Errorf("cleared: Cfg %#x", f.Cfg)
	}
	if err := f.SetCfg(1, 16); err == nil || err.Error() != "value too big: 16" {
		t.Errorf("16: %v", err)
	}
	if err := f.SetCfg(4, 1); err == nil {
		t.Errorf("filter 4 accepted")
	}
}
