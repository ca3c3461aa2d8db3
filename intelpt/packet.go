package intelpt

import "fmt"

// Kind is the type of a PT packet.
type Kind uint8

// Packet kinds.
const (
	KindInvalid Kind = iota // a packet the decoder could not make sense of (see Config.Errata)
	KindPad
	KindPSB
	KindPSBEnd
	KindTNT8
	KindTNT64
	KindTIP
	KindTIPPGE
	KindTIPPGD
	KindFUP
	KindPIP
	KindModeExec
	KindModeTSX
	KindTraceStop
	KindCBR
	KindTSC
	KindMTC
	KindTMA
	KindCYC
	KindVMCS
	KindOVF
	KindMNT
	KindPTW
	KindExStop
	KindMWait
	KindPwrE
	KindPwrX
	KindBBP
	KindBIP
	KindBEP
	KindCFE
	KindEVD
	KindTrig
	numKinds
)

var kindNames = [numKinds]string{
	KindInvalid: "<invalid>", KindPad: "pad", KindPSB: "psb", KindPSBEnd: "psbend",
	KindTNT8: "tnt.8", KindTNT64: "tnt.64", KindTIP: "tip", KindTIPPGE: "tip.pge",
	KindTIPPGD: "tip.pgd", KindFUP: "fup", KindPIP: "pip", KindModeExec: "mode.exec",
	KindModeTSX: "mode.tsx", KindTraceStop: "stop", KindCBR: "cbr", KindTSC: "tsc",
	KindMTC: "mtc", KindTMA: "tma", KindCYC: "cyc", KindVMCS: "vmcs", KindOVF: "ovf",
	KindMNT: "mnt", KindPTW: "ptw", KindExStop: "exstop", KindMWait: "mwait",
	KindPwrE: "pwre", KindPwrX: "pwrx", KindBBP: "bbp", KindBIP: "bip", KindBEP: "bep",
	KindCFE: "cfe", KindEVD: "evd", KindTrig: "trig",
}

// String returns the packet name as ptdump prints it ("tip.pge", "tnt.8", ...).
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Kinds returns every packet kind, in declaration order.
func Kinds() []Kind {
	ks := make([]Kind, numKinds)
	for i := range ks {
		ks[i] = Kind(i)
	}
	return ks
}

// IPC is the IP compression of TIP, TIP.PGE, TIP.PGD and FUP packets.
type IPC uint8

// IP compressions. The payload size is 0, 2, 4, 6, 6 and 8 bytes.
const (
	IPCSuppressed IPC = 0 // no payload: the IP is suppressed
	IPCUpdate16   IPC = 1 // replaces the low 16 bits of the last IP
	IPCUpdate32   IPC = 2 // replaces the low 32 bits of the last IP
	IPCSext48     IPC = 3 // 48 bits, sign-extended
	IPCUpdate48   IPC = 4 // replaces the low 48 bits of the last IP
	IPCFull       IPC = 6 // the full 64-bit IP
)

// ipcSize is the payload size of each compression; -1 marks reserved codes.
var ipcSize = [8]int8{0, 2, 4, 6, 6, -1, 8, -1}

// Flags are single-bit packet fields.
type Flags uint16

// Packet flags; which ones apply depends on the Kind.
const (
	FlagNR         Flags = 1 << iota // PIP: non-root (VMX guest)
	FlagCSL                          // MODE.Exec: CS.L (64-bit code)
	FlagCSD                          // MODE.Exec: CS.D
	FlagIF                           // MODE.Exec: RFLAGS.IF
	FlagInTX                         // MODE.TSX: in transaction
	FlagAbort                        // MODE.TSX: transaction aborted
	FlagIP                           // EXSTOP, PTW, CFE, BEP, TRIG: a FUP/IP follows or is bound
	FlagHW                           // PWRE: hardware-initiated
	FlagInterrupt                    // PWRX: wake reason interrupt
	FlagStore                        // PWRX: wake reason store to monitored address
	FlagAutonomous                   // PWRX: wake reason autonomous (hardware)
	FlagICNTValid                    // TRIG: instruction count present
	FlagMult                         // TRIG: multiple triggers
	FlagBlock4                       // BBP: BIP payloads are 4 bytes (SZ=1), else 8
)

// Packet is one decoded PT packet. It is a plain value: the Decoder fills a
// caller-owned Packet and keeps no reference to it.
//
// Field use by Kind:
//
//	TNT8, TNT64    Payload: the branch bits, oldest in bit Bits-1; Bits: count
//	TIP*, FUP      IPC and Payload: the IP bytes as stored (not yet combined with the last IP)
//	PIP            Payload: CR3 (bits 63:5); FlagNR
//	ModeExec       FlagCSL, FlagCSD, FlagIF
//	ModeTSX        FlagInTX, FlagAbort
//	CBR            Payload: core:bus ratio
//	TSC            Payload: 56-bit TSC
//	MTC            Payload: 8-bit CTC
//	TMA            Payload: CTC (16 bits); Aux: fast counter (9 bits)
//	CYC            Payload: cycle count
//	VMCS           Payload: VMCS base address (bits 51:12)
//	MNT            Payload: 64-bit maintenance payload
//	PTW            Payload; Bits: payload class (0: 4 bytes, 1: 8 bytes); FlagIP
//	ExStop         FlagIP
//	MWait          Payload: hints (EAX); Aux: extensions (ECX)
//	PwrE           Type: C-state; Sub: sub-state; FlagHW
//	PwrX           Type: last core C-state; Sub: deepest core C-state; FlagInterrupt, FlagStore, FlagAutonomous
//	BBP            Type: block type; FlagBlock4
//	BIP            Type: block item ID; Payload; Bits: payload size (4 or 8)
//	BEP            FlagIP
//	CFE            Type: event type; Aux: vector; FlagIP
//	EVD            Type: event data type; Payload
//	Trig           Type: trigger bits (TRBV); Aux: instruction count; FlagIP, FlagICNTValid, FlagMult
type Packet struct {
	Kind    Kind
	Size    uint8 // encoded size in bytes
	IPC     IPC
	Bits    uint8
	Type    uint8
	Sub     uint8
	Flags   Flags
	Aux     uint32
	Payload uint64
}

// Has reports whether all flags in f are set.
func (p *Packet) Has(f Flags) bool { return p.Flags&f == f }

// CFE event types (CFE.Type).
var cfeTypeNames = map[uint8]string{
	1: "intr", 2: "iret", 3: "smi", 4: "rsm", 5: "sipi", 6: "init", 7: "vmentry",
	8: "vmexit", 9: "vmexit_intr", 10: "shutdown", 12: "uintr", 13: "uiret",
	14: "swintr", 15: "syscall",
}

// CFETypeName returns the name of a CFE event type ("intr", "smi", ...), or
// "unknown".
func CFETypeName(t uint8) string {
	if n, ok := cfeTypeNames[t]; ok {
		return n
	}
	return "unknown"
}

// EVDTypeName returns the name of an EVD type ("cr2", "vmxq", "vmxr") or "unknown".
func EVDTypeName(t uint8) string {
	switch t {
	case 0:
		return "cr2"
	case 1:
		return "vmxq"
	case 2:
		return "vmxr"
	}
	return "unknown"
}
