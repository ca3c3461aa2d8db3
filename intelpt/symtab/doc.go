// Package symtab names code addresses: the functions of an ELF file from
// .symtab and .dynsym (FUNC and IFUNC symbols) plus name@plt for PLT
// entries (.plt, .plt.sec, .plt.got, IRELATIVE slots after their IFUNC),
// sorted once for lookups by binary search that do not allocate. LinkAddr
// undoes the load bias of a PIE or shared library through its PT_LOAD
// segments, from the mapping's start address and file offset (what perf's
// MMAP2 records and /proc/PID/maps give). Finder finds the mapped files by
// path, under a sysroot, or by build-id in perf's ~/.debug cache layout.
//
// C++ and Rust names are demangled on request with
// github.com/ianlancetaylor/demangle (the demangler of the Go toolchain's
// pprof). Tests compare lookups with nm, PLT names with objdump, and
// demangled names with c++filt.
package symtab
