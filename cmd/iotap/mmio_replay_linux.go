//go:build linux

package main

import "github.com/iotap/iotap/mmiotrace"

func mmioOpenBARTarget(dev mmiotrace.PCIAddr, force bool) (mmioBARTarget, error) {
	return mmiotrace.OpenBARTarget(mmiotrace.Sysfs{}, dev, force)
}
