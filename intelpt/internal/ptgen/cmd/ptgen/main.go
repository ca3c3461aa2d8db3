// Command ptgen writes a random x86-64 program, the Intel PT trace of one
// run of it and the instructions that ran, for tests and benchmarks of PT
// flow decoders. It is a development tool, not part of the iotap binary.
//
//	go run ./intelpt/internal/ptgen/cmd/ptgen -seed 1 -insns 30000000 -o /tmp/run
//
// writes /tmp/run.bin (the code, to load at the printed address), /tmp/run.pt
// (the trace), with -kernel /tmp/run.kernel.bin and, with -ips, /tmp/run.ips (every executed instruction's IP
// as a little-endian 64-bit word). It prints the load address and the
// statistics of the run.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"

	"github.com/iotap/iotap/intelpt/internal/ptgen"
	"github.com/iotap/iotap/internal/outfile"
)

func main() {
	seed := flag.Uint64("seed", 1, "random seed (the same seed gives the same files)")
	insns := flag.Int("insns", 1_000_000, "instructions to execute")
	code := flag.Int("code", 0, "code size in bytes (0: 256 KiB)")
	psb := flag.Int("psb", 0, "bytes between PSB+ (0: 4096)")
	timing := flag.Bool("timing", false, "write TSC/TMA/CBR in PSB+ and MTC")
	cyc := flag.Bool("cyc", false, "cycle-accurate mode (CYC packets)")
	kernel := flag.Bool("kernel", false, "trace kernel code too (written to PREFIX.kernel.bin)")
	fupPTW := flag.Bool("fup-on-ptw", false, "a FUP follows each PTW packet")
	ovf := flag.Int("overflows", 0, "internal buffer overflows per million instructions")
	depth := flag.Int("max-depth", 0, "bound the call depth to `N` calls, as a real program's stack (0: the random code's depth grows with the run)")
	ips := flag.Bool("ips", false, "also write PREFIX.ips (the instructions a decoder can see)")
	out := flag.String("o", "", "output prefix (required)")
	flag.Parse()
	if *out == "" || flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	p, err := ptgen.Generate(ptgen.Config{Seed: *seed, Insns: *insns, CodeSize: *code, PSBPeriod: *psb,
		Timing: *timing, CYC: *cyc, Kernel: *kernel, FUPOnPTW: *fupPTW, Overflows: *ovf, NoIPs: !*ips, MaxDepth: *depth})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	write := func(name string, b []byte) {
		f, err := outfile.Create(name, outfile.Options{})
		if err == nil {
			_, err = f.Write(b)
			if err == nil {
				err = f.Commit()
			}
			f.Abort()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	write(*out+".bin", p.Code)
	write(*out+".pt", p.Trace)
	if p.Kernel != nil {
		write(*out+".kernel.bin", p.Kernel)
		fmt.Printf("kernel-base %#x\n", p.KernelBase)
	}
	if *ips {
		b := make([]byte, 0, 8*len(p.IPs))
		for _, ip := range p.IPs {
			b = binary.LittleEndian.AppendUint64(b, ip)
		}
		write(*out+".ips", b)
	}
	lost := 0
	for _, g := range p.Gaps {
		lost += g.Lost
	}
	fmt.Printf("base %#x\ninsns %d\nlost %d\ntrace %d bytes\ncode %d bytes\n", p.Base, p.Count, lost, len(p.Trace), len(p.Code))
	fmt.Print(p.Stats.String())
}
