//go:build !unix

package detect

func isLoop(error) bool { return false }
