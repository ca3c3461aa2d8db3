package mmiotrace

import (
	"fmt"
	"io"
	"sort"
)

// FuncStats counts the register accesses of one function (the code
// that ran them, named from their PCs).
type FuncStats struct {
	Func          string // "e1000_reset_hw [e1000]"; "?" for PCs that do not resolve
	Reads, Writes int64
	PCs           int       // distinct program counters
	Regs          []FuncReg // the registers it touched, most accessed first
	pcs           map[uint64]bool
}

// FuncReg is one register a function accessed.
type FuncReg struct {
	Key           RegKey
	Reads, Writes int64
}

// ByFunction groups st.Code by function: name maps a PC to
// "func+0xoff [module]" or "" when unresolved; the offset is dropped so
// that all PCs of a function count together. Accesses without a PC are
// left out (see Stats.ZeroPC). Sorted by accesses, most first.
func ByFunction(st *Stats, name func(pc uint64) string) []FuncStats {
	byName := map[string]*FuncStats{}
	regs := map[string]map[RegKey]*FuncReg{}
	for k, c := range st.Code {
		if k.PC == 0 {
			continue
		}
		n := funcOnly(name(k.PC))
		f := byName[n]
		if f == nil {
			f = &FuncStats{Func: n, pcs: map[uint64]bool{}}
			byName[n] = f
			regs[n] = map[RegKey]*FuncReg{}
		}
		f.Reads += c.Reads
		f.Writes += c.Writes
		f.pcs[k.PC] = true
		r := regs[n][k.Reg]
		if r == nil {
			r = &FuncReg{Key: k.Reg}
			regs[n][k.Reg] = r
		}
		r.Reads += c.Reads
		r.Writes += c.Writes
	}
	out := make([]FuncStats, 0, len(byName))
	for n, f := range byName {
		f.PCs = len(f.pcs)
		f.pcs = nil
		for _, r := range regs[n] {
			f.Regs = append(f.Regs, *r)
		}
		sort.Slice(f.Regs, func(i, j int) bool {
			a, b := f.Regs[i], f.Regs[j]
			if a.Reads+a.Writes != b.Reads+b.Writes {
				return a.Reads+a.Writes > b.Reads+b.Writes
			}
			return a.Key.String() < b.Key.String()
		})
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Reads+a.Writes != b.Reads+b.Writes {
			return a.Reads+a.Writes > b.Reads+b.Writes
		}
		return a.Func < b.Func
	})
	return out
}

// funcOnly turns "f+0x1c [m]" into "f [m]", and "" into "?".
func funcOnly(s string) string {
	if s == "" {
		return "?"
	}
	plus, sp := -1, len(s)
	for i := 0; i < len(s); i++ {
		if s[i] == '+' && plus < 0 {
			plus = i
		}
		if s[i] == ' ' {
			sp = i
			break
		}
	}
	if plus < 0 || plus > sp {
		return s
	}
	return s[:plus] + s[sp:]
}

// WriteFuncStats writes the "hot code" section of mmio stats: the top
// functions with the registers each touched (at most regs per function),
// named by regName (may return "").
func WriteFuncStats(w io.Writer, funcs []FuncStats, top, regs int, regName func(RegKey) string) {
	fmt.Fprintf(w, "\nhot code (accesses by function):\n")
	for i, f := range funcs {
		if i >= top {
			fmt.Fprintf(w, "  … %d more functions\n", len(funcs)-top)
			break
		}
		fmt.Fprintf(w, "  %-40s %8d accesses (%d R, %d W) from %d PCs\n", f.Func, f.Reads+f.Writes, f.Reads, f.Writes, f.PCs)
		for j, r := range f.Regs {
			if j >= regs {
				fmt.Fprintf(w, "      … %d more registers\n", len(f.Regs)-regs)
				break
			}
			n := regName(r.Key)
			if n != "" {
				n = " " + n
			}
			fmt.Fprintf(w, "      %s%s: %d R, %d W\n", r.Key, n, r.Reads, r.Writes)
		}
	}
}
