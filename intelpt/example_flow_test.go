package intelpt_test

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/iotap/iotap/intelpt"
)

// flowExample returns a small 64-bit program and a trace of one run of it.
func flowExample() (*intelpt.Image, []byte) {
	code := []byte{
		0x31, 0xc0, // 1000: xor eax, eax
		0x7e, 0x01, // 1002: jle 1005
		0x90,                         // 1004: nop
		0xe8, 0x01, 0x00, 0x00, 0x00, // 1005: call 100b
		0xf4, // 100a: hlt
		0xc3, // 100b: ret
	}
	im := intelpt.NewImage()
	if _, err := im.Add(code, 0x1000, intelpt.ASID{CR3: intelpt.AnyASID, VMCS: intelpt.AnyASID}, "code"); err != nil {
		panic(err)
	}
	var e intelpt.Encoder
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
	e.Encode(intelpt.Packet{Kind: intelpt.KindModeExec, Flags: intelpt.FlagCSL})
	e.Encode(intelpt.Packet{Kind: intelpt.KindFUP, IPC: intelpt.IPCSext48, Payload: 0x1000})
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
	// jle taken, ret compressed (returns to the call's next instruction)
	e.Encode(intelpt.Packet{Kind: intelpt.KindTNT8, Bits: 2, Payload: 0b11})
	// tracing stops asynchronously at the hlt
	e.Encode(intelpt.Packet{Kind: intelpt.KindFUP, IPC: intelpt.IPCUpdate16, Payload: 0x100a})
	e.Encode(intelpt.Packet{Kind: intelpt.KindTIPPGD, IPC: intelpt.IPCSuppressed})
	return im, e.Bytes()
}

// Walk the executed instructions and events of a trace.
func ExampleInsnDecoder() {
	im, trace := flowExample()
	d := intelpt.NewInsnDecoder(trace, intelpt.FlowConfig{Image: im})
	status, err := d.SyncForward()
	for err == nil {
		for status&intelpt.StatusEventPending != 0 && err == nil {
			var ev intelpt.Event
			if status, err = d.Event(&ev); err == nil && !ev.StatusUpdate {
				fmt.Println("event", ev.Type)
			}
		}
		if err != nil || status&intelpt.StatusEOS != 0 {
			break
		}
		var in intelpt.Insn
		status, err = d.Next(&in)
		if in.Size != 0 {
			fmt.Printf("%#x %d %v\n", in.IP, in.Size, in.Class)
		}
	}
	var fe *intelpt.FlowError
	if errors.As(err, &fe) {
		fmt.Println("error:", fe)
	} else if err != nil && err != io.EOF {
		fmt.Println(err)
	}
	// Output:
	// 0x1000 2 other
	// 0x1002 2 cond_jump
	// 0x1005 5 call
	// 0x100b 1 return
	// event async-disabled
}

// Walk the same trace block by block.
func ExampleBlockDecoder() {
	im, trace := flowExample()
	d := intelpt.NewBlockDecoder(trace, intelpt.FlowConfig{Image: im})
	status, err := d.SyncForward()
	for err == nil {
		for status&intelpt.StatusEventPending != 0 && err == nil {
			var ev intelpt.Event
			if status, err = d.Event(&ev); err == nil && !ev.StatusUpdate {
				fmt.Printf("event %v at %#x\n", ev.Type, ev.At)
			}
		}
		if err != nil || status&intelpt.StatusEOS != 0 {
			break
		}
		var b intelpt.Block
		status, err = d.Next(&b)
		if b.NInsn != 0 {
			fmt.Printf("block %#x-%#x, %d instructions, ends with %v\n", b.IP, b.EndIP, b.NInsn, b.Class)
		}
	}
	// Output:
	// block 0x1000-0x1002, 2 instructions, ends with cond_jump
	// block 0x1005-0x100b, 2 instructions, ends with return
	// event async-disabled at 0x100a
}

// List the flow like libipt's ptxed --no-inst.
func ExampleFlowListing() {
	im, trace := flowExample()
	cfg := intelpt.FlowConfig{Image: im}
	if _, err := intelpt.FlowListing(os.Stdout, trace, cfg, intelpt.FlowOptions{EventIP: true}); err != nil {
		panic(err)
	}
	// Output:
	// 0000000000001000
	// 0000000000001002
	// 0000000000001005
	// 000000000000100b
	// [disabled, at: 000000000000100a]
}
