package x86

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The oracle: GNU objdump. Every instruction objdump prints for a range of
// code is decoded by us at the same address; our length must equal the
// number of bytes objdump shows, and our class must agree with objdump's
// mnemonic. objdump runs with -M intel64 in 64-bit mode so that it, like
// Intel hardware and libipt, ignores 66 on near branches.

// odLine is one instruction line of objdump's output.
type odLine struct {
	addr  uint64
	n     int    // raw bytes shown
	text  string // mnemonic and operands, prefixes included
	bad   bool   // "(bad)" or a prefix objdump printed on its own
	class Class  // class implied by the mnemonic
}

// prefixWords are the words objdump prints before a mnemonic for prefixes.
var prefixWords = map[string]bool{
	"cs": true, "ds": true, "es": true, "ss": true, "fs": true, "gs": true,
	"data16": true, "data32": true, "addr16": true, "addr32": true,
	"lock": true, "rep": true, "repz": true, "repnz": true, "repe": true, "repne": true,
	"bnd": true, "notrack": true, "xacquire": true, "xrelease": true,
	"{vex}": true, "{vex3}": true, "{evex}": true, "{disp32}": true, "{disp8}": true,
}

func isPrefixWord(w string) bool {
	return prefixWords[w] || w == "rex" || strings.HasPrefix(w, "rex.")
}

// classOf maps objdump's text (AT&T syntax) to a Class.
func classOf(text string) (Class, bool) {
	f := strings.Fields(text)
	for len(f) > 0 && isPrefixWord(f[0]) {
		f = f[1:]
	}
	if len(f) == 0 {
		return Other, false // a prefix on its own
	}
	mn, _, _ := strings.Cut(f[0], ",") // loop,pt: branch hints
	ops := ""
	if len(f) > 1 {
		ops = f[1]
	}
	indirect := strings.HasPrefix(ops, "*")
	switch mn {
	case "jmp", "jmpw", "jmpl", "jmpq":
		if indirect {
			return JumpIndirect, true
		}
		return JumpDirect, true
	case "ljmp", "ljmpw", "ljmpl", "ljmpq":
		return JumpFar, true
	case "call", "callw", "calll", "callq":
		if indirect {
			return CallIndirect, true
		}
		return CallDirect, true
	case "lcall", "lcallw", "lcalll", "lcallq":
		return CallFar, true
	case "jrcxz", "jecxz", "jcxz", "loop", "loope", "loopne", "loopw", "loopl", "loopq",
		"loopew", "loopel", "loopeq", "loopnew", "loopnel", "loopneq":
		return CondJump, true
	case "ret", "retw", "retl", "retq":
		return Return, true
	case "lret", "lretw", "lretl", "lretq":
		return ReturnFar, true
	case "int", "int3", "into", "int1", "icebp":
		return Int, true
	case "iret", "iretw", "iretl", "iretq":
		return Iret, true
	case "syscall":
		return Syscall, true
	case "sysret", "sysretl", "sysretq":
		return Sysret, true
	case "sysenter":
		return Sysenter, true
	case "sysexit", "sysexitl", "sysexitq":
		return Sysexit, true
	case "vmlaunch":
		return Vmlaunch, true
	case "vmresume":
		return Vmresume, true
	case "vmcall":
		return Vmcall, true
	case "vmptrld":
		return Vmptrld, true
	case "ptwrite", "ptwritel", "ptwriteq":
		return Ptwrite, true
	case "uiret":
		return Uiret, true
	case "mov", "movl", "movq":
		if strings.HasSuffix(ops, ",%cr3") {
			return MovCR3, true
		}
	}
	if len(mn) >= 2 && mn[0] == 'j' { // jcc: everything j* but jmp
		return CondJump, true
	}
	return Other, true
}

// parseObjdump reads objdump -d output and calls fn for every instruction line.
func parseObjdump(r io.Reader, fn func(odLine)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		t1 := bytes.IndexByte(line, '\t')
		if t1 < 2 || line[t1-1] != ':' {
			continue // headers, labels, "\t..." for skipped zeros
		}
		addr, err := strconv.ParseUint(string(bytes.TrimSpace(line[:t1-1])), 16, 64)
		if err != nil {
			continue
		}
		rest := line[t1+1:]
		t2 := bytes.IndexByte(rest, '\t')
		var raw, text []byte
		if t2 < 0 {
			raw = rest
		} else {
			raw, text = rest[:t2], rest[t2+1:]
		}
		n := len(bytes.Fields(raw))
		if n == 0 {
			continue
		}
		l := odLine{addr: addr, n: n, text: string(bytes.TrimSpace(text))}
		var ok bool
		l.class, ok = classOf(l.text)
		l.bad = !ok || t2 < 0 || strings.Contains(l.text, "(bad)") || strings.HasPrefix(l.text, ".byte")
		fn(l)
	}
	return sc.Err()
}

