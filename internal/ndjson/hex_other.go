//go:build !amd64

package ndjson

func hexBlocks(dst, src *byte, n int) { panic("unreachable") }

const haveHexBlocks = false
