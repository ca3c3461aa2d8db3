package intelpt

// prefetch2 asks the CPU to load the two block cache entries
// (prefetch_amd64.s); it does not fault on any address.
//
//go:noescape
func prefetch2(a, b *blockEntry)
