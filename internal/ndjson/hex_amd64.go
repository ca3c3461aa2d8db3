package ndjson

// hexBlocks writes the hex of n 16-byte blocks of src to dst with SSE2
// (hex_amd64.s), which every amd64 CPU has; n > 0.
//
//go:noescape
func hexBlocks(dst, src *byte, n int)

const haveHexBlocks = true
