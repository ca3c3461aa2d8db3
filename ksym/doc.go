// Package ksym names kernel code addresses ("e1000_reset_hw+0x1c
// [e1000]") from the text of /proc/kallsyms and /proc/modules, as saved
// in a capture bundle (mmiotrace.WriteBundle).
//
// ParseKallsyms and ParseModules are pure parsers over an io.Reader: a
// malformed line is an error naming its line number. When the reader of
// /proc/kallsyms was not allowed to see addresses (kernel.kptr_restrict,
// or a reader without CAP_SYSLOG) the kernel prints every address as
// zero: the parsers then return the symbols with ErrHidden, so a caller
// can say why names are missing and go on.
//
// A Table keeps the text symbols (types t, T, w, W) sorted by address;
// Table.Lookup finds the symbol at or below an address by binary search.
// An address resolves to a symbol only below the next symbol's address
// and, for a module's symbol, inside the module's range from
// /proc/modules (when known), the way the kernel's own %pS printing
// bounds a symbol by the next one.
package ksym
