package usbmon

import (
	"bytes"
	"fmt"
	"strconv"
)

// debugfsFromMountinfo returns the first debugfs mount point listed in a
// /proc/self/mountinfo text, or "".
func debugfsFromMountinfo(b []byte) string {
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		f := bytes.Fields(line)
		// id parent maj:min root mountpoint opts [optional...] - fstype src opts
		for i := 6; i < len(f)-1; i++ {
			if string(f[i]) == "-" {
				if string(f[i+1]) == "debugfs" && len(f) > 4 {
					return unescapeMount(string(f[4]))
				}
				break
			}
		}
	}
	return ""
}

// unescapeMount undoes the octal escapes (\040 for space) of mountinfo.
func unescapeMount(s string) string {
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				out = append(out, byte(v))
				i += 3
				continue
			}
		}
		out = append(out, s[i])
	}
	return string(out)
}

// parseTextLost reads the text_lost counter of a usbmon/Ns file
// ("nreaders 1 events 10 text_lost 0").
func parseTextLost(b []byte) (uint64, error) {
	f := bytes.Fields(b)
	for i := 0; i+1 < len(f); i++ {
		if string(f[i]) == "text_lost" {
			return strconv.ParseUint(string(f[i+1]), 10, 64)
		}
	}
	return 0, fmt.Errorf("usbmon: no text_lost in %q", b)
}

// textPeriod is the period of the text API's timestamps: the kernel keeps
// the monotonic seconds modulo 4096, in microseconds.
const textPeriod = 4096 * 1000000

// textWallClock turns a text stamp (µs of CLOCK_MONOTONIC modulo 4096 s)
// into wall-clock microseconds, given both clocks (ns) read just after the
// event: the event is taken to be less than 4096 s old.
func textWallClock(stamp uint32, monoNow, realNow int64) int64 {
	nowUs := monoNow / 1000
	age := (nowUs%textPeriod - int64(stamp)) % textPeriod
	if age < 0 {
		age += textPeriod
	}
	return realNow/1000 - age
}