// oracleResult counts one comparison.
type oracleResult struct {
	compared, skipped  int
	lenMiss, classMiss []string
	quirks             map[string]int // known differences between objdump and Intel hardware, by reason
}

func (r *oracleResult) add(o *oracleResult) {
	r.compared += o.compared
	r.skipped += o.skipped
	r.lenMiss = append(r.lenMiss, o.lenMiss...)
	r.classMiss = append(r.classMiss, o.classMiss...)
	if r.quirks == nil {
		r.quirks = map[string]int{}
	}
	for k, v := range o.quirks {
		r.quirks[k] += v
	}
}

// classQuirk names the known cases where objdump's mnemonic and the class
// Intel hardware (and libipt) give an instruction differ; "" otherwise.
func classQuirk(b []byte, mode Mode, ours, theirs Class) string {
	hasPrefix := func(p byte) bool {
		for _, c := range b {
			if c == p {
				return true
			}
			if prefixKind[c] == pNone {
				break
			}
		}
		return false
	}
	switch {
	case theirs == Ptwrite && ours == Other && hasPrefix(0x66):
		// The SDM: PTWRITE with a 66 prefix raises #UD; objdump prints
		// "data16 ptwrite".
		return "66-prefixed ptwrite (#UD)"
	case theirs == MovCR3 && ours == Other && hasPrefix(0xF0):
		// LOCK MOV CR raises #UD on Intel (AMD reads it as CR8+);
		// objdump prints "lock mov ...,%cr3" in 64-bit mode.
		return "lock mov cr3 (#UD)"
	}
	return ""
}

// compareRange runs objdump with args (which select code at base..) and
// compares every line against Decode on code.
func compareRange(code []byte, base, compareEnd uint64, mode Mode, args []string) (*oracleResult, error) {
	cmd := exec.Command("objdump", args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	res := &oracleResult{quirks: map[string]int{}}
	var in Inst
	perr := parseObjdump(out, func(l odLine) {
		if l.bad {
			res.skipped++
			return
		}
		off := l.addr - base
		if off >= uint64(len(code)) || l.addr >= compareEnd {
			res.skipped++ // beyond the chunk: the next chunk compares it
			return
		}
		res.compared++
		end := off + 15
		if end > uint64(len(code)) {
			end = uint64(len(code))
		}
		b := code[off:end]
		err := Decode(code[off:], mode, &in) // all the rest: Decode takes its fast path when it can
		// LenClass (its own fast paths) and LenClass64 where it decodes
		// must say what Decode says, so that they too match objdump on
		// every instruction.
		if n, c, lerr := LenClass(code, int(off), mode); n != int(in.Len) || c != in.Class || lerr != err {
			res.lenMiss = append(res.lenMiss, fmt.Sprintf("%#x: % x: LenClass %d %v %v, Decode %d %v %v",
				l.addr, b, n, c, lerr, in.Len, in.Class, err))
		}
		if n, c := LenClass64(word(code[off:])); mode == Mode64 && n != 0 && (n != int(in.Len) || c != in.Class || err != nil) {
			res.lenMiss = append(res.lenMiss, fmt.Sprintf("%#x: % x: LenClass64 %d %v, Decode %d %v %v",
				l.addr, b, n, c, in.Len, in.Class, err))
		}
		if err == nil && in.Map == Map0 && in.Opcode == 0x9B && in.Encoding == Legacy && l.n > int(in.Len) {
			if f := strings.Fields(l.text); f[len(f)-1] == "fwait" {
				// objdump prints fwait, then prefixes, then fwait
				// ("9b 66 9b") as one prefixed "data16 fwait" over the
				// first fwait and the prefixes; the CPU sees fwait,
				// then the prefixed fwait.
				res.compared--
				res.quirks["fwait followed by prefixes"]++
				return
			}
			// objdump prints fwait (9B) and the x87 instruction after it
			// as one "finit", "fstcw", ...; the CPU executes two
			// instructions. Compare the second one.
			n := in.Len
			err = Decode(code[off+uint64(n):], mode, &in)
			in.Len += n
		}
		if err != nil || int(in.Len) != l.n {
			n := l.n
			if n > len(b) {
				n = len(b)
			}
			res.lenMiss = append(res.lenMiss, fmt.Sprintf("%#x: % x: objdump %d bytes %q, we %d (%v)",
				l.addr, b[:max(n, int(in.Len))], l.n, l.text, in.Len, err))
			return
		}
		if in.Class != l.class {
			if q := classQuirk(b[:in.Len], mode, in.Class, l.class); q != "" {
				res.quirks[q]++
				return
			}
			res.classMiss = append(res.classMiss, fmt.Sprintf("%#x: % x: objdump %q, we %v",
				l.addr, b[:in.Len], l.text, in.Class))
		}
	})
	if werr := cmd.Wait(); werr != nil && perr == nil {
		perr = fmt.Errorf("objdump %v: %v: %s", args, werr, stderr.String())
	}
	return res, perr
}

// chunk is a piece of work: one objdump run over [start, stop).
type chunk struct {
	code        []byte // the whole section
	base        uint64 // section address
	start, stop uint64
}

// compareChunks runs the chunks in parallel (one objdump per CPU).
func compareChunks(t *testing.T, name string, mode Mode, chunks []chunk, extra func(c chunk) []string) *oracleResult {
	t.Helper()
	total := &oracleResult{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.NumCPU())
	var firstErr error
	for _, c := range chunks {
		wg.Add(1)
		sem <- struct{}{}
		go func(c chunk) {
			defer wg.Done()
			defer func() { <-sem }()
			// objdump runs 16 bytes past the chunk (it cuts an
			// instruction at --stop-address); lines from the chunk's
			// end on are left to the next chunk.
			ext := c
			ext.stop += 16
			res, err := compareRange(c.code, c.base, c.stop, mode, extra(ext))
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			if res != nil {
				total.add(res)
			}
		}(c)
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("%s: %v", name, firstErr)
	}
	report(t, name, total)
	return total
}

func report(t *testing.T, name string, r *oracleResult) {
	t.Helper()
	t.Logf("%s: %d instructions compared with objdump, %d length mismatches, %d class mismatches, %d lines skipped ((bad), lone prefix, chunk overlap), known objdump/Intel differences: %v",
		name, r.compared, len(r.lenMiss), len(r.classMiss), r.skipped, r.quirks)
	if r.compared == 0 {
		t.Errorf("%s: nothing compared", name)
	}
	for i, m := range r.lenMiss {
		if i == 40 {
			t.Errorf("%s: ... %d more length mismatches", name, len(r.lenMiss)-i)
			break
		}
		t.Errorf("%s: length: %s", name, m)
	}
	for i, m := range r.classMiss {
		if i == 40 {
			t.Errorf("%s: ... %d more class mismatches", name, len(r.classMiss)-i)
			break
		}
		t.Errorf("%s: class: %s", name, m)
	}
}

func needObjdump(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("objdump"); err != nil {
		t.Skip("objdump not installed (apt binutils)")
	}
}

// elfChunks splits the executable sections of an ELF file into chunks of
// about size bytes.
func elfChunks(t *testing.T, path string, size uint64) ([]chunk, elf.Class) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cs []chunk
	for _, s := range f.Sections {
		if s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_EXECINSTR == 0 || s.Size == 0 {
			continue
		}
		data, err := s.Data()
		if err != nil {
			t.Fatalf("%s: %s: %v", path, s.Name, err)
		}
		for off := uint64(0); off < s.Size; off += size {
			stop := off + size
			if stop > s.Size {
				stop = s.Size
			}
			cs = append(cs, chunk{code: data, base: s.Addr, start: s.Addr + off, stop: s.Addr + stop})
		}
	}
	return cs, f.Class
}

