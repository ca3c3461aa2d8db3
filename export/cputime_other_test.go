//go:build !linux

package export

func cpuSeconds() float64 { return 0 }
