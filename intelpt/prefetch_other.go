//go:build !amd64

package intelpt

// prefetch2 is a hint only; without it the lookups just wait for memory.
func prefetch2(a, b *blockEntry) {}