// compareELF compares every instruction of the executable sections of an
// ELF file.
func compareELF(t *testing.T, path string) *oracleResult {
	t.Helper()
	needObjdump(t)
	cs, class := elfChunks(t, path, 2<<20)
	mode, opts := Mode64, []string{"-Mintel64"}
	if class == elf.ELFCLASS32 {
		mode, opts = Mode32, nil
	}
	return compareChunks(t, path, mode, cs, func(c chunk) []string {
		return append([]string{"-d", "--insn-width=15", "-z",
			fmt.Sprintf("--start-address=%#x", c.start), fmt.Sprintf("--stop-address=%#x", c.stop), path},
			opts...)
	})
}

// compareRaw writes code to a file and compares objdump -b binary on it.
func compareRaw(t *testing.T, name string, code []byte, mode Mode) *oracleResult {
	t.Helper()
	needObjdump(t)
	path := t.TempDir() + "/code.bin"
	if err := os.WriteFile(path, code, 0o600); err != nil {
		t.Fatal(err)
	}
	machine := map[Mode][]string{
		Mode16: {"-mi8086"},
		Mode32: {"-mi386"},
		Mode64: {"-mi386:x86-64", "-Mintel64"},
	}[mode]
	var cs []chunk
	const size = 1 << 20
	for off := 0; off < len(code); off += size {
		cs = append(cs, chunk{code: code, start: uint64(off), stop: uint64(min(off+size, len(code)))})
	}
	return compareChunks(t, name, mode, cs, func(c chunk) []string {
		return append([]string{"-D", "-b", "binary", "--insn-width=15", "-z",
			fmt.Sprintf("--start-address=%#x", c.start), fmt.Sprintf("--stop-address=%#x", c.stop), path},
			machine...)
	})
}
